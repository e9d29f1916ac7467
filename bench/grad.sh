#!/bin/sh
# grad.sh — what `srdc grad` costs against the forward static solve (bench/README.md,
# "Sensitivities"): tests/physics/grad/arm.srd (five params) at 25, 500 and 2,000 nodes; grad's
# last line times its own static solve and the derivatives after it.
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
    printf '%6d nodes: static run %.3f s (srdc run, output written); srdc grad: ' "$n" "$forward"
    "$build/srdc" grad "$work/arm.srd" | grep '^cost:' | sed 's/^cost: //'
done
