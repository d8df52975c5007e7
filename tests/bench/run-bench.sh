#!/bin/sh
# run-bench.sh - `make bench`: hot-path cost of stepscope against the floor,
# against empty hooks, and against uftrace, measured side by side in one
# hyperfine run so machine noise hits every variant alike.  Prints ratios.
#
# Variants (all the same -O2 -finstrument-functions binary, hooks in a .so
# through the PLT):
#   empty     hooks that do nothing               (floor for "outside window")
#   floor     hooks: rdtsc + one 16-byte store     (floor for recording)
#   idle      stepscope, outside any window         (schedule never active)
#   record    stepscope, recording every call
#   uftrace   `uftrace record` on the binary without a runtime (if installed)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
W=${SS_BENCH_DIR:-$(mktemp -d /tmp/stepscope-bench.XXXXXX)}
N=${SS_BENCH_CALLS:-5000000}
RUNS=${SS_BENCH_RUNS:-10}
CC=${CC:-gcc}
[ "$CC" = cc ] && CC=gcc
command -v hyperfine >/dev/null || SS_DEPS_EXTRA="hyperfine uftrace" sh "$top/scripts/deps.sh"
command -v hyperfine >/dev/null || { echo "bench: hyperfine is missing" >&2; exit 2; }
SRC=$top/tests/bench
mkdir -p "$W"

echo "bench: building variants in $W"
$CC -O2 -fPIC -shared -o "$W/libempty.so" "$SRC/hooks-empty.c"
$CC -O2 -fPIC -shared -o "$W/libfloor.so" "$SRC/hooks-floor.c"
# one program, linked against a neutral soname; the variant is picked with
# LD_PRELOAD so the code and its layout are identical in every run
$CC -O2 -g -finstrument-functions -o "$W/b-calls" "$SRC/b-calls.c"
# the same loop without instrumentation: the zero point
$CC -O2 -g -o "$W/b-plain" "$SRC/b-calls.c"
cat > "$W/idle.yaml" <<YAML
step:
  function: step_marker
window: {start_step: 1000000000, end_step: 1000000001}
YAML
cat > "$W/all.yaml" <<YAML
max_trace_mb: 0
YAML

run_cmd() { # name, env, extra
	echo "$2 $W/b-calls $N"
}
uft=""
if command -v uftrace >/dev/null; then
	uft="uftrace record -d $W/uftrace.data $W/b-calls $N"
fi
export STEPSCOPE_DIR="$W/trace"
rm -rf "$W/trace" && mkdir -p "$W/trace"
hyperfine -N --warmup 1 --runs "$RUNS" --export-csv "$W/calls.csv" \
	--prepare "sh -c 'rm -rf $W/trace $W/uftrace.data; mkdir -p $W/trace'" \
	-n none "$W/b-plain $N" \
	-n empty "env LD_PRELOAD=$W/libempty.so $W/b-calls $N" \
	-n floor "env LD_PRELOAD=$W/libfloor.so $W/b-calls $N" \
	-n idle "env STEPSCOPE_CONFIG=$W/idle.yaml LD_PRELOAD=$B/lib/libstepscope.so $W/b-calls $N" \
	-n record "env STEPSCOPE_CONFIG=$W/all.yaml LD_PRELOAD=$B/lib/libstepscope.so $W/b-calls $N" \
	${uft:+-n uftrace "$uft"} >"$W/hyperfine.log" 2>&1 || { cat "$W/hyperfine.log"; exit 1; }

