#!/bin/sh
# device-check.sh - the GPU proof kit's one command: does stepscope see
# what a CUDA program really did on this GPU?  Run it from the unpacked
# bundle (`make gpu-bundle` writes build/gpu-bundle.tar.gz), as it is:
#
#   sh stepscope-gpu-kit/device-check.sh                 # on a GPU machine
#   sh stepscope-gpu-kit/device-check.sh --cpu-dry-run   # anywhere
#
# On a GPU machine it builds examples/cuda-mlp and cublas-train (cuBLAS)
# with nvcc through the kit's stepscope-cc, records 3 steps of each with
# gpu.enabled and the memory poller, symbolizes (Chrome JSON, Perfetto),
# writes `stepscope report` and report.html, and runs bin/gpu-check on
# each run.  Then it builds src/cuda-mem (the host compiler, against the
# toolkit's shared libcudart), records 3 steps with memory.allocations and
# gpu.enabled, and runs bin/mem-check: every CUDA memory call the program
# wrote in its ledger against stepscope's CUDA Mem columns, peaks and
# leaks.  The dry run does the same host side with the stand-in CUDA
# runtime + CUPTI and NVML of tests/e2e and the prebuilt dry/bin/fake-train
# (the host side of cublas-train) and dry/bin/cuda-mem, so it needs no
# compiler, no python, no GPU: only sh and coreutils.
#
# Output: one line per check ("ok   ..." or "FAIL ..."), "note: ..." lines
# that count neither way, and last "N passed, N failed".  Exit 0 when
# nothing failed.  With $OUT set, each program's trace.json,
# trace.perfetto-trace, report.txt, report.html, its output and the
# record's stderr go to $OUT/<program>/.
#
#   NVCC=...             the CUDA compiler (default: nvcc on PATH, else
#                        $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc)
#   STEPSCOPE_CUPTI_LIBRARY=...  libcupti (default: found in the toolkit)
#   CC=...               the host C compiler for cuda-mem (default: cc, else
#                        gcc)
#   SS_CHECK_DIR=DIR     work there (default: a new temporary directory)
#
# Never: install anything, reach the network, or write outside the work
# directory and $OUT.
set -u

usage() {
	echo "usage: sh device-check.sh [--cpu-dry-run]" >&2
	exit 2
}

dry=0
case $# in
0) ;;
1) [ "$1" = --cpu-dry-run ] && dry=1 || usage ;;
*) usage ;;
esac

