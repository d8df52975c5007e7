#!/bin/sh
# demo.sh - record the MLP example with stepscope and say where the trace is.
#
# Run by `make demo` after `make all`.  Rebuilds examples/mlp through
# stepscope-cc (make PROFILE=1), records 200 training steps into a fresh
# stepscope-out/demo-<date>-<time>/ (with examples/mlp/demo.yaml: the
# quick look of configs/quick-look.yaml plus the matmuls' shapes and
# GFLOP/s), symbolizes the run into trace.json and prints how to open it.
#
# Never: write outside examples/mlp/ and stepscope-out/, reuse an old run
# directory, or carry on after a failed step (set -e; each step says what
# failed).
set -eu

cd "$(dirname "$0")/.."
root=$(pwd)
ss="$root/build/bin/stepscope"
make=${MAKE:-make}

fail() {
	echo "demo: $*" >&2
	exit 1
}

[ -x "$ss" ] || fail "build/bin/stepscope not found (run make first)"
[ -x build/bin/stepscope-cc ] || fail "build/bin/stepscope-cc not found (run make first)"

echo "== 1/3 building examples/mlp with stepscope-cc (make PROFILE=1)"
$make --no-print-directory -C examples/mlp PROFILE=1 ||
	fail "building examples/mlp with PROFILE=1 failed (see the compiler output above)"

out="stepscope-out/demo-$(date +%Y%m%d-%H%M%S)"
[ -e "$out" ] && out="$out-$$"
mkdir -p stepscope-out

set -- -o "$out"
if [ -f examples/mlp/demo.yaml ]; then
	set -- "$@" -c examples/mlp/demo.yaml  # quick-look + the matmuls' shapes
elif [ -f configs/quick-look.yaml ]; then
	set -- "$@" -c configs/quick-look.yaml
fi

echo
echo "== 2/3 recording: stepscope record $* -- examples/mlp/train --steps 200"
"$ss" record "$@" -- examples/mlp/train --steps 200 ||
	fail "stepscope record failed (exit $?)"

echo
echo "== 3/3 symbolizing: stepscope symbolize $out"
"$ss" symbolize "$out" || fail "stepscope symbolize $out failed (exit $?)"
[ -s "$out/trace.json" ] || fail "$out/trace.json was not written"

echo
echo "== where the time goes (stepscope report $out --limit 12)"
"$ss" report "$out" --limit 12 || fail "stepscope report $out failed (exit $?)"
echo
echo "== the matmuls by shape (stepscope report $out --group-by args)"
"$ss" report "$out" --group-by args --limit 12 || fail "stepscope report --group-by args failed (exit $?)"
"$ss" html "$out" -o "$out/report.html" || fail "stepscope html failed (exit $?)"

echo
echo "Trace:  $root/$out/trace.json"
echo "        open it in https://ui.perfetto.dev (\"Open trace file\") or in chrome://tracing"
echo "Report: $root/$out/report.html (table, step times, flame graph; opens offline)"
echo "MPI:    ranks, stragglers and merged hosts: see docs/mpi.md (mpirun -np 4 stepscope record -o RUN -- ./train; stepscope report RUN --ranks)"