# CSV: command,mean,stddev,median,user,system,min,max  (seconds)
awk -F, -v n="$N" '
NR > 1 { med[$1] = $4 }
END {

	ns = 1e9 / n;    # per leaf call (one enter+exit pair of leaf)
	e = (med["empty"] - med["none"]) * ns
	f = (med["floor"] - med["none"]) * ns
	i = (med["idle"] - med["none"]) * ns
	r = (med["record"] - med["none"]) * ns
	printf "\nper enter+exit pair, above the uninstrumented loop (median of runs):\n"
	printf "  %-28s %8.2f ns\n", "empty hooks", e
	printf "  %-28s %8.2f ns\n", "floor (rdtsc + 16B store)", f
	printf "  %-28s %8.2f ns\n", "stepscope outside window", i
	printf "  %-28s %8.2f ns\n", "stepscope recording", r
	if ("uftrace" in med) {
		u = (med["uftrace"] - med["none"]) * ns
		printf "  %-28s %8.2f ns\n", "uftrace record", u
	}
	printf "\nratios (targets from issue 5):\n"
	printf "  recording / floor          %6.2fx   (target <= 1.20x)\n", r / f
	printf "  outside window - empty     %6.2f ns  (target <= 1 ns)\n", i - e
	if ("uftrace" in med)
		printf "  uftrace / recording        %6.2fx   (target >= 4x)\n", u / r
}' "$W/calls.csv"
# trace size: one more recording run, its file measured (2 events per call)
rm -rf "$W/trace" && mkdir -p "$W/trace"
STEPSCOPE_CONFIG="$W/all.yaml" LD_PRELOAD="$B/lib/libstepscope.so" "$W/b-calls" "$N" >/dev/null
sz=$(du -cb "$W"/trace/*.sstrace | tail -n 1 | cut -f1)
echo "  trace bytes per event      $(awk -v s="$sz" -v n="$N" 'BEGIN{printf "%.1f", s / (n * 2)}')     (target <= 16, chunk headers and maps included)"

# end to end: the example training program, empty hooks vs recording
if [ -x "$top/examples/mlp/train" ] || make -s -C "$top/examples/mlp" PROFILE=1 >/dev/null 2>&1; then
	T=$top/examples/mlp/train
	hyperfine -N --warmup 1 --runs "${SS_BENCH_E2E_RUNS:-5}" --export-csv "$W/e2e.csv" \
		--prepare "sh -c 'rm -rf $W/trace; mkdir -p $W/trace'" \
		-n empty "env STEPSCOPE_DISABLE=1 $T --steps 200" \
		-n record "env STEPSCOPE_CONFIG=$W/all.yaml $T --steps 200" >"$W/hyperfine-e2e.log" 2>&1 ||
		{ cat "$W/hyperfine-e2e.log"; exit 1; }
	awk -F, 'NR > 1 { med[$1] = $4 } END {
		printf "\nend to end, examples/mlp --steps 200 (median):\n"
		printf "  runtime disabled %.3f s, recording %.3f s: %+.1f%% (target <= +3%%)\n",
			med["empty"], med["record"], (med["record"] / med["empty"] - 1) * 100 }' "$W/e2e.csv"
fi
[ -n "${SS_BENCH_KEEP:-}" ] || rm -rf "$W"

# ---------------------------------------------------------------- build time
# (stepscope-cc section) compiling examples/mlp: the same compiler and final
# flags run directly vs through the wrapper (its own cost: argument parsing,
# the inline check), and the plain -O2 build vs the wrapper (what a user
# sees, -g and the hooks included).
M=$top/examples/mlp
WCC=$B/bin/stepscope-cc
FLAGS="-O2 -std=gnu11 -Wall -Wextra -pthread"
DIRECT="$CC -g -DSTEPSCOPE_ENABLED=1 -I$B/include -finstrument-functions -fno-omit-frame-pointer"
case $CC in *clang*) ;; *) for d in /usr/include /usr/lib/gcc /usr/local/cuda/include $B/include/stepscope.h; do
	DIRECT="$DIRECT -finstrument-functions-exclude-file-list=$d"; done ;; esac
mkdir -p "$W/cc"
cc_all() { # compile command
	echo "sh -c 'cd $M && for f in train data model pool; do $1 $FLAGS -c -o $W/cc/\$f.o \$f.c || exit 1; done'"
}
hyperfine -N --warmup 2 --runs "${SS_BENCH_CC_RUNS:-10}" --export-csv "$W/cc.csv" \
	-n plain "$(cc_all "$CC -I$top/instrument")" \
	-n direct "$(cc_all "$DIRECT")" \
	-n wrapper "$(cc_all "$WCC $CC")" >"$W/hyperfine-cc.log" 2>&1 ||
	{ cat "$W/hyperfine-cc.log"; exit 1; }
awk -F, 'NR > 1 { med[$1] = $4 } END {
	printf "\nbuild time, examples/mlp (4 files, -O2, median):\n"
	printf "  plain %.3f s, same flags direct %.3f s, through stepscope-cc %.3f s\n",
		med["plain"], med["direct"], med["wrapper"]
	printf "  wrapper / same flags direct  %6.3fx   (target <= 1.05x)\n", med["wrapper"] / med["direct"]
	printf "  wrapper / plain build        %6.3fx   (-g and hooks included)\n", med["wrapper"] / med["plain"] }' "$W/cc.csv"

# ---------------------------------------------------------------- symbolize
# (symbolizer section) raw trace -> Chrome JSON: events/s, peak memory, and
# against `uftrace dump --chrome` on the same program recorded by uftrace.
# SS_BENCH_SYM_CALLS leaf calls (2 events each; default 50M = 100M events,
# 1.6 GB of raw trace); the JSON goes to /dev/null, the trace is removed.
SN=${SS_BENCH_SYM_CALLS:-50000000}
SU=${SS_BENCH_UFT_CALLS:-1000000}
S=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-symbench.XXXXXX")
$CC -O2 -g -finstrument-functions -o "$S/b-calls" "$SRC/b-calls.c"
printf 'max_trace_mb: 0\n' > "$S/all.yaml"
sym_run() { # calls -> prints "events cpu_s wall_s maxrss_kb"
	rm -rf "$S/rec"
	"$B/bin/stepscope" record -o "$S/rec" -c "$S/all.yaml" -- "$S/b-calls" "$1" >/dev/null 2>&1
	/usr/bin/time -f '%U %S %e %M' -o "$S/time" "$B/bin/stepscope" symbolize -o /dev/null "$S/rec" 2>"$S/err"
	ev=$(sed -n 's/.*(\([0-9]*\) events.*/\1/p' "$S/err")
	read -r u s e m < "$S/time"
	echo "$((ev * 2)) $(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}') $e $m"
	rm -rf "$S/rec"
}
echo
echo "symbolize: raw -> Chrome JSON (/dev/null), b-calls $SN calls"
set -- $(sym_run "$SN")
awk -v n="$1" -v c="$2" -v w="$3" -v m="$4" 'BEGIN {
	printf "  %d raw events: %.2f s CPU, %.2f s wall, max RSS %.1f MB\n", n, c, w, m / 1024
	printf "  throughput %.1f M events/s per CPU second, %.1f M events/s wall  (target >= 10)\n", n / c / 1e6, n / w / 1e6 }'