kit=$(cd "$(dirname "$0")" && pwd)
started=$(date +%s)
work=${SS_CHECK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/stepscope-gpu-check.XXXXXX")} || exit 1
mkdir -p "$work" || exit 1
SS=$kit/bin/stepscope
passed=0
failed=0
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout 180"

ok() {
	echo "ok   $*"
	passed=$((passed + 1))
}

fail() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

# tail_of FILE: its last lines, indented, for a failure's context
tail_of() {
	[ -s "$1" ] && tail -n 5 "$1" | sed 's/^/       | /'
}

# The config of every run: steps 2, 3 and 4 recorded (stepscope numbers
# the calls of train_step from 0), CUDA activity and memory sampled.
SETS="--set step.function=train_step --set window.start_step=2 --set window.end_step=5
	--set gpu.enabled=true --set memory.enabled=true --set memory.interval_ms=5"

# check_run NAME COUNTS CMD...: record CMD, symbolize, report, check.
# COUNTS=1: the program prints its own per-step counts and nvidia-smi.
check_run() {
	name=$1 counts=$2
	shift 2
	run=$work/$name.run
	rm -rf "$run"
	# shellcheck disable=SC2086
	if $tmo "$SS" record $SETS -o "$run" -- "$@" >"$work/$name.out" 2>"$work/$name.err"; then
		ok "$name: record 3 steps with gpu.enabled and the memory poller"
	else
		fail "$name: record: exit status $? (stderr in $work/$name.err)"
		tail_of "$work/$name.err"
		return
	fi
	if grep -q 'stepscope: gpu:' "$work/$name.err"; then
		fail "$name: CUDA activity: $(grep 'stepscope: gpu:' "$work/$name.err" | head -n 1)"
	fi
	if "$SS" symbolize "$run" >"$work/$name.sym" 2>&1 &&
	   "$SS" symbolize --format perfetto "$run" >>"$work/$name.sym" 2>&1 &&
	   "$SS" report "$run" >"$work/$name.report.txt" 2>>"$work/$name.sym" &&
	   "$SS" html "$run" -o "$work/$name.report.html" >>"$work/$name.sym" 2>&1; then
		ok "$name: symbolize (Chrome JSON, Perfetto), report, html"
	else
		fail "$name: symbolize, report or html failed"
		tail_of "$work/$name.sym"
	fi
	if [ "$counts" = 1 ]; then
		"$kit/bin/gpu-check" --label "$name" --steps 3 --program-output "$work/$name.out" \
			--report "$work/$name.report.txt" "$run" >"$work/$name.check" 2>&1
	else
		"$kit/bin/gpu-check" --label "$name" --steps 3 --report "$work/$name.report.txt" \
			"$run" >"$work/$name.check" 2>&1
	fi
	cat "$work/$name.check"
	passed=$((passed + $(grep -c '^ok ' "$work/$name.check")))
	failed=$((failed + $(grep -c '^FAIL ' "$work/$name.check")))
	grep -q '^ok \|^FAIL ' "$work/$name.check" ||
		fail "$name: gpu-check printed no result: $(head -n 1 "$work/$name.check")"
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT/$name" &&
			cp "$run/trace.json" "$run/trace.perfetto-trace" "$OUT/$name/" 2>/dev/null
		cp "$work/$name.report.txt" "$OUT/$name/report.txt" 2>/dev/null
		cp "$work/$name.report.html" "$OUT/$name/report.html" 2>/dev/null
		cp "$work/$name.out" "$OUT/$name/program-output.txt" 2>/dev/null
		cp "$work/$name.err" "$OUT/$name/record-stderr.txt" 2>/dev/null
		cp "$work/$name.check" "$OUT/$name/checks.txt" 2>/dev/null
	fi
}

# check_mem NAME EXACT CMD...: record CMD (s-cuda-mem: its ledger on
# stdout) with memory.allocations and gpu.enabled, steps 1 to 3 of its
# function `step`, and check its CUDA memory with bin/mem-check (EXACT:
# --exact, the stand-in's CPU Mem has no allocator of CUDA's own in it).
check_mem() {
	name=$1 exact=$2
	shift 2
	run=$work/$name.run
	rm -rf "$run"
	# shellcheck disable=SC2086
	if $tmo "$SS" record --set step.function=step --set window.start_step=1 \
		--set window.end_step=4 --set gpu.enabled=true --set memory.allocations=true \
		-o "$run" -- "$@" >"$work/$name.out" 2>"$work/$name.err"; then
		ok "$name: record 3 steps with memory.allocations and gpu.enabled"
	else
		fail "$name: record: exit status $? (stderr in $work/$name.err)"
		tail_of "$work/$name.err"
		return
	fi
	if grep -q 'stepscope: \(gpu\|memory.allocations\):' "$work/$name.err"; then
		fail "$name: $(grep 'stepscope: \(gpu\|memory.allocations\):' "$work/$name.err" | head -n 1)"
	fi
	if "$SS" report --steps --format json "$run" >"$work/$name.report.json" 2>"$work/$name.sym" &&
	   "$SS" memory --leaks "$run" >"$work/$name.leaks.txt" 2>>"$work/$name.sym"; then
		ok "$name: report --steps --format json, memory --leaks"
	else
		fail "$name: report or memory --leaks failed"
		tail_of "$work/$name.sym"
	fi
	"$kit/bin/mem-check" --label "$name" $exact --ledger "$work/$name.out" \
		--report "$work/$name.report.json" --leaks "$work/$name.leaks.txt" \
		>"$work/$name.check" 2>&1
	cat "$work/$name.check"
	passed=$((passed + $(grep -c '^ok ' "$work/$name.check")))
	failed=$((failed + $(grep -c '^FAIL ' "$work/$name.check")))
	grep -q '^ok \|^FAIL ' "$work/$name.check" ||
		fail "$name: mem-check printed no result: $(head -n 1 "$work/$name.check")"
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT/$name" &&
			cp "$work/$name.report.json" "$OUT/$name/report.json" 2>/dev/null
		cp "$work/$name.leaks.txt" "$OUT/$name/leaks.txt" 2>/dev/null
		cp "$work/$name.out" "$OUT/$name/ledger.txt" 2>/dev/null
		cp "$work/$name.err" "$OUT/$name/record-stderr.txt" 2>/dev/null
		cp "$work/$name.check" "$OUT/$name/checks.txt" 2>/dev/null
	fi
}

echo "stepscope GPU proof kit: $kit ($( [ $dry = 1 ] && echo 'CPU dry run' || echo GPU)), work in $work"

if [ $dry = 1 ]; then
	echo "note: dry run: the stand-in CUDA runtime, CUPTI and NVML of tests/e2e, the" \
	     "prebuilt dry/bin/fake-train; cuda-mlp and cublas-train need nvcc and a GPU"
	PATH=$kit/dry/bin:$PATH
	STEPSCOPE_CUPTI_LIBRARY=$kit/dry/lib/libcudart.so
	STEPSCOPE_NVML_LIBRARY=$kit/dry/lib/libnvml-fake.so
	export PATH STEPSCOPE_CUPTI_LIBRARY STEPSCOPE_NVML_LIBRARY
	check_run fake-train 1 "$kit/dry/bin/fake-train" 6 3
	check_mem cuda-mem --exact "$kit/dry/bin/cuda-mem" 6 1
	echo "note: took $(($(date +%s) - started)) s"
	echo "$passed passed, $failed failed"
	[ $failed = 0 ]
	exit
fi

# ---------------------------------------------------------------- GPU
cuda=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
nvcc=${NVCC:-$(command -v nvcc 2>/dev/null || echo "$cuda/bin/nvcc")}
if [ -x "$nvcc" ] || command -v "$nvcc" >/dev/null 2>&1; then
	cuda=$(cd "$(dirname "$(command -v "$nvcc")")/.." && pwd)
	ok "nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*release \([^,]*\),.*/\1/p'))"
else
	fail "nvcc: not found (set NVCC or CUDA_HOME)"
fi
if command -v nvidia-smi >/dev/null 2>&1 &&
   gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader --id=0 2>&1); then
	ok "GPU 0: $gpu"
