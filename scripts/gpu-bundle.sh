#!/bin/sh
# gpu-bundle.sh - write the GPU proof kit (`make gpu-bundle`): one tarball
# to copy onto a CUDA machine that has no Debian packages and no network,
# unpack anywhere and run `sh stepscope-gpu-kit/device-check.sh`.
#
# Usage: sh scripts/gpu-bundle.sh BUILD_DIR OUT.tar.gz   (from the tree's top)
#   CC=...   the C compiler (default gcc); patchelf must be installed
#            (scripts/deps.sh build)
#
# The kit (stepscope-gpu-kit/ in the tarball):
#   device-check.sh  the checks (tests/gpu/device-check.sh)
#   bin/             stepscope, stepscope-cc, gpu-check (tests/gpu/gpu-check.c),
#                    mem-check (tests/gpu/mem-check.c)
#   lib/             libstepscope, and every shared library these load that
#                    is not glibc's (libdw, libelf, libbfd, libyaml, libcjson,
#                    libunwind, what they pull in)
#   include/         stepscope.h
#   src/             examples/cuda-mlp (with examples/common),
#                    tests/gpu/cublas-train.cu and cuda-mem/ (the recorded
#                    CUDA allocations' fixture, tests/e2e/s-cuda-mem.c)
#   dry/             for --cpu-dry-run: the stand-in libcudart+CUPTI and
#                    NVML (tests/e2e), fake-train and cuda-mem built
#                    through stepscope-cc,
#                    a stand-in nvidia-smi
# Every ELF file gets an $ORIGIN-relative RUNPATH (bin/: ../lib, lib/: its
# own folder), so nothing is installed and no LD_LIBRARY_PATH is needed.
#
# Never: bundle glibc (the loader, libc, libm, ... must be the machine's
# own: libstepscope is loaded into programs linked against them), or leave
# a path of this machine in a RUNPATH.
set -eu

