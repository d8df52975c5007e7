#!/bin/sh
# setup.sh - the first command on a fresh machine: makes sure `make` is
# installed (as root it installs it; a minimal Debian has none), then runs
# the command given, `make` by default.  `make` itself then installs the
# compiler and the libraries it builds with (scripts/deps.sh build), and
# `make test` every tool the tests use (scripts/deps.sh test).
#
# Usage: sh scripts/setup.sh [COMMAND...]     e.g. sh scripts/setup.sh make test
cd "$(dirname "$0")/.." || exit 1
command -v make >/dev/null 2>&1 || sh scripts/deps.sh make || exit 1
[ $# -gt 0 ] || set -- make
exec "$@"
