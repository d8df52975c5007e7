#!/bin/sh
# run-tests.sh - run test binaries one after another, show their output,
# count what passed and failed.
#
# Usage: sh tests/run-tests.sh BINARY...     (make test passes them all)
#
#   SS_TEST_FILTER=TEXT   run only the binaries whose name contains TEXT
#   SS_TEST_TIMEOUT=SECS  a binary still running after SECS fails (default 900)
#
# A binary passes with exit status 0 and is skipped with 77 (it prints why);
# anything else, a crash or a timeout included, fails it.  The last line is
# "N passed, N failed" (", N skipped" added when some were), and the exit
# status is 1 when anything failed or nothing matched the filter.
#
# Never stops at the first failure: every selected binary runs.

timeout_s=${SS_TEST_TIMEOUT:-900}
have_timeout=0
command -v timeout >/dev/null 2>&1 && have_timeout=1

passed=0
failed=0
skipped=0
failed_names=
selected=0

for bin do
	name=${bin##*/}
	if [ -n "$SS_TEST_FILTER" ]; then
		case $name in
		*"$SS_TEST_FILTER"*) ;;
		*) continue ;;
		esac
	fi
	selected=$((selected + 1))
	echo "=== $name"
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		echo "--- $name: FAILED (no executable at $bin)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		continue
	fi
	case $bin in
	*/*) run=$bin ;;
	*) run=./$bin ;;
	esac
	if [ $have_timeout = 1 ]; then
		timeout -k 10 "$timeout_s" "$run" </dev/null
	else
		"$run" </dev/null
	fi
	rc=$?
	case $rc in
	0)
		echo "--- $name: passed"
		passed=$((passed + 1))
		;;
	77)
		echo "--- $name: skipped"
		skipped=$((skipped + 1))
		;;
	*)
		if [ $have_timeout = 1 ] && [ $rc = 124 ]; then
			why="timed out after ${timeout_s}s (SS_TEST_TIMEOUT)"
		elif [ $have_timeout = 1 ] && [ $rc = 137 ]; then
			why="killed by signal 9 (after a timeout, or out of memory)"
		elif [ $rc -gt 128 ]; then
			why="killed by signal $((rc - 128))"
		else
			why="exit status $rc"
		fi
		echo "--- $name: FAILED ($why)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		;;
	esac
done

if [ $selected = 0 ]; then
	if [ -n "$SS_TEST_FILTER" ]; then
		echo "run-tests: no test binary name contains \"$SS_TEST_FILTER\" (SS_TEST_FILTER)" >&2
	else
		echo "run-tests: no test binaries given" >&2
	fi
fi
[ -n "$failed_names" ] && echo "failed:$failed_names"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed = 0 ] && [ $selected -gt 0 ]
