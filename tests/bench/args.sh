#!/bin/sh
# args.sh - `make bench`, record.args (issue 33): what keeping a listed
# function's arguments adds to each of its recorded calls, and what listing
# functions that are never called costs the others.  b-args.c (built with
# stepscope-cc, as a user builds) times N calls of one small function,
# recording everything, in three ways, interleaved, best of
# SS_BENCH_ARGS_RUNS each (min: the machine's other load only adds):
#   plain   record.args unset
#   listed  record.args=listed: every call keeps its arguments
#   never   record.args=never (a function that exists and is never
#           called): the hooks' slow path goes through the capture stub
# Goals: listed - plain <= 300 ns a call; never / plain <= 1.02.
# Also runs alone:  sh tests/bench/args.sh   (after `make all`)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_ARGS_CALLS:=5000}" "${SS_BENCH_ARGS_RUNS:=1}"
fi
N=${SS_BENCH_ARGS_CALLS:-200000}
R=${SS_BENCH_ARGS_RUNS:-7}
W=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-argsbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$B/bin/stepscope-cc" "$CC" -O2 -o "$W/b-args" "$SRC/b-args.c"
one() { # extra settings -> ns/call of one run
	rm -rf "$W/tr" && mkdir -p "$W/tr"
	STEPSCOPE_DIR="$W/tr" STEPSCOPE_SET="max_trace_mb=0$1" "$W/b-args" "$N" 2>/dev/null |
		sed -n 's/ ns\/call//p'
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
p="" l="" v=""
for _ in $(seq "$R"); do
	p=$(best "$p" "$(one "")")
	l=$(best "$l" "$(one ",record.args=listed")")
	v=$(best "$v" "$(one ",record.args=never")")
done
echo
echo "record.args: b-args, $N recorded calls (best of $R)"
awk -v p="$p" -v l="$l" -v v="$v" "$SS_BENCH_ROW_AWK"'BEGIN {
	printf "  plain %.1f ns/call, listed %.1f (+%.1f), never-called listed %.1f (%.3fx)\n", p, l, l - p, v, v / p
	goal_row("record.args: ns added per call of a listed function", l - p, "<= 300", l - p <= 300)
	goal_row("record.args: never-called functions listed / not set", v / p, "<= 1.02", v / p <= 1.02) }'