if command -v uftrace >/dev/null; then
	set -- $(sym_run "$SU")
	ours=$2
	(cd "$S" && uftrace record -d "$S/uft" ./b-calls "$SU" >/dev/null 2>&1)
	/usr/bin/time -f '%U %S %e' -o "$S/utime" uftrace dump --chrome -d "$S/uft" >/dev/null 2>&1
	read -r u s e < "$S/utime"
	awk -v n="$SU" -v o="$ours" -v u="$u" -v s="$s" 'BEGIN {
		printf "  b-calls %d calls: stepscope symbolize %.2f s CPU, uftrace dump --chrome %.2f s CPU: %.1fx  (target >= 5x)\n",
			n, o, u + s, (u + s) / o }'
fi
rm -rf "$S"

# ---------------------------------------------------------------- record.stack
# (stack capture section) cost per captured stack: b-stack recurses LEVELS
# frames deep and times N leaf calls itself, with record.stack off and on.
# LEVELS > depth keeps the stack in frame-pointer code; LEVELS 4 at depth 32
# reaches main and libc's start code, unwound by libunwind.
KN=${SS_BENCH_STACK_CALLS:-2000000}
K=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-stackbench.XXXXXX")
$CC -O2 -g -finstrument-functions -fno-omit-frame-pointer -o "$K/b-stack" "$SRC/b-stack.c"
stack_run() { # levels, extra settings -> best ns/call of 3 runs
	best=""
	for _ in 1 2 3; do
		rm -rf "$K/tr" && mkdir -p "$K/tr"
		v=$(STEPSCOPE_DIR="$K/tr" STEPSCOPE_SET="max_trace_mb=0$2" \
			LD_PRELOAD="$B/lib/libstepscope.so" "$K/b-stack" "$1" "$KN" 2>/dev/null |
			sed -n 's/ ns\/call//p')
		best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}
