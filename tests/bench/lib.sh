# lib.sh - sourced by the bench scripts (run-bench.sh, fidelity.sh,
# idle.sh, ...): the smoke sizes, the compiler, the medians of rounds and
# the goal table.
#
# SS_BENCH_SMOKE=1: every size and round count that is not set already
# becomes the smallest that still runs each path once.  `make test` runs
# the benchmarks this way (tests/e2e/test-bench.c): it judges only that
# they build, run to the end and print their figures; the figures of a
# smoke run mean nothing.
#
# SS_BENCH_TABLE=FILE: each figure that has a goal is appended to FILE as
# one line "figure<TAB>measured<TAB>goal<TAB>yes|NO" (awk: the function
# goal_row of $SS_BENCH_ROW_AWK); run-bench.sh prints the file as the
# table that ends `make bench`.  Unset: nothing is appended.

if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_CALLS:=20000}" "${SS_BENCH_DEPTH:=100}" "${SS_BENCH_RUNS:=1}"
	: "${SS_BENCH_E2E_RUNS:=1}" "${SS_BENCH_E2E_STEPS:=4}" "${SS_BENCH_CC_RUNS:=1}"
	: "${SS_BENCH_SYM_CALLS:=20000}" "${SS_BENCH_UFT_CALLS:=20000}"
	: "${SS_BENCH_STACK_CALLS:=10000}" "${SS_BENCH_STATS_CALLS:=100000}"
	: "${SS_BENCH_FILTER_STEPS:=3}" "${SS_BENCH_AUTODIFF_STEPS:=2}"
	: "${SS_BENCH_FID_CALLS:=40000}" "${SS_BENCH_FID_RUNS:=1}" "${SS_BENCH_FID_OUTLIER_CALLS:=40000}"
	: "${SS_BENCH_IDLE_CALLS:=100000}" "${SS_BENCH_IDLE_RUNS:=1}" "${SS_BENCH_IDLE_REC_CALLS:=40000}"
	: "${SS_BENCH_FLOOR_CALLS:=40000}" "${SS_BENCH_FLOOR_RUNS:=1}" "${SS_BENCH_FLOOR_DOTS:=20000}"
	export SS_BENCH_CALLS SS_BENCH_DEPTH SS_BENCH_RUNS SS_BENCH_E2E_RUNS SS_BENCH_E2E_STEPS \
		SS_BENCH_CC_RUNS SS_BENCH_SYM_CALLS SS_BENCH_UFT_CALLS SS_BENCH_STACK_CALLS \
		SS_BENCH_STATS_CALLS SS_BENCH_FILTER_STEPS SS_BENCH_AUTODIFF_STEPS SS_BENCH_FID_CALLS \
		SS_BENCH_FID_RUNS SS_BENCH_FID_OUTLIER_CALLS SS_BENCH_IDLE_CALLS SS_BENCH_IDLE_RUNS \
		SS_BENCH_IDLE_REC_CALLS SS_BENCH_FLOOR_CALLS SS_BENCH_FLOOR_RUNS SS_BENCH_FLOOR_DOTS
fi

# The compiler the scripts build their own programs with: $CC, gcc when
# it is unset or make's default cc.
if [ -z "${CC:-}" ] || [ "$CC" = cc ]; then
	CC=gcc
fi

# The programs `make` builds for the benchmarks from the project's own
# object lists (Makefile, BENCH_TOOLS); a script never compiles the
# project's sources itself.
bench_tool() { # name -> its path, or a one-line error and exit 2
	if [ ! -x "$B/bench/$1" ]; then
		echo "bench: $B/bench/$1 is missing: run 'make bench' (or 'make bench-tools')" >&2
		exit 2
	fi
	echo "$B/bench/$1"
}

# mlp_build WORDS...: in examples/mlp, run the compile-and-link command
# WORDS with the example's sources and include flags as its Makefile has
# them (print-build) and -lm
mlp_build() {
	(cd "$top/examples/mlp" && "$@" $(make -s --no-print-directory print-build) -lm)
}

# run_medians FILE: FILE has "variant wall_s cpu_s" lines, one a run;
# prints "variant median_wall_s median_cpu_s" for each variant (9
# significant digits).
run_medians() {
	awk "$SS_BENCH_MED_AWK"'
	{ c = ++cnt[$1]; wall[$1, c] = $2; cpu[$1, c] = $3 }
	END {
		for (v in cnt) {
			for (i = 1; i <= cnt[v]; i++) { a[i] = wall[v, i]; b[i] = cpu[v, i] }
			printf "%s %.9g %.9g\n", v, med(a, cnt[v]), med(b, cnt[v])
		}
	}' "$1"
}

# hyperfine_round ROUND CSV PREPARE RUNS LIST: one round of the variants
# in LIST (hyperfine's "-n NAME COMMAND" list, one word a line, so that
# the commands keep their spaces), each run once with PREPARE before it,
# into CSV (hyperfine's log LOG beside it: CSV less .csv, -hyperfine.log;
# printed, and the script ends, when hyperfine fails).  Except in round 0
# (the warm-up) each run's "name wall_s cpu_s" is appended to RUNS.
hyperfine_round() {
	hr_log=${2%.csv}-hyperfine.log
	IFS='
'
	hyperfine -N --runs 1 --export-csv "$2" --prepare "$3" $5 >"$hr_log" 2>&1 ||
		{ cat "$hr_log"; exit 1; }
	IFS=' 	
'
	[ "$1" = 0 ] || awk -F, 'NR > 1 { print $1, $4, $5 + $6 }' "$2" >> "$4"
}

# goal_row(figure, value, goal, ok): one line of the goal table, when
# SS_BENCH_TABLE is set.  Paste "$SS_BENCH_ROW_AWK" before an awk program.
# dv(a, b): a / b, 0 when b is 0 (a smoke run's times can be equal).
SS_BENCH_ROW_AWK='
function goal_row(name, v, goal, ok,   f) {
	f = ENVIRON["SS_BENCH_TABLE"]
	if (f != "") { printf "%s\t%.2f\t%s\t%s\n", name, v, goal, ok ? "yes" : "NO" >> f; close(f) }
}
function dv(a, b) { return b == 0 ? 0 : a / b }
'

# med(a, k): the median of a[1..k], sorted in place.  Paste
# "$SS_BENCH_MED_AWK" before an awk program, as the row one.
SS_BENCH_MED_AWK='
function med(a, k,   i, j, x) {
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
'
