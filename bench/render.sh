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

# A 100,000-node lattice (101,871 nodes, 866,670 springs drawn as lines): two explicit steps of a
# 230 x 20 x 20 mm block at 1 mm spacing, binary frames of 56 MB each. Only with `render.sh big`.
[ "$1" = big ] || exit 0
cat > "$out/block.srd" <<'SRD'
material soft { E = 1 MPa; nu = 0.25; rho = 1000 kg/m^3; }
lattice block { shape = box((230 mm, 20 mm, 20 mm)); spacing = 1 mm; material = soft; }
fix block.nodes where x == 0;
gravity = (0, 0, -9.81) m/s^2;
simulate { method = euler; dt = 1 us; duration = 2 us; output vtk "block" binary every 1 us; }
SRD
./build/srdc run "$out/block.srd" --out "$out/big" --quiet
for size in 960x640 16x16; do
    start=$(date +%s.%N)
    ./build/srdc render "$out/big" --frame all --size $size -o "$out/big/f" > /dev/null
    end=$(date +%s.%N)
    echo "lattice, 101,871 nodes, $size: $(printf '%.2f' "$(echo "($end - $start) / 3" | bc -l)") s per frame"
done
