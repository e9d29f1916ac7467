#!/bin/sh
# build_times.sh [BUILD_DIR] — how long `srdc build` takes for every example (compile, AOT
# object, link), and the time per step of a built simulator against `srdc run` on two
# dynamic examples. Prints figures; asserts nothing.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
echo "srdc build, wall time per example (best of 2):"
for f in "$top"/examples/*.srd; do
    name=$(basename "$f" .srd)
    best=""
    for i in 1 2; do
        t0=$(date +%s%N)
        "$build/srdc" build "$f" -o "$work/$name" --quiet
        t=$(( ($(date +%s%N) - t0) / 1000000 ))
        if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
    done
    size=$(stat -c %s "$work/$name")
    printf "  %-26s %5d ms  %6d kB\n" "$name" "$best" $((size / 1024))
done
echo "time per step, srdc run (JIT) against the built simulator:"
for spec in "star_roller 0.5" "parachute 0.2" "snake 0.5"; do
    set -- $spec
    a=$("$build/srdc" run "$top/examples/$1.srd" --duration "$2" --out "$work/run" | grep simulated)
    b=$("$work/$1" --duration "$2" --out "$work/exe" | grep simulated)
    printf "  %-12s run:   %s\n  %-12s built: %s\n" "$1" "$a" "" "$b"
done
