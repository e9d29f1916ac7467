#!/bin/sh
# bodies.sh — rigid bodies and joints at scale: a 100-element rfem cantilever (steel, 1 m)
# sagging under gravity, and a 100-link hinged chain (each link a 1 cm box on a revolute joint)
# falling from the horizontal; 200 steps of implicit Euler at 1 ms each. Prints srdc's summary:
# time per step and per Newton iteration, and which solver the DOF count chose.
set -e
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/rfem100.srd" <<'SRD'
material steel { E = 200 GPa; rho = 7800 kg/m^3; nu = 0.3; }
gravity = (0, 0, -9.81) m/s^2;
rfem arm { path = line((0, 0, 0) m, (1, 0, 0) m); elements = 100; radius = 5 mm; material = steel; }
joint base { type = fixed; a = world; b = arm[0]; at = (0, 0, 0) m; }
simulate { method = implicit_euler; dt = 1 ms; duration = 0.2 s; }
SRD
${SRD_PYTHON:-python3} - "$out/hinged100.srd" <<'PY'
import sys
lines = ["gravity = (0, 0, -9.81) m/s^2;"]
for i in range(100):
    lines.append(f"body link{i} {{ position = ({(i + 0.5) * 0.01}, 0, 0) m; shape = box; size = (1 cm, 2 mm, 2 mm); "
                 "density = 1000 kg/m^3; }")
lines.append("joint j0 { type = revolute; a = world; b = link0; at = (0, 0, 0) m; axis = (0, 1, 0); }")
for i in range(1, 100):
    lines.append(f"joint j{i} {{ type = revolute; a = link{i - 1}; b = link{i}; at = ({i * 0.01}, 0, 0) m; "
                 "axis = (0, 1, 0); }")
lines.append("simulate { method = implicit_euler; dt = 1 ms; duration = 0.2 s; }")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
for model in rfem100 hinged100; do
    echo "== $model"
    ./build/srdc run "$out/$model.srd" --out "$out/o_$model" | grep -E "simulated|linear solver|DOFs" || true
done
