#!/bin/sh
# deps.sh - make sure the Debian packages stepscope builds and tests with are
# present.  As root, installs what is missing; otherwise names it in one line.
pkgs="gcc make libdw-dev libelf-dev binutils-dev libcjson-dev libyaml-dev libcmocka-dev libunwind-dev pkg-config cmake"
[ -n "$SS_DEPS_EXTRA" ] && pkgs="$pkgs $SS_DEPS_EXTRA"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "  DEPS    installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null &&
		apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ echo "stepscope: could not install:$missing (apt-get failed)" >&2; exit 1; }
	exit 0
fi
echo "stepscope: missing Debian packages:$missing (run: sudo apt-get install$missing)" >&2
exit 1
