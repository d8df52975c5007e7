#!/bin/sh
# window.sh - `make bench`: what opening a recording window costs the
# program's own thread (issue 46), and the first recorded step against
# the others.  Also runs alone:  sh tests/bench/window.sh   (after `make all`)
#
# b-window (tests/bench/b-window.c, built with stepscope-cc): steps of
# SS_BENCH_WINDOW_WORK_US of work the clock fixes and SS_BENCH_WINDOW_CALLS
# tiny recorded calls; the program reads its own clocks right before each
# call of the step function and first and last thing in its body, so a
# step boundary's time ("enter": the entry hook and all the runtime does
# there) and a step's own time ("body") are the program's view, not the
# runtime's account of itself.  Schedule: wait 2, warmup 0, active 6,
# repeat 3 (windows open at steps 2, 10 and 18 of 26).
#   opening   enter of a window's first step less the median enter of
#             the recorded steps that open nothing (the entry hook's own
#             cost), wall time (CPU time printed beside it)
#   first     body of a window's first step / median body of its other 5
# SS_BENCH_WINDOW_RUNS runs with the ring and pool at their defaults
# (buffer_kb 1024) and as many at 4x (buffer_kb 4096), in turn.  Each row
# is the larger of two medians: over the first windows of the runs, and
# over the later windows (a window that follows another may reuse what
# the first one prepared; the first one must not hide behind them).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_WINDOW_RUNS:=1}" "${SS_BENCH_WINDOW_CALLS:=20000}" "${SS_BENCH_WINDOW_WORK_US:=500}"
fi
WR=${SS_BENCH_WINDOW_RUNS:-9}
WC=${SS_BENCH_WINDOW_CALLS:-100000}
WU=${SS_BENCH_WINDOW_WORK_US:-2000}
W=$(mktemp -d "${TMPDIR:-/tmp}/stepscope-window.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$B/bin/stepscope-cc" $CC -O2 -I"$top/tests/e2e" -o "$W/bw" "$SRC/b-window.c"
printf 'step: {function: train_step}\nschedule: {wait: 2, warmup: 0, active: 6, repeat: 3}\n' \
	> "$W/defaults.yaml"
{ cat "$W/defaults.yaml"; printf 'buffer_kb: 4096\n'; } > "$W/4x.yaml"
: > "$W/steps"
r=1
while [ $r -le "$WR" ]; do
	for v in defaults 4x; do
		rm -rf "$W/trace"
		mkdir -p "$W/trace"
		STEPSCOPE_DIR="$W/trace" STEPSCOPE_CONFIG="$W/$v.yaml" "$W/bw" 26 "$WC" "$WU" |
			sed "s/^/$v $r /" >> "$W/steps"
	done
	r=$((r + 1))
done
echo "window: b-window, 26 steps of $WU us + $WC tiny calls, windows at steps 2, 10, 18 (6 steps each), $WR runs a variant"
awk -v runs="$WR" "$SS_BENCH_MED_AWK$SS_BENCH_ROW_AWK"'
# $1 variant, $2 run, $3 step, $4 enter wall, $5 enter cpu, $6 body wall
{ v = $1; r = $2; s = $3; ew[v, r, s] = $4; ec[v, r, s] = $5; bw[v, r, s] = $6; seen[v] = 1 }
function mm(x, y) { return x > y ? x : y }
END {
	for (v in seen) {
		nf[v] = nl[v] = ff[v] = fl[v] = 0
		for (r = 1; r <= runs; r++) {
			k = 0
			for (s = 0; s < 26; s++)
				if (s % 8 >= 3) { k++; a[k] = ew[v, r, s]; b[k] = ec[v, r, s] }
			base = med(a, k); cbase = med(b, k)
			for (w = 0; w < 3; w++) {
				o = 2 + 8 * w
				ow = (ew[v, r, o] - base) / 1e6; oc = (ec[v, r, o] - cbase) / 1e6
				k = 0
				for (s = o + 1; s < o + 6; s++) { k++; a[k] = bw[v, r, s] }
				f = dv(bw[v, r, o], med(a, k))
				if (w == 0) { nf[v]++; of[v, nf[v]] = ow; cf[v, nf[v]] = oc; sf[v, nf[v]] = f }
				else { nl[v]++; ol[v, nl[v]] = ow; cl[v, nl[v]] = oc; sl[v, nl[v]] = f }
			}
			for (w = 0; w < 3; w++) {
				pe[v, ++np[v]] = (ew[v, r, 1 + 8 * w] - base) / 1e6
				ce[v, ++nc[v]] = (ew[v, r, 8 + 8 * w] - base) / 1e6
			}
		}
		for (i = 1; i <= nf[v]; i++) { a[i] = of[v, i]; b[i] = cf[v, i]; c[i] = sf[v, i] }
		mof[v] = med(a, nf[v]); mcf[v] = med(b, nf[v]); msf[v] = med(c, nf[v])
		for (i = 1; i <= nl[v]; i++) { a[i] = ol[v, i]; b[i] = cl[v, i]; c[i] = sl[v, i] }
		mol[v] = med(a, nl[v]); mcl[v] = med(b, nl[v]); msl[v] = med(c, nl[v])
		for (i = 1; i <= np[v]; i++) a[i] = pe[v, i]
		mpe[v] = med(a, np[v])
		for (i = 1; i <= nc[v]; i++) a[i] = ce[v, i]
		mce[v] = med(a, nc[v])
	}
	for (v in seen) {
		printf "  %-8s opening on the program'"'"'s thread: first window %.3f ms (CPU %.3f), later ones %.3f ms (CPU %.3f)  (goal <= 0.1)\n",
			v, mof[v], mcf[v], mol[v], mcl[v]
		printf "  %-8s the boundary before a window %.3f ms, closing one %.3f ms\n", v, mpe[v], mce[v]
		printf "  %-8s first recorded step / median of the window'"'"'s others: first window %.3f, later ones %.3f  (goal <= 1.1)\n",
			v, msf[v], msl[v]
	}
	o = mm(mof["defaults"], mol["defaults"])
	goal_row("window: opening on the program'"'"'s thread, defaults (ms)", o, "<= 0.1", o <= 0.1)
	o = mm(mof["4x"], mol["4x"])
	goal_row("window: opening on the program'"'"'s thread, ring and pool 4x (ms)", o, "<= 0.1", o <= 0.1)
	f = mm(msf["defaults"], msl["defaults"])
	goal_row("window: first recorded step / median recorded step", f, "<= 1.1", f <= 1.1)
}' "$W/steps"
