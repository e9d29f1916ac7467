#!/bin/sh
# grad_dynamic.sh — what a simulation's gradient costs against the simulation (bench/README.md,
# "Sensitivities of simulations"): tests/physics/grad/swing.srd run for 1,000 steps (2 s at 2 ms,
# implicit Euler) with one probe (the tip's height, so one adjoint pass is the gradient of one
# objective with respect to all four params) at 12, 60 and 240 nodes: the adjoint with every
# record kept, the adjoint recomputing segments from checkpoints (memory bounded by
# SRD_GRAD_MEMORY), and forward sensitivities (one pass for the four params); then both with
# stiffness-proportional damping (beta = 1 ms); then tests/physics/grad/controlled.srd (a PID
# control block sampling every 5 ms) for 1,000 steps, its tip's height; and the same controller
# reading the clamp's reaction too (force feedback: the reaction is a probe, so the adjoint runs
# seven passes, the tip's height and the reaction's six values); then rigid bodies and joints:
# examples/rigid_gripper.srd (2,000 steps: a palm on a prismatic joint, two fingers welded to it,
# a box they press, contact and friction), its box's height, and examples/appendage_base.srd (3,000
# steps: a rod on a motor-driven base, a welded sensor, its two params), the sensor's y, with and
# without its stiffness-proportional damping; then an explicit run (below). The times are srdc grad's own (its "cost:" line):
# the recorded run, and the pass after it.
#   sh bench/grad_dynamic.sh [build dir]
set -e
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in 12 60 240; do
    sed -e "s/nodes = 12;/nodes = $n;/" -e "s/duration = 0.1 s;/duration = 2 s;/" \
        -e "s/probe tip = arm.end;/probe tip_z = arm.end.z;/" -e "/probe tw/d" -e "/probe R =/d" tests/physics/grad/swing.srd > "$work/swing.srd"
    "$build/srdc" grad "$work/swing.srd" > /dev/null   # warms the kernel cache
    kept=$("$build/srdc" grad "$work/swing.srd" --adjoint | grep '^cost:')
    bounded=$(SRD_GRAD_MEMORY=4e6 "$build/srdc" grad "$work/swing.srd" --adjoint | grep '^cost:')
    forward=$("$build/srdc" grad "$work/swing.srd" | grep '^cost:')
    sed -e "s/gravity =/damping { beta = 1 ms; }\ngravity =/" "$work/swing.srd" > "$work/beta.srd"
    "$build/srdc" grad "$work/beta.srd" > /dev/null
    beta_adjoint=$("$build/srdc" grad "$work/beta.srd" --adjoint | grep '^cost:')
    beta_forward=$("$build/srdc" grad "$work/beta.srd" | grep '^cost:')
    printf '%4d nodes\n  adjoint, records kept:    %s\n  adjoint, 4 MB allowed:     %s\n  forward, four params:      %s\n' \
        "$n" "$kept" "$bounded" "$forward"
    printf '  with beta damping, adjoint: %s\n  with beta damping, forward: %s\n' "$beta_adjoint" "$beta_forward"
done
sed -e "s/METHOD/implicit_euler/" -e "s/duration = 0.1 s;/duration = 1 s;/" -e "s/probe tip = arm.end;/probe tip_z = arm.end.z;/" \
    -e "/probe R =/d" -e "s/tip\.z/tip_z/" tests/physics/grad/controlled.srd > "$work/controlled.srd"
"$build/srdc" grad "$work/controlled.srd" > /dev/null
printf 'a control block, 1,000 steps\n  adjoint, records kept:    %s\n  forward, six params:       %s\n' \
    "$("$build/srdc" grad "$work/controlled.srd" --adjoint | grep '^cost:')" \
    "$("$build/srdc" grad "$work/controlled.srd" | grep '^cost:')"
sed -e "s/METHOD/implicit_euler/" -e "s/duration = 0.1 s;/duration = 1 s;/" -e "s/probe tip = arm.end;/probe tip_z = arm.end.z;/" \
    -e "s/tip\.z;/tip_z + R.z * 1 m \/ 1 kN;/" tests/physics/grad/controlled.srd > "$work/feedback.srd"
"$build/srdc" grad "$work/feedback.srd" > /dev/null
printf 'force feedback, 1,000 steps\n  adjoint, seven passes:    %s\n  forward, six params:       %s\n' \
    "$("$build/srdc" grad "$work/feedback.srd" --adjoint | grep '^cost:')" \
    "$("$build/srdc" grad "$work/feedback.srd" | grep '^cost:')"
sed -e '/probe palm_z/d' -e '/probe left_tip/d' -e '/probe right_tip/d' -e '/probe lift/d' -e '/output vtk/d' \
    -e 's/probe box = cargo.node every 10 ms;/probe box_z = cargo.node.z;/' examples/rigid_gripper.srd > "$work/gripper.srd"
"$build/srdc" grad "$work/gripper.srd" > /dev/null
printf 'rigid bodies and joints: the gripper, 2,000 steps\n  adjoint, records kept:    %s\n  forward, one param:        %s\n' \
    "$("$build/srdc" grad "$work/gripper.srd" --adjoint | grep '^cost:')" \
    "$("$build/srdc" grad "$work/gripper.srd" | grep '^cost:')"
sed -e '/probe end/d' -e '/probe torque/d' -e '/output vtk/d' -e 's/probe tip = sensor.node every 5 ms;/probe tip_y = sensor.node.y;/' \
    -e 's/^let E_tube = 205 kPa;/param E_tube = 205 kPa in 100 kPa..400 kPa;/' examples/appendage_base.srd > "$work/appendage.srd"
sed '/^damping { beta/d' "$work/appendage.srd" > "$work/appendage_undamped.srd"
for model in appendage appendage_undamped; do
    "$build/srdc" grad "$work/$model.srd" > /dev/null
    printf '%s, 3,000 steps\n  adjoint, records kept:    %s\n  forward, two params:       %s\n' "$model" \
        "$("$build/srdc" grad "$work/$model.srd" --adjoint | grep '^cost:')" \
        "$("$build/srdc" grad "$work/$model.srd" | grep '^cost:')"
done
# Explicit methods: the lattice slab of tests/physics/grad/explicit.srd (landing on frictional
# ground, pushed and actuated; five params) for 1,000 Verlet and RK4 steps, its corner's x.
for method in verlet rk4; do
    sed -e "s/METHOD/$method/" -e "s/probe corner = \(.*\);/probe corner_x = (\1).x;/" -e "/probe top/d" \
        tests/physics/grad/explicit.srd > "$work/slab_$method.srd"
    "$build/srdc" grad "$work/slab_$method.srd" > /dev/null
    printf 'explicit: the slab, 1,000 steps of %s\n  adjoint, records kept:    %s\n  forward, five params:      %s\n' "$method" \
        "$("$build/srdc" grad "$work/slab_$method.srd" --adjoint | grep '^cost:')" \
        "$("$build/srdc" grad "$work/slab_$method.srd" | grep '^cost:')"
done
