#!/bin/sh
# deps.sh - make sure the Debian packages of one set are installed.  As root
# it installs what is missing with apt-get; otherwise it names what is
# missing in one line.  Exits 0 only when every package of the set is there.
#
# Usage: sh scripts/deps.sh SET...
#   make    make itself (scripts/setup.sh asks for it before running make)
#   build   what `make` and `make demo` need: the compiler and the libraries
#   test    build, plus every tool a test uses, so the same tests run on
#           every machine (only the CUDA/GPU tests skip where there is none)
#   bench   build, plus the tools `make bench` compares with
#
# The Makefile keeps a stamp per set (build/.deps-build, build/.deps-test)
# that depends on this file: editing a list below re-runs the check.
#
#   SS_DEPS_EXTRA="pkg ..."   ask for more packages as well
#   SS_DEPS_LOG=FILE          where apt-get's output goes (default: a temp file)
set -u

make_pkgs="make"
# patchelf: `make gpu-bundle` gives the kit's binaries $ORIGIN rpaths
build_pkgs="make gcc libc6-dev libdw-dev libelf-dev binutils-dev libcjson-dev libyaml-dev
	libunwind-dev pkg-config patchelf"
# g++: the C++ fixtures (test-names, test-rt-cxx); clang, libomp-dev: the
# clang variants, -fopenmp with clang; protobuf-compiler: the Perfetto
# decoding tests; chromium: test-html renders the report (zlib1g-dev: it
# reads the screenshot); cmake: test-cc; openmpi-bin, libopenmpi-dev:
# test-mpi and libstepscope-mpi; strace: test-shared counts the system
# calls of a recording; hyperfine, uftrace, time: test-bench runs `make
# bench` once at its smallest sizes; nodejs, npm: test-export checks the
# speedscope output with node, on the npm modules make installs
# (tests/lib/npm); gdb: test-args-gdb compares record.args with gdb's
# `info args`
bench_pkgs="$build_pkgs hyperfine uftrace time"
test_pkgs="$build_pkgs libcmocka-dev g++ clang libomp-dev protobuf-compiler chromium
	zlib1g-dev cmake openmpi-bin libopenmpi-dev strace nodejs npm gdb $bench_pkgs"
# installed after the others, if still missing then: nodesource's nodejs
# (a machine with its apt source) provides npm and conflicts with Debian's
late_pkgs="npm"

[ $# -gt 0 ] || set -- build
pkgs=
for set do
	case $set in
	make) pkgs="$pkgs $make_pkgs" ;;
	build) pkgs="$pkgs $build_pkgs" ;;
	test) pkgs="$pkgs $test_pkgs" ;;
	bench) pkgs="$pkgs $bench_pkgs" ;;
	*) echo "deps.sh: unknown package set '$set' (make, build, test or bench)" >&2; exit 2 ;;
	esac
done
pkgs="$pkgs ${SS_DEPS_EXTRA:-}"

# missing: the packages of $pkgs that dpkg lists neither as installed nor
# as provided by an installed package (as apt takes a dependency: npm is
# there with nodesource's nodejs)
missing() {
	m=
	prov=" $(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' 2>/dev/null |
		sed -n 's/^ii *|//p' | tr ',' '\n' | sed 's/^ *//; s/ .*//' | tr '\n' ' ') "
	for p in $pkgs; do
		case " $m " in *" $p "*) continue ;; esac
		case "$prov" in *" $p "*) continue ;; esac
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			m="$m $p"
	done
	echo "$m"
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "stepscope: no dpkg here, cannot check for the Debian packages:" $pkgs >&2
	exit 1
fi
need=$(missing)
[ -z "$need" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "stepscope: missing Debian packages:$need (as root: apt-get install$need)" >&2
	exit 1
fi

echo "  DEPS    installing:$need"
log=${SS_DEPS_LOG:-}
[ -n "$log" ] || log=$(mktemp "${TMPDIR:-/tmp}/stepscope-deps.XXXXXX")
export DEBIAN_FRONTEND=noninteractive
first= late=
for p in $need; do
	case " $late_pkgs " in *" $p "*) late="$late $p" ;; *) first="$first $p" ;; esac
done
{
	apt-get update && { [ -z "$first" ] || apt-get install -y --no-install-recommends $first; } &&
	{ [ -z "$late" ] || { late=$(missing) && [ -z "$late" ]; } ||
		apt-get install -y --no-install-recommends $late; }
} </dev/null >"$log" 2>&1
rc=$?
left=$(missing)
if [ $rc != 0 ] || [ -n "$left" ]; then
	why=$(grep -E '^(E|Err):' "$log" | head -n 1)
	echo "stepscope: apt-get could not install:${left:-$need} (${why:-exit status $rc}; full output in $log)" >&2
	exit 1
fi
[ -n "${SS_DEPS_LOG:-}" ] || rm -f "$log"
exit 0
