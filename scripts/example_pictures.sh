#!/bin/sh
# example_pictures.sh — draws the small picture of every example that examples/README.md shows
# (examples/pictures/NAME.png, 320 x 240) at its characteristic moment. Needs build/srdc.
set -e
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p examples/pictures
cp -r examples/data "$out/" # models rewritten into $out read their data files from there
# NAME  DURATION (run this long; - for the file's own)  TIME (the moment; - for the last frame)  FIELD (- for object colours)
while read -r name duration time field; do
    [ -z "$name" ] && continue
    model="examples/$name.srd"
    if ! grep -q 'output vtk' "$model"; then # an example that writes CSV frames: the same as VTK
        sed 's/output csv/output vtk/' "$model" > "$out/$name.srd"
        model="$out/$name.srd"
    fi
    set -- ./build/srdc run "$model" --out "$out/$name" --quiet
    [ "$duration" != - ] && set -- "$@" --duration "$duration"
    "$@"
    set -- ./build/srdc render "$out/$name" --size 320x240 -o "examples/pictures/$name.png"
    [ "$time" != - ] && set -- "$@" --time "$time"
    [ "$field" != - ] && set -- "$@" --color "$field"
    "$@"
done <<'LIST'
balloon - - displacement
cantilever_rod - - displacement
cantilever_shell_hinge - - displacement
cantilever_shell_midedge - - displacement
earthworm 5 5 -
finger_press - - -
gripper - - -
jumper 0.25 0.25 velocity
knot - 2.5 curvature
quadruped_walker 0.5 0.5 -
lattice_walker 0.5 0.5 displacement
manta_ray 1.3 1.3 velocity
parachute 1 1 velocity
ply - - -
pneunet - - curvature
rod_drop 0.5 0.5 velocity
rope_coil - - -
snake 5 5 -
star_roller 1.3 1.3 curvature
thermal_bimorph - - displacement
tripod - - displacement
LIST
