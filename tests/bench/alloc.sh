#!/bin/sh
# alloc.sh - `make bench`: what memory.allocations adds to a malloc/free
# pair (issue 34), side by side in one run.  Also runs alone:
#   sh tests/bench/alloc.sh                (after `make all`)
#
# b-alloc (a loop of malloc(64)/free pairs, plain -O2, no instrumentation)
# run SS_BENCH_ALLOC_RUNS times per variant, the variants in turn; each run
# prints its fastest round; the figure is the best run's ns per pair minus
# the plain run's (min of runs: the floor each variant can reach, the
# least moved by the machine's other work).  Variants, libstepscope
# preloaded with steps through stepscope_step() and step 1 recorded:
#   plain    no libstepscope (glibc's malloc called directly)
#   off      memory.allocations false: the wrappers forward, nothing more
#   outside  memory.allocations true, the loop in step 2 (not recorded),
#            64 blocks of step 1 live: each free looks in the table
#   inside   memory.allocations true, the loop in recorded step 1: an
#            ALLOC and a FREE record per pair, the table kept
# Then reading (issue 45): `stepscope report` of a step with
# SS_BENCH_ALLOC_READ_PAIRS (10^7) malloc/free pairs recorded, against
# report of as many plain calls (b-calls, instrumented): the best of
# SS_BENCH_ALLOC_READ_RUNS runs' time, and the largest max RSS (GNU time).
# Goals: <= 3x the plain calls' time, <= 64 MB.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_ALLOC_PAIRS:=20000}" "${SS_BENCH_ALLOC_IN_PAIRS:=20000}" "${SS_BENCH_ALLOC_RUNS:=1}"
	: "${SS_BENCH_ALLOC_READ_PAIRS:=20000}" "${SS_BENCH_ALLOC_READ_RUNS:=1}"
fi
N=${SS_BENCH_ALLOC_PAIRS:-2000000}
NI=${SS_BENCH_ALLOC_IN_PAIRS:-200000} # inside: 56 bytes of trace a pair
RUNS=${SS_BENCH_ALLOC_RUNS:-11}
W=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-alloc.XXXXXX")
trap 'rm -rf "$W"' EXIT
$CC -O2 -g -o "$W/b-alloc" "$SRC/b-alloc.c"
SETS="window.start_step=1,window.end_step=2,max_trace_mb=0"

run() { # variant -> ns per pair
	case $1 in
	plain) "$W/b-alloc" outside "$N" 5 ;;
	off) STEPSCOPE_DIR="$W/tr" STEPSCOPE_SET="$SETS" LD_PRELOAD="$B/lib/libstepscope.so" \
		"$W/b-alloc" outside "$N" 5 ;;
	outside) STEPSCOPE_DIR="$W/tr" STEPSCOPE_SET="$SETS,memory.allocations=true" \
		LD_PRELOAD="$B/lib/libstepscope.so" "$W/b-alloc" outside "$N" 5 ;;
	inside) STEPSCOPE_DIR="$W/tr" STEPSCOPE_SET="$SETS,memory.allocations=true" \
		LD_PRELOAD="$B/lib/libstepscope.so" "$W/b-alloc" inside "$NI" 5 ;;
	esac 2>/dev/null | sed -n 's/^ns\/pair //p'
}

echo
echo "memory.allocations: added ns per malloc/free pair, b-alloc (best of $RUNS runs)"
: > "$W/r"
for i in $(seq "$RUNS"); do
	for v in plain off outside inside; do
		rm -rf "$W/tr" && mkdir -p "$W/tr"
		echo "$v $(run $v)" >> "$W/r"
	done
done
awk "$SS_BENCH_ROW_AWK"'
{ if (!($1 in b) || $2 < b[$1]) b[$1] = $2 }
END {
	p = b["plain"]
	printf "  plain (glibc direct)          %7.2f ns per pair\n", p
	printf "  off                           %7.2f ns  +%6.2f  (target <= 2)\n", b["off"], b["off"] - p
	printf "  on, outside a recorded step   %7.2f ns  +%6.2f  (target <= 5)\n", b["outside"], b["outside"] - p
	printf "  on, inside a recorded step    %7.2f ns  +%6.2f  (target <= 100)\n", b["inside"], b["inside"] - p
	goal_row("memory.allocations off: ns added per malloc/free pair", b["off"] - p, "<= 2", b["off"] - p <= 2)
	goal_row("memory.allocations on, outside a step: ns added per pair", b["outside"] - p, "<= 5", b["outside"] - p <= 5)
	goal_row("memory.allocations on, inside a step: ns added per pair", b["inside"] - p, "<= 100", b["inside"] - p <= 100)
}' "$W/r"

# Reading: report's time and memory on allocation records against plain calls
NR=${SS_BENCH_ALLOC_READ_PAIRS:-10000000}
RR=${SS_BENCH_ALLOC_READ_RUNS:-3}
"$B/bin/stepscope-cc" $CC -O2 -o "$W/b-calls" "$SRC/b-calls.c"
"$B/bin/stepscope" record -o "$W/rc" --set max_trace_mb=0 -- "$W/b-calls" "$NR" \
	>/dev/null 2>&1
"$B/bin/stepscope" record -o "$W/ra" --set window.start_step=1 --set window.end_step=2 \
	--set max_trace_mb=0 --set memory.allocations=true -- "$W/b-alloc" inside "$NR" 1 \
	>/dev/null 2>&1
: > "$W/rr"
for i in $(seq "$RR"); do
	for v in rc ra; do # seconds, max RSS KB
		/usr/bin/time -f "$v %e %M" -o "$W/t" "$B/bin/stepscope" report "$W/$v" >/dev/null 2>&1
		cat "$W/t" >> "$W/rr"
	done
done
rm -rf "$W/rc" "$W/ra"
awk -v n="$NR" "$SS_BENCH_ROW_AWK"'
{ if (!($1 in t) || $2 < t[$1]) t[$1] = $2; if ($3 > m[$1]) m[$1] = $3 }
END {
	r = dv(t["ra"], t["rc"]); mb = m["ra"] / 1024
	printf "\nreport: %d malloc/free pairs against %d plain calls (best of '"$RR"' runs)\n", n, n
	printf "  plain calls                   %7.2f s  %8.1f MB max RSS\n", t["rc"], m["rc"] / 1024
	printf "  malloc/free pairs             %7.2f s  %8.1f MB max RSS  (%.2fx; target <= 3x, <= 64 MB)\n", t["ra"], mb, r
	goal_row("report of allocation pairs: time / as many plain calls", r, "<= 3", r <= 3)
	goal_row("report of allocation pairs: max RSS (MB)", mb, "<= 64", mb <= 64)
}' "$W/rr"
