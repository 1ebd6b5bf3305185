#!/bin/sh
# Builds the native job wrapper (jobwrap.c) into the agent's classes, where the agent installs it from (NativeWrapper).
# Usage: build.sh SOURCE OUTPUT. Statically linked where the C library allows (no dynamic loader in a program that runs
# as root; one exec cheaper), else dynamically; with musl where musl-gcc is installed (its static program is a tenth of
# glibc's and starts with a third of the page faults: docs/benchmarks.md), else with the system's C library. Without a
# working C compiler (none, or no C library headers) it builds nothing and says why: the agent then runs jobs in its
# shell wrapper and says so at start. CC chooses the system compiler (default cc), MUSL_CC musl's (default musl-gcc;
# set it empty to build with CC only). CI sets GPUPOOL_CI, and the agent's tests then fail where the native wrapper is
# missing.
set -eu
src=$1
out=$2
cc=${CC:-cc}
musl=${MUSL_CC-musl-gcc}
note() { echo "gpupool: $1: the agent will run jobs in its shell wrapper (apt-get install gcc libc6-dev builds the native one)" >&2; }
if ! command -v "$cc" > /dev/null 2>&1; then
    note "no C compiler ($cc)"
    rm -f "$out"
    exit 0
fi
if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$0" ]; then exit 0; fi
mkdir -p "$(dirname "$out")"
flags="-O2 -Wall -Wextra -std=gnu11"
if [ -n "$musl" ] && command -v "$musl" > /dev/null 2>&1; then
    if why=$("$musl" $flags -static -o "$out" "$src" 2>&1); then exit 0; fi
    echo "gpupool: $musl could not build $src ($(echo "$why" | head -2 | tr '\n' ' ')); building it with $cc" >&2
fi
if ! "$cc" $flags -static -o "$out" "$src" 2> /dev/null && ! "$cc" $flags -o "$out" "$src"; then
    note "$cc could not build $src"
    rm -f "$out"
fi
