#!/bin/sh
# build.sh DIR [cmake options...] — configures (once) and builds srd in DIR; the build log goes
# to DIR/build.log and is shown only when something fails.
set -e
dir=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
if [ ! -f "$dir/build.ninja" ]; then
    if ! cmake -S "$top" -B "$dir" -G Ninja "$@" > "$dir/configure.log" 2>&1; then
        cat "$dir/configure.log"
        exit 1
    fi
fi
if ! ninja -C "$dir" > "$dir/build.log" 2>&1; then
    cat "$dir/build.log"
    exit 1
fi
