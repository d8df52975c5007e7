#!/bin/sh
# post.sh - `make bench`: how fast the post-processing commands read a big
# run (issue 36 item 2), next to `uftrace dump --chrome` on the same calls.
# Also runs alone:
#   sh tests/bench/post.sh                (after `make all`)
#
# b-calls makes SS_BENCH_POST_CALLS calls of its leaf (default 2x10^7:
# 4x10^7 events, one thread), recorded whole by stepscope (max_trace_mb: 0)
# and by `uftrace record`; the traces lie on the machine's disk
# (SS_BENCH_POST_DIR, default under /var/tmp).  Each command runs
# SS_BENCH_POST_RUNS times (default 3), its outputs written to that disk
# (report to /dev/null) and removed before each run; the fastest run (wall)
# counts:
#   symbolize   stepscope symbolize RUN (Chrome JSON)
#   perfetto    stepscope symbolize --format perfetto RUN
#   report      stepscope report RUN
#   html        stepscope html RUN
#   uftrace     uftrace dump --chrome (uftrace's own data of the same calls)
# Events are the raw trace's (an ENTER and an EXIT a call); M events/s wall
# is the goal's figure (>= 10), per CPU second beside it (a command's
# worker and writer threads count in its CPU time), and each command's
# max RSS.  Each stepscope command runs as users run it (report and html
# walk on a worker thread while their own thread sums, when the machine
# has a CPU to spare: read/slices-pipe.c) and again with
# STEPSCOPE_JOBS=1 (the walk on the command's thread): "1 thread" is that
# wall time, the single-core figure.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/build
SRC=$top/tests/bench
. "$SRC/lib.sh"
if [ -n "${SS_BENCH_SMOKE:-}" ]; then
	: "${SS_BENCH_POST_CALLS:=20000}" "${SS_BENCH_POST_RUNS:=1}"
fi
N=${SS_BENCH_POST_CALLS:-20000000}
RUNS=${SS_BENCH_POST_RUNS:-3}
SS=$B/bin/stepscope
W=${SS_BENCH_POST_DIR:-$(mktemp -d /var/tmp/stepscope-post.XXXXXX)}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
$CC -O2 -g -finstrument-functions -o "$W/b-calls" "$SRC/b-calls.c"
printf 'max_trace_mb: 0\n' > "$W/all.yaml"
rm -rf "$W/rec"
"$SS" record -o "$W/rec" -c "$W/all.yaml" -- "$W/b-calls" "$N" >/dev/null 2>"$W/err" ||
	{ echo "bench: post: stepscope record failed:" >&2; cat "$W/err" >&2; exit 1; }

# best NAME COMMAND: run COMMAND (sh -c) RUNS times, outputs removed before
# each; appends "NAME cpu_s wall_s maxrss_kb" of the fastest (wall) run to
# $W/post
best() {
	name=$1
	shift
	b=""
	r=0
	while [ $r -lt "$RUNS" ]; do
		rm -f "$W/out.json" "$W/out.pftrace" "$W/out.html"
		/usr/bin/time -f '%U %S %e %M' -o "$W/time" sh -c "$*" >/dev/null 2>"$W/err" ||
			{ echo "bench: post: $name failed:" >&2; cat "$W/err" >&2; exit 1; }
		read -r u s e m < "$W/time"
		b=$(awk -v b="$b" -v c="$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}') $e $m" \
			'BEGIN { split(b, x, " "); split(c, y, " "); print (b == "" || y[2] < x[2]) ? c : b }')
		r=$((r + 1))
	done
	echo "$name $b" >> "$W/post"
}
: > "$W/post"
for j in "" 1; do # as users run it, then on one thread
	best symbolize$j "${j:+STEPSCOPE_JOBS=$j }$SS symbolize -q -o $W/out.json $W/rec"
	best perfetto$j "${j:+STEPSCOPE_JOBS=$j }$SS symbolize -q --format perfetto -o $W/out.pftrace $W/rec"
	pf_bytes=$(stat -c %s "$W/out.pftrace")
	best report$j "${j:+STEPSCOPE_JOBS=$j }$SS report -q $W/rec"
	best html$j "${j:+STEPSCOPE_JOBS=$j }$SS html -q -o $W/out.html $W/rec"
done
rm -rf "$W/rec"
if command -v uftrace >/dev/null; then
	(cd "$W" && uftrace record -d "$W/uft" ./b-calls "$N" >/dev/null 2>&1)
	best uftrace "uftrace dump --chrome -d $W/uft > $W/out.json"
	rm -rf "$W/uft"
fi
rm -f "$W/out.json" "$W/out.pftrace" "$W/out.html"
awk -v n="$((N * 2))" -v pb="$pf_bytes" "$SS_BENCH_ROW_AWK"'
{ c[$1] = $2; w[$1] = $3; m[$1] = $4; order[++k] = $1 }
END {
	printf "\npost-processing: a whole-run recording of b-calls, %d events, one thread (best of %d):\n", n, runs
	printf "  %-10s %8s %8s %12s %12s %9s %16s\n", "command", "wall s", "CPU s", "M ev/s wall",
		"M ev/s CPU", "max RSS", "1 thread: wall s"
	for (i = 1; i <= k; i++) {
		x = order[i]
		if (x ~ /1$/)
			continue
		printf "  %-10s %8.2f %8.2f %12.1f %12.1f %6.1f MB", x, w[x], c[x], dv(n, w[x]) / 1e6,
			dv(n, c[x]) / 1e6, m[x] / 1024
		if ((x "1") in w)
			printf " %8.2f (%.1f M ev/s)", w[x "1"], dv(n, w[x "1"]) / 1e6
		printf "\n"
	}
	if ("uftrace" in w)
		printf "  stepscope symbolize is %.1fx faster than uftrace dump --chrome (wall)\n", dv(w["uftrace"], w["symbolize"])
	printf "  perfetto: %.2f bytes per event, %.2fx the Chrome JSON wall time\n", dv(pb, n), dv(w["perfetto"], w["symbolize"])
	mx = 0
	for (i = 1; i <= k; i++) {
		x = order[i]
		if (x == "uftrace" || x ~ /1$/)
			continue
		goal_row("post: " x " M events/s (wall)", dv(n, w[x]) / 1e6, ">= 10", dv(n, w[x]) / 1e6 >= 10)
		goal_row("post: " x " on one thread, M events/s", dv(n, w[x "1"]) / 1e6, ">= 10",
			dv(n, w[x "1"]) / 1e6 >= 10)
		if (m[x] > mx)
			mx = m[x]
	}
	goal_row("post: max RSS of the four commands (MB)", mx / 1024, "<= 16", mx / 1024 <= 16)
	goal_row("post: perfetto wall / chrome wall", dv(w["perfetto"], w["symbolize"]), "<= 1",
		w["perfetto"] <= w["symbolize"])
	goal_row("post: perfetto bytes per event", dv(pb, n), "<= 12", dv(pb, n) <= 12)
}' runs="$RUNS" "$W/post"