[ $# = 2 ] || { echo "usage: sh scripts/gpu-bundle.sh BUILD_DIR OUT.tar.gz" >&2; exit 2; }
b=$(cd "$1" && pwd)
out=$2
cc=${CC:-gcc}
max_mb=60

command -v patchelf >/dev/null 2>&1 ||
	{ echo "gpu-bundle: patchelf is not installed (as root: apt-get install patchelf)" >&2; exit 1; }

top=$b/gpu-bundle
kit=$top/stepscope-gpu-kit
rm -rf "$top"
mkdir -p "$kit/bin" "$kit/lib" "$kit/include" "$kit/src/cuda-mlp" "$kit/src/common" "$kit/src/cublas-train" \
	"$kit/src/cuda-mem" \
	"$kit/dry/bin" "$kit/dry/lib"

echo "  KIT     $kit"
cp "$b/bin/stepscope" "$b/bin/stepscope-cc" "$kit/bin/"
cp -P "$b"/lib/libstepscope.so* "$b"/lib/libstepscope-hooks.a "$kit/lib/"
cp instrument/stepscope.h "$kit/include/"
cp tests/gpu/device-check.sh "$kit/"
cp examples/cuda-mlp/*.cu examples/cuda-mlp/*.h examples/cuda-mlp/Makefile \
	examples/cuda-mlp/README.md "$kit/src/cuda-mlp/"
cp examples/common/* "$kit/src/common/"
cp tests/gpu/cublas-train.cu "$kit/src/cublas-train/"
cp tests/e2e/s-cuda-mem.c tests/e2e/fixture.h "$kit/src/cuda-mem/"
cp docs/cuda.md "$kit/README.md"

$cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$kit/bin/gpu-check" tests/gpu/gpu-check.c -lcjson
$cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$kit/bin/mem-check" tests/gpu/mem-check.c -lcjson

# the dry run's stand-ins; fake-train built as a user would, through the
# wrapper (its rpath into the build tree is replaced below)
$cc -shared -fPIC -O2 -Wall -Wextra -Werror -Wl,-soname,libcudart.so \
	-o "$kit/dry/lib/libcudart.so" tests/e2e/lib-cupti-fake.c
$cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$kit/dry/lib/libnvml-fake.so" \
	tests/e2e/lib-nvml-fake.c
"$b/bin/stepscope-cc" $cc -O2 -Wall -Wextra -Werror -o "$kit/dry/bin/fake-train" \
	tests/gpu/fake-train.c -L"$kit/dry/lib" -lcudart
"$b/bin/stepscope-cc" $cc -O2 -pthread -Wall -Wextra -Werror -o "$kit/dry/bin/cuda-mem" \
	tests/e2e/s-cuda-mem.c -L"$kit/dry/lib" -lcudart
# lib-nvml-fake's device 0 has 1 GiB in use
printf '#!/bin/sh\n# stand-in for nvidia-smi --query-gpu=memory.used: lib-nvml-fake says 1 GiB\necho 1024\n' \
	>"$kit/dry/bin/nvidia-smi"
chmod 755 "$kit/dry/bin/nvidia-smi" "$kit/device-check.sh"

# is_glibc NAME: part of the C library, always the machine's own
is_glibc() {
	case $1 in
	ld-linux*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|\
	libutil.so.*|libanl.so.*|libmvec.so.*|libnsl.so.*|linux-vdso.so.*|libBrokenLocale.so.*)
		return 0 ;;
	esac
	return 1
}

# what libstepscope dlopens itself (runtime/stack.c: record.stack); a
# dlopen from libstepscope searches its RUNPATH, so lib/ is found
for name in libunwind.so.8; do
	path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64|x86_64/ {print $NF; exit}')
	[ -n "$path" ] || path=$(ldconfig -p | awk -v n="$name" '$1 == n {print $NF; exit}')
	[ -n "$path" ] || { echo "gpu-bundle: $name is not installed (libunwind-dev)" >&2; exit 1; }
	cp -L "$path" "$kit/lib/$name"
done

elfs="$kit/lib/libunwind.so.8 $kit/bin/stepscope $kit/bin/gpu-check $kit/bin/mem-check
	$kit/lib/libstepscope.so.0 $kit/dry/bin/fake-train $kit/dry/bin/cuda-mem
	$kit/dry/lib/libcudart.so $kit/dry/lib/libnvml-fake.so"
for f in $elfs; do
	ldd "$f" | while read -r name arrow path rest; do
		[ "$arrow" = "=>" ] || continue
		is_glibc "$name" && continue
		[ -e "$kit/lib/$name" ] || [ -e "$kit/dry/lib/$name" ] && continue
		case $path in
		/*) cp -L "$path" "$kit/lib/$name" ;;
		*) echo "gpu-bundle: $f needs $name, which is not found here" >&2; exit 1 ;;
		esac
	done
done

for f in "$kit"/bin/stepscope "$kit"/bin/gpu-check "$kit"/bin/mem-check; do
	patchelf --set-rpath '$ORIGIN/../lib' "$f"
done
for f in "$kit"/lib/*.so*; do
	[ -L "$f" ] || patchelf --set-rpath '$ORIGIN' "$f"
done
for f in "$kit/dry/bin/fake-train" "$kit/dry/bin/cuda-mem"; do
	patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../../lib' "$f"
done
for f in "$kit"/dry/lib/*.so; do
	patchelf --set-rpath '$ORIGIN/../../lib' "$f"
done

# nothing of this machine's paths left in a RUNPATH
for f in "$kit"/bin/* "$kit"/lib/* "$kit"/dry/bin/* "$kit"/dry/lib/*; do
	[ -L "$f" ] && continue
	r=$(patchelf --print-rpath "$f" 2>/dev/null) || continue
	case $r in
	*/*) case $r in \$ORIGIN*) ;; *) echo "gpu-bundle: $f: RUNPATH $r" >&2; exit 1 ;; esac ;;
	esac
done

rm -f "$out"
tar -C "$top" -czf "$out" stepscope-gpu-kit
size=$(wc -c <"$out")
if [ "$size" -gt $((max_mb * 1024 * 1024)) ]; then
	echo "gpu-bundle: $out is $((size / 1024 / 1024)) MiB, over the ${max_mb} MiB limit" >&2
	exit 1
fi
echo "  TAR     $out ($((size / 1024)) KiB; $(ls "$kit/lib" | wc -l) files in lib/)"
