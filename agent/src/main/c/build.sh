#!/bin/sh
# Builds the native job wrapper (jobwrap.c) into the agent's classes, where the agent installs it from (NativeWrapper).
# Usage: build.sh SOURCE OUTPUT. Statically linked where the C library allows (no dynamic loader in a program that runs
# as root; one exec cheaper), else dynamically. Without a C compiler it builds nothing and says so: the agent then
# runs jobs in its shell wrapper. CC chooses the compiler (default cc).
set -eu
src=$1
out=$2
cc=${CC:-cc}
if ! command -v "$cc" > /dev/null 2>&1; then
    echo "gpupool: no C compiler ($cc): the agent will run jobs in its shell wrapper (apt-get install gcc libc6-dev builds the native one)" >&2
    rm -f "$out"
    exit 0
fi
if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$0" ]; then exit 0; fi
mkdir -p "$(dirname "$out")"
flags="-O2 -Wall -Wextra -Werror -std=gnu11"
if ! "$cc" $flags -static -o "$out" "$src" 2> /dev/null; then
    "$cc" $flags -o "$out" "$src"
fi