echo
echo "record.stack: cost per captured stack, b-stack $KN leaf calls (best of 3)"
for d in 8 32; do
	off=$(stack_run $((d + 8)) "")
	on=$(stack_run $((d + 8)) ",record.stack=true,record.stack_depth=$d")
	awk -v d="$d" -v a="$off" -v b="$on" 'BEGIN {
		printf "  depth %2d, frame pointers only: %7.1f ns/call off, %7.1f on: %7.1f ns per stack\n", d, a, b, b - a }'
done
off=$(stack_run 4 "")
on=$(stack_run 4 ",record.stack=true,record.stack_depth=32")
awk -v a="$off" -v b="$on" 'BEGIN {
	printf "  depth 32, through main into libc (libunwind): %7.1f ns/call off, %7.1f on: %7.1f ns per stack\n", a, b, b - a }'
rm -rf "$K"

# ---------------------------------------------------------------- stats: whole_run
# (whole-run stats section) per-call cost of counting every call outside
# the windows (stats: whole_run, the idle schedule above) against empty
# hooks, stepscope idle and recording, in one hyperfine run.
WN=${SS_BENCH_STATS_CALLS:-5000000}
V=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-statsbench.XXXXXX")
$CC -O2 -fPIC -shared -o "$V/libempty.so" "$SRC/hooks-empty.c"
$CC -O2 -g -finstrument-functions -o "$V/b-calls" "$SRC/b-calls.c"
$CC -O2 -g -o "$V/b-plain" "$SRC/b-calls.c"
printf 'step:\n  function: step_marker\nwindow: {start_step: 1000000000, end_step: 1000000001}\n' > "$V/idle.yaml"
{ cat "$V/idle.yaml"; printf 'stats: whole_run\n'; } > "$V/stats.yaml"
printf 'max_trace_mb: 0\n' > "$V/all.yaml"
hyperfine -N --warmup 1 --runs "$RUNS" --export-csv "$V/stats.csv" \
	--prepare "sh -c 'rm -rf $V/trace; mkdir -p $V/trace'" \
	-n none "$V/b-plain $WN" \
	-n empty "env LD_PRELOAD=$V/libempty.so $V/b-calls $WN" \
	-n idle "env STEPSCOPE_DIR=$V/trace STEPSCOPE_CONFIG=$V/idle.yaml LD_PRELOAD=$B/lib/libstepscope.so $V/b-calls $WN" \
	-n stats "env STEPSCOPE_DIR=$V/trace STEPSCOPE_CONFIG=$V/stats.yaml LD_PRELOAD=$B/lib/libstepscope.so $V/b-calls $WN" \
	-n record "env STEPSCOPE_DIR=$V/trace STEPSCOPE_CONFIG=$V/all.yaml LD_PRELOAD=$B/lib/libstepscope.so $V/b-calls $WN" \
	>"$V/hyperfine.log" 2>&1 || { cat "$V/hyperfine.log"; exit 1; }
awk -F, -v n="$WN" 'NR > 1 { med[$1] = $4 } END {
	ns = 1e9 / n
	e = (med["empty"] - med["none"]) * ns
	i = (med["idle"] - med["none"]) * ns
	s = (med["stats"] - med["none"]) * ns
	r = (med["record"] - med["none"]) * ns
	printf "\nstats: whole_run, outside windows, b-calls %d calls (per enter+exit pair, median):\n", n
	printf "  %-34s %8.2f ns\n", "empty hooks", e
	printf "  %-34s %8.2f ns\n", "stepscope outside window", i
	printf "  %-34s %8.2f ns\n", "stepscope stats: whole_run", s
	printf "  %-34s %8.2f ns\n", "stepscope recording", r
	printf "  stats / recording          %6.2fx   (target: clearly below 1)\n", s / r
	printf "  stats - empty hooks        %6.2f ns\n", s - e }' "$V/stats.csv"
rm -rf "$V"
