#!/bin/sh
# diff.sh - `make bench`: does `stepscope diff` cry wolf on a shared
# machine, and does it find a real change (issue 48)?  Also runs alone:
#   sh tests/bench/diff.sh                (after `make all`)
#
# Two trainers of real arithmetic (no spin on the clock: a busy machine
# slows them as it slows a real one): b-kann.c, shaped like kann's rnn-bit
# (many small autodiff operators, step.function kann_cost), and b-mlp.c,
# a small MLP (a few large operators, step.function train_step); each
# built twice, the second with one operator doing 30% more work
# (kad_op_sigm, gelu_fwd: -DSLOW=1).  For each trainer, quiet and with a
# busy neighbour, and recorded as by default (wall time) and with
# record.sched (on-CPU time): SS_BENCH_DIFF_PAIRS pairs (default 20) of
# SS_BENCH_DIFF_STEPS steps (default 20) a run (SS_BENCH_DIFF_MODES: "wall
# sched" by default, "wall" in a smoke run or where record.sched is refused;
# SS_BENCH_DIFF_SHAPES: "kann mlp" by default):
#   false alarms  two runs of the same build: `diff --fail-above 10` exit 1
#                 (goal: at most 1 of 20)
#   detection     the same BASE against the changed build: the changed
#                 operator is the first row and significant (goal: at
#                 least 19 of 20)
# The program runs on one CPU (the last); "busy" is a busy loop pinned to
# that same CPU while NEW is recorded (BASE quiet): NEW's machine is half
# as fast, the worst case for telling the code from the machine.  On a
# machine that others use the "quiet" runs are not quiet either.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
PAIRS=${SS_BENCH_DIFF_PAIRS:-20}
STEPS=${SS_BENCH_DIFF_STEPS:-20}
MODES=${SS_BENCH_DIFF_MODES:-wall sched}
if [ -n "${SS_BENCH_SMOKE:-}" ]; then # wall time only: the same rows with or without perf
	PAIRS=${SS_BENCH_DIFF_PAIRS:-2} STEPS=${SS_BENCH_DIFF_STEPS:-6} MODES=${SS_BENCH_DIFF_MODES:-wall}
fi
SS=$B/bin/stepscope
W=$(mktemp -d /tmp/stepscope-diff.XXXXXX)
H=
# the busy loop goes with the script, however it ends
trap '[ -n "$H" ] && kill $H 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 1' HUP INT PIPE TERM
C=$(($(nproc) - 1))
mkdir -p "$W/slow"
for p in kann mlp; do
	"$B/bin/stepscope-cc" $CC -O2 -g -o "$W/b-$p" "$SRC/b-$p.c" -lm
	# the changed build under the same name: no --allow-renamed
	"$B/bin/stepscope-cc" $CC -O2 -g -DSLOW=1 -o "$W/slow/b-$p" "$SRC/b-$p.c" -lm
done
if ! "$SS" record -o "$W/probe" --set step.function=train_step --set record.sched=true \
	-- "$W/b-mlp" 2 2>"$W/probe.err" >/dev/null || grep -q 'record.sched: perf_event_open' "$W/probe.err"; then
	echo "diff: record.sched refused here ($(head -1 "$W/probe.err")): wall time only"
	MODES=wall
fi

# rec DIR BUILD SHAPE MODE BUSY: record BUILD/b-SHAPE, a busy loop on the
# same CPU meanwhile when BUSY is 1
rec() {
	fn=kann_cost
	[ "$3" = mlp ] && fn=train_step
	set -- "$1" "$2" "$3" "$4" "$5" "--set step.function=$fn"
	[ "$4" = sched ] && set -- "$1" "$2" "$3" "$4" "$5" "$6 --set record.sched=true"
	if [ "$5" = 1 ]; then
		taskset -c "$C" sh -c 'while :; do :; done' >/dev/null 2>&1 &
		H=$!
	fi
	rm -rf "$1"
	# shellcheck disable=SC2086
	(cd "$2" && taskset -c "$C" "$SS" record -o "$1" $6 -- ./b-"$3" "$STEPS" >/dev/null 2>&1)
	if [ -n "$H" ]; then
		kill "$H" 2>/dev/null
		wait "$H" 2>/dev/null || true
		H=
	fi
}

echo "diff: $PAIRS same-build pairs and $PAIRS pairs against one operator +30%, $STEPS steps a run, on CPU $C"
: > "$W/log"
for shape in ${SS_BENCH_DIFF_SHAPES:-kann mlp}; do
	op=kad_op_sigm
	[ "$shape" = mlp ] && op=gelu_fwd
	for busy in 0 1; do
		for mode in $MODES; do
			fa=0 det=0 i=0
			while [ "$i" -lt "$PAIRS" ]; do
				rec "$W/a" "$W" "$shape" "$mode" 0
				rec "$W/b" "$W" "$shape" "$mode" "$busy"
				rec "$W/c" "$W/slow" "$shape" "$mode" "$busy"
				rc=0
				"$SS" diff -q --fail-above 10 "$W/a" "$W/b" > "$W/d.txt" 2>&1 || rc=$?
				[ $rc -gt 1 ] && { echo "diff: diff failed:"; cat "$W/d.txt"; exit 1; }
				if [ $rc = 1 ]; then
					fa=$((fa + 1))
					{ echo "== $shape busy=$busy $mode: false alarm"; sed -n '4,12p' "$W/d.txt"; } >> "$W/log"
				fi
				"$SS" diff -q --format csv "$W/a" "$W/c" > "$W/d.csv" 2>"$W/d.err" || true
				# the first row after the step time: the operator, significant
				first=$(awk -F, 'NR == 3 { print $1 "," $NF }' "$W/d.csv")
				if [ "$first" = "$op,1" ]; then
					det=$((det + 1))
				else
					{ echo "== $shape busy=$busy $mode: first row $first"; grep '^verdict' "$W/d.err"; sed -n '2,5p' "$W/d.csv"; } >> "$W/log"
				fi
				i=$((i + 1))
			done
			what="$shape, $([ "$busy" = 1 ] && echo "busy neighbour" || echo quiet), $([ "$mode" = sched ] && echo "record.sched" || echo "wall time")"
			awk -v fa="$fa" -v det="$det" -v n="$PAIRS" -v what="$what" -v op="$op" "$SS_BENCH_ROW_AWK"'BEGIN {
				printf "  %-38s false alarms %2d of %d, %s +30%% first and significant %2d of %d\n", what, fa, n, op, det, n
				goal_row("diff: --fail-above 10 false alarms, same build (" what ", of " n ")", fa, "0-" (n >= 20 ? 1 : 0), fa <= (n >= 20 ? 1 : 0))
				goal_row("diff: one operator +30% first, significant (" what ", of " n ")", det, (n >= 20 ? 19 : n) "-" n, det >= (n >= 20 ? 19 : n)) }'
		done
	done
done
if [ -s "$W/log" ]; then
	echo "  what went wrong (first lines):"
	head -30 "$W/log" | sed 's/^/    /'
fi
