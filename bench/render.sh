#!/bin/sh
# render.sh — time per frame of `srdc render` (reading the frame, projecting, sorting and
# drawing with Cairo, writing the PNG) on the parachute's 3 s run (61 frames). Prints seconds
# per frame at 960 x 640 for three runs.
set -e
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./build/srdc run examples/parachute.srd --out "$out" --quiet
frames=$(ls "$out"/parachute_*.vtu | wc -l)
for i in 1 2 3; do
    start=$(date +%s.%N)
    ./build/srdc render "$out" --frame all -o "$out/f" > /dev/null
    end=$(date +%s.%N)
    t=$(echo "($end - $start) / $frames" | bc -l)
    echo "run $i: $frames frames, $(printf '%.4f' "$t") s per frame"
done
