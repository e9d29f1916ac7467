#!/bin/sh
# grad.sh — what `srdc grad` costs against the forward static solve (bench/README.md,
# "Sensitivities"): tests/physics/grad/arm.srd (five params) at 25, 500 and 2,000 nodes.
#   sh bench/grad.sh [build dir]
set -e
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { start=$(date +%s.%N); "$@" > /dev/null; end=$(date +%s.%N); echo "$end - $start" | bc; }
for n in 25 500 2000; do
    sed "s/nodes = 25;/nodes = $n;/; s/arm.node(12)/arm.node($((n / 2)))/; s/arm.edge(23)/arm.edge($((n - 2)))/" \
        tests/physics/grad/arm.srd > "$work/arm.srd"
    "$build/srdc" run "$work/arm.srd" --out "$work/out" --quiet   # warms the kernel cache
    forward=$(seconds "$build/srdc" run "$work/arm.srd" --out "$work/out" --quiet)
    grad=$(seconds "$build/srdc" grad "$work/arm.srd")
    printf '%6d nodes: static run %.3f s; srdc grad (the same solve, then 5 params) %.3f s: %.1f ms per param\n' \
        "$n" "$forward" "$grad" "$(echo "($grad - $forward) * 1000 / 5" | bc -l)"
done