else
	fail "nvidia-smi: no GPU 0 (${gpu:-nvidia-smi not on PATH}); without a GPU, --cpu-dry-run checks the host side"
fi
if [ -z "${STEPSCOPE_CUPTI_LIBRARY:-}" ]; then
	for f in "$cuda/extras/CUPTI/lib64/libcupti.so" "$cuda/lib64/libcupti.so" \
		 "$cuda"/targets/*/lib/libcupti.so; do
		[ -e "$f" ] && { STEPSCOPE_CUPTI_LIBRARY=$f; break; }
	done
fi
if [ -n "${STEPSCOPE_CUPTI_LIBRARY:-}" ]; then
	export STEPSCOPE_CUPTI_LIBRARY
	ok "CUPTI: $STEPSCOPE_CUPTI_LIBRARY"
else
	fail "CUPTI: no libcupti.so under $cuda (set STEPSCOPE_CUPTI_LIBRARY)"
fi
LD_LIBRARY_PATH=$cuda/lib64:$(dirname "${STEPSCOPE_CUPTI_LIBRARY:-$cuda/lib64/x}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

# the linker looks for libstepscope's own libraries (libyaml) in the kit
rpl="-Xlinker -rpath-link -Xlinker $kit/lib"
mkdir -p "$work/cuda-mlp" && cp "$kit"/src/cuda-mlp/*.cu "$kit"/src/cuda-mlp/*.h "$work/cuda-mlp/"
if (cd "$work/cuda-mlp" && $tmo "$kit/bin/stepscope-cc" "$nvcc" -O2 -std=c++17 -I"$kit/src/common" $rpl -o train \
	train.cu data.cu model.cu kernels.cu) >"$work/cuda-mlp.build" 2>&1; then
	ok "cuda-mlp: built with stepscope-cc nvcc"
	check_run cuda-mlp 0 "$work/cuda-mlp/train" --steps 6 --eval-every 0 --log-every 1
	echo "note: cuda-mlp does not count its own launches: kernels and bytes per step" \
	     "and NVML are checked on cublas-train"
else
	fail "cuda-mlp: build failed (log in $work/cuda-mlp.build)"
	tail_of "$work/cuda-mlp.build"
fi
if $tmo "$kit/bin/stepscope-cc" "$nvcc" -O2 $rpl -o "$work/cublas-train" \
	"$kit/src/cublas-train/cublas-train.cu" -lcublas >"$work/cublas-train.build" 2>&1; then
	ok "cublas-train: built with stepscope-cc nvcc"
	check_run cublas-train 1 "$work/cublas-train" 6 3
else
	fail "cublas-train: build failed (log in $work/cublas-train.build)"
	tail_of "$work/cublas-train.build"
fi
# recorded CUDA allocations: s-cuda-mem against the toolkit's shared
# libcudart (a static one would hide the CUDA runtime from stepscope);
# its "device 1" is device 1 when there are two GPUs, else device 0
hostcc=${CC:-$(command -v cc || command -v gcc || echo cc)}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
dev1=0
[ "${ngpu:-0}" -ge 2 ] && dev1=1
if $tmo "$kit/bin/stepscope-cc" "$hostcc" -O2 -pthread -I"$cuda/include" -o "$work/cuda-mem" \
	"$kit/src/cuda-mem/s-cuda-mem.c" -L"$cuda/lib64" -lcudart -Wl,-rpath,"$cuda/lib64" \
	-Wl,-rpath-link,"$kit/lib" >"$work/cuda-mem.build" 2>&1; then
	ok "cuda-mem: built with stepscope-cc $hostcc against $cuda/lib64/libcudart.so"
	check_mem cuda-mem "" "$work/cuda-mem" 6 $dev1
	[ $dev1 = 0 ] && echo "note: one GPU: cuda-mem's device-1 calls ran on device 0"
else
	fail "cuda-mem: build failed (log in $work/cuda-mem.build)"
	tail_of "$work/cuda-mem.build"
fi
echo "note: took $(($(date +%s) - started)) s"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
