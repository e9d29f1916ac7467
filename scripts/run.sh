#!/bin/sh
# run.sh — the main job: installs what is missing, builds srd, and runs the default example:
# a cantilever sagging under its own weight (MAT-DiSMech's validation case), writing VTK
# frames for ParaView and the tip deflection, and ending with a picture of it.
set -e
cd "$(dirname "$0")/.."
sh scripts/setup.sh
sh scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
./build/srdc dump examples/cantilever_rod.srd
./build/srdc dump --kernels examples/cantilever_rod.srd | sed -n '/^kernels/,$p'
./build/srdc run examples/cantilever_rod.srd --out out/cantilever_rod
echo "tip deflection (m):"
cat out/cantilever_rod/static_probes.csv
echo "frames: out/cantilever_rod/*.vtu, series out/cantilever_rod/cantilever_rod.pvd (open it in ParaView)"
./build/srdc render out/cantilever_rod --color displacement -o out/cantilever_rod/cantilever_rod.png
echo "picture: out/cantilever_rod/cantilever_rod.png"
