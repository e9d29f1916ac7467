#!/bin/sh
# first_step.sh [BUILD_DIR] [RUNS] — time from launching `srdc run` to its first kernel call (the
# first step's assembly) with an empty kernel cache, per example, for each $SRD_JIT mode:
# "wait" compiles every kernel before the first step (srd before tiered kernels), "tiered"
# starts in the interpreter and swaps scalar, then vector compiled kernels in from a helper
# thread. Prints the
# best of RUNS (default 5) runs of: when the kernels were callable (parse, elaborate, lower,
# differentiate, build the interpreter programs: the floor with no code generation), the first
# kernel call, when scalar and vector compiled kernels took over ("-": the run ended first), and
# the whole run's wall time. Asserts nothing.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1 SRD_TIMING=1
# A short run of each example: the first step does not depend on the duration.
examples="cantilever_rod:0 pneunet:0 tripod:0 earthworm:0.1 snake:0.1 rod_drop:0.01 gripper:0.2 jumper:0.02 \
star_roller:0.02 parachute:0.02"
best() { sort -n | head -1; }
printf "%-16s %-7s %9s %11s %10s %10s %9s\n" example mode callable "first call" scalar vector "wall"
for spec in $examples; do
    name=${spec%%:*}
    dur=${spec#*:}
    for mode in wait tiered; do
        : > "$work/times"
        i=0
        while [ $i -lt "$runs" ]; do
            rm -rf "$work/cache" "$work/out"
            set -- run "$top/examples/$name.srd" --out "$work/out" --quiet
            [ "$dur" = 0 ] || set -- "$@" --duration "$dur"
            t0=$(date +%s%N)
            SRD_CACHE="$work/cache" SRD_JIT=$mode SRD_LAUNCH_NS=$t0 "$build/srdc" "$@" 2> "$work/err" > /dev/null
            wall=$(( ($(date +%s%N) - t0) / 1000 ))
            line=$(grep "srdc: timing" "$work/err")
            callable=$(echo "$line" | sed 's/.*callable \([0-9.]*\) ms.*/\1/')
            first=$(echo "$line" | sed 's/.*first kernel call \([0-9.]*\) ms.*/\1/')
            scalar=$(echo "$line" | sed -n 's/.*scalar kernels from \([0-9.]*\) ms.*/\1/p')
            vector=$(echo "$line" | sed -n 's/.*vector kernels from \([0-9.]*\) ms.*/\1/p')
            echo "$first $callable ${scalar:-99999} ${vector:-99999} $wall" >> "$work/times"
            i=$((i + 1))
        done
        # best of the runs by first call; the other columns are their own minima
        first=$(cut -d' ' -f1 "$work/times" | best)
        callable=$(cut -d' ' -f2 "$work/times" | best)
        scalar=$(cut -d' ' -f3 "$work/times" | best | sed 's/^99999$/-/')
        vector=$(cut -d' ' -f4 "$work/times" | best | sed 's/^99999$/-/')
        wall=$(cut -d' ' -f5 "$work/times" | best)
        printf "%-16s %-7s %6s ms %8s ms %7s ms %7s ms %6d ms\n" "$name" "$mode" "$callable" "$first" "$scalar" \
            "$vector" $((wall / 1000))
    done
done
