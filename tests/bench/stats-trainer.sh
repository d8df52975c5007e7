#!/bin/sh
# stats-trainer.sh - `make bench`, whole-run stats on a trainer (issue 36
# item 1): what `stats: whole_run` costs on an autodiff-style trainer with
# about 10^6 tiny instrumented calls a step over several threads
# (tests/bench/b-trainer.c), against the same build with empty hooks.
# Also runs alone:  sh tests/bench/stats-trainer.sh   (after `make all`)
#
# Variants, each with SS_BENCH_TRAINER_STEPS steps and with 0 steps (the
# start-up, left out of both sides: the time of the calls is the run minus
# its 0-step run), SS_BENCH_TRAINER_RUNS rounds of one run each, the order
# reversed every other round, medians:
#   plain     the same source without -finstrument-functions
#   empty     built with -finstrument-functions, hooks-empty.c preloaded
#   idle      the same build, libstepscope preloaded, a window that never
#             opens
#   stats     the same, plus `stats: whole_run`
#   cc-empty  the object stepscope-cc compiles, linked with hooks-empty.c
#             (no runtime): empty hooks linked into the program
#   cc-idle, cc-stats   the same object linked by stepscope-cc (its hooks
#             linked in), as a user builds; idle and stats as above
# The goals: stats' time of the calls <= 1.3x the empty hooks', wall and
# CPU time (user + system of every thread, the sampler's included), for
# each way of building (preloaded: stats / empty; stepscope-cc: cc-stats /
# cc-empty).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_TRAINER_STEPS:=2}" "${SS_BENCH_TRAINER_RUNS:=1}" "${SS_BENCH_TRAINER_CALLS:=20000}"
fi
TS=${SS_BENCH_TRAINER_STEPS:-50}
TR=${SS_BENCH_TRAINER_RUNS:-7}
TC=${SS_BENCH_TRAINER_CALLS:-1000000}
TT=${SS_BENCH_TRAINER_THREADS:-4}
W=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-trainer.XXXXXX")
trap 'rm -rf "$W"' EXIT
$CC -O2 -g -pthread -o "$W/plain" "$SRC/b-trainer.c"
$CC -O2 -g -pthread -finstrument-functions -o "$W/inst" "$SRC/b-trainer.c"
"$B/bin/stepscope-cc" $CC -O2 -pthread -c -o "$W/trainer.o" "$SRC/b-trainer.c"
"$B/bin/stepscope-cc" $CC -pthread -o "$W/cc" "$W/trainer.o"
$CC -O2 -c -o "$W/hooks-empty.o" "$SRC/hooks-empty.c"
$CC -pthread -o "$W/cc-empty" "$W/trainer.o" "$W/hooks-empty.o"
$CC -O2 -fPIC -shared -o "$W/libempty.so" "$SRC/hooks-empty.c"
printf 'step: {function: train_step}\nwindow: {start_step: 1000000000, end_step: 1000000001}\n' \
	> "$W/idle.yaml"
{ cat "$W/idle.yaml"; printf 'stats: whole_run\n'; } > "$W/stats.yaml"
SR="env STEPSCOPE_DIR=$W/trace STEPSCOPE_CONFIG=$W"
PRE="LD_PRELOAD=$B/lib/libstepscope.so"

cmd() { # variant steps -> command
	case $1 in
	plain) echo "$W/plain $2 $TC $TT" ;;
	empty) echo "env LD_PRELOAD=$W/libempty.so $W/inst $2 $TC $TT" ;;
	idle | stats) echo "$SR/$1.yaml $PRE $W/inst $2 $TC $TT" ;;
	cc-empty) echo "$W/cc-empty $2 $TC $TT" ;;
	cc-idle | cc-stats) echo "$SR/${1#cc-}.yaml $W/cc $2 $TC $TT" ;;
	esac
}
echo "stats-trainer: b-trainer, $TS steps of $TC calls over $TT threads, $TR rounds"
: > "$W/runs"
r=0
while [ $r -le "$TR" ]; do # round 0 is the warm-up, not counted
	if [ $((r % 2)) = 0 ]; then set -- plain empty idle stats cc-empty cc-idle cc-stats
	else set -- cc-stats cc-idle cc-empty stats idle empty plain; fi
	a=""
	for v in "$@"; do
		a="$a-n
$v
$(cmd "$v" "$TS")
-n
${v}0
$(cmd "$v" 0)
"
	done
	hyperfine_round $r "$W/t.csv" "sh -c 'rm -rf $W/trace; mkdir -p $W/trace'" "$W/runs" "$a"
	r=$((r + 1))
done
run_medians "$W/runs" | awk -v steps="$TS" -v calls="$TC" -v th="$TT" "$SS_BENCH_ROW_AWK"'
{ m[$1] = $2; mc[$1] = $3 }
END {
	split("plain empty idle stats cc-empty cc-idle cc-stats", V, " ")
	for (k = 1; k <= 7; k++) { v = V[k]; w[v] = m[v] - m[v "0"]; c[v] = mc[v] - mc[v "0"] }
	ns = 1e9 / (steps * calls)
	printf "\nstats: whole_run on a trainer: b-trainer, %d steps of %d tiny calls over %d threads (medians; run minus its 0-step run):\n", steps, calls, th
	printf "  %-36s %9s %9s  %8s %8s\n", "", "wall ms", "CPU ms", "ns/call", "x empty"
	L["plain"] = "plain build"; L["empty"] = "empty hooks (preloaded)"
	L["idle"] = "stepscope idle (preloaded)"; L["stats"] = "stepscope stats: whole_run"
	L["cc-empty"] = "empty hooks linked in"
	L["cc-idle"] = "stepscope-cc build, idle"; L["cc-stats"] = "stepscope-cc build, stats"
	for (k = 1; k <= 7; k++) {
		v = V[k]
		printf "  %-36s %9.1f %9.1f  %8.2f %8.2f\n", L[v], w[v] * 1e3, c[v] * 1e3, w[v] * ns, dv(w[v], w["empty"])
	}
	x = dv(w["stats"], w["empty"]); y = dv(c["stats"], c["empty"])
	xc = dv(w["cc-stats"], w["cc-empty"]); yc = dv(c["cc-stats"], c["cc-empty"])
	printf "  stats / empty hooks, preloaded:        %.2fx wall, %.2fx CPU  (goal <= 1.3x each)\n", x, y
	printf "  stats / empty hooks, linked in (stepscope-cc): %.2fx wall, %.2fx CPU  (goal <= 1.3x each)\n", xc, yc
	goal_row("counting: stats, trainer " th " threads / empty hooks (wall)", x, "<= 1.3", x <= 1.3)
	goal_row("counting: stats, trainer " th " threads / empty hooks (CPU)", y, "<= 1.3", y <= 1.3)
	goal_row("counting: stats, trainer, stepscope-cc / hooks linked in (wall)", xc, "<= 1.3", xc <= 1.3)
	goal_row("counting: stats, trainer, stepscope-cc / hooks linked in (CPU)", yc, "<= 1.3", yc <= 1.3)
}'
