#!/bin/sh
# tests/stress.sh CMD [ARG...] - run CMD with busy loops on every core but
# one (`make test-stress`: the suite on a machine as busy as a shared CI
# runner).  SS_STRESS_LOOPS=N sets the number of loops (default: cores - 1,
# at least 1).  Exits with CMD's status.
#
# The loops are shell loops at normal priority, so they take their share
# of every core the tests use.  They end however this script ends: killed
# by the trap on exit, Ctrl-C, TERM or HUP, and, should this script itself
# be killed with SIGKILL, each loop checks every few hundred milliseconds
# that this script is still there and stops when it is not.
set -u

if [ $# -eq 0 ]; then
	echo "usage: sh tests/stress.sh CMD [ARG...]" >&2
	exit 2
fi

cores=$(nproc 2>/dev/null || echo 1)
loops=${SS_STRESS_LOOPS:-$((cores - 1))}
case $loops in
'' | *[!0-9]*) echo "stress: SS_STRESS_LOOPS must be a number, got '$loops'" >&2; exit 2 ;;
esac
[ "$loops" -ge 1 ] || loops=1

me=$$
pids=
child=
stop() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	pids=
}
# a signal for this script goes to CMD too (Ctrl-C reaches both anyway)
quit() {
	[ -z "$child" ] || kill -"$1" "$child" 2>/dev/null
	stop
	exit "$2"
}
trap 'stop' EXIT
trap 'quit INT 130' INT
trap 'quit TERM 143' TERM
trap 'quit HUP 129' HUP

i=0
while [ "$i" -lt "$loops" ]; do
	sh -c 'while kill -0 "$1" 2>/dev/null; do
		n=0
		while [ "$n" -lt 20000 ]; do n=$((n + 1)); done
	done' stress-loop "$me" &
	pids="$pids $!"
	i=$((i + 1))
done
echo "stress: $loops busy loop(s) on $cores core(s) while: $*"

# CMD in the background, so that a signal runs the traps at once; sh
# starts it with SIGINT ignored, which env puts back (Ctrl-C stops tests)
if env --default-signal=INT true 2>/dev/null; then
	env --default-signal=INT,QUIT "$@" &
else
	"$@" &
fi
child=$!
wait "$child"
st=$?
child=
stop
echo "stress: busy loops stopped; exit status $st"
exit $st
