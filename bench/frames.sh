#!/bin/sh
# frames.sh [BUILD_DIR] [FRAMES] — what writing many frames costs: a two-node oscillator written
# every step for FRAMES steps (default 40,000) as text VTK, binary VTK and CSV; prints the
# run's user, system and wall time and the bytes of the .pvd. Prints figures; asserts nothing.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
frames=${2:-40000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
for output in 'vtk "f"' 'vtk "f" binary' 'csv "f"'; do
    cat > "$work/frames.srd" <<SRD
use std.springs;
body anchor { position = (0, 0, 0) m; mass = 1 g; }
body bob { position = (0.12, 0, 0) m; mass = 0.5 kg; }
fix anchor.node;
apply spring(anchor.node, bob.node; k = 20 N/m, l0 = 0.1 m);
simulate { method = implicit_euler; dt = 0.1 ms; duration = $frames * 0.1 ms; output $output every 0.1 ms; }
SRD
    rm -rf "$work/out"
    /usr/bin/time -f "%U %S %e" -o "$work/time" "$build/srdc" run "$work/frames.srd" --out "$work/out" --quiet
    read -r user sys wall < "$work/time"
    pvd=$(stat -c %s "$work/out/f.pvd" 2>/dev/null || echo 0)
    printf "  output %-16s %6d frames: user %5.2f s, system %5.2f s, wall %6.2f s; .pvd %d bytes\n" \
        "$output" "$frames" "$user" "$sys" "$wall" "$pvd"
done
