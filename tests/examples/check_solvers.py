#!/usr/bin/env python3
"""check_solvers.py SRDC EXAMPLES_DIR — every example gives the same results with every solver.

For each examples/*.srd, `srdc run --solver sparse` (CHOLMOD or UMFPACK) and `--solver banded`
(LAPACK; not for models with contact between their parts, which refuse it) run the model (simulations cut to a few steps, static and modal analyses whole), and
every output (probes, energies, modes, the last VTK frame) must agree to 1e-10 relative: the
solvers differ in rounding only, and Newton ends at the same iterate to that precision. The
smaller models (under 3,000 free DOFs) are also run `--solver dense`. Each sparse run's summary
must name the sparse solver it used.

Relative to what: a value that is zero in exact arithmetic (the x of a probe on a plane of
symmetry, 1e-18 m; the Newton residual a frame's `force` array holds, 1e-13 N; the twist of a
planar rod) is rounding noise in every solver and has no scale of its own. So each CSV column
is measured against the largest value in its file (probes of one file are of one kind: positions,
or energies), each frame's `reaction` and `contact_force` against the largest force in the
frame, dimensionless arrays (`strain`, `twist` in radians) against 1, and every other block
against its own largest value. The `force` array (the net force on each node: in a static frame
the Newton residual itself, in a dynamic one M a) is only determined to the Newton tolerance:
it must agree to 2 x tolerance (both runs are within tolerance of the solution) times the
largest force in the frame.

Prints one `ok - ...` / `not ok - ...` line per check; exits 1 on a failure.
"""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, examples_chosen, finish, scratch  # noqa: E402
from check_built import csv_columns, same_units, vtk_arrays  # noqa: E402
from vtk_frame import frame_arrays  # noqa: E402

RTOL = 1e-10
STEPS = 4
DENSE_MAX_DOFS = 3000


def worst(a, b, floor):
    """Largest |a - b| relative to max(floor, the largest |value| of a and b)."""
    if len(a) != len(b):
        return float("inf")
    scale = max([abs(x) for x in a + b] + [floor, 1e-300])
    return max([abs(x - y) / scale for x, y in zip(a, b)] + [0.0])


def csv_worst(a, b):
    ca, cb = csv_columns(a), csv_columns(b)
    if len(ca) != len(cb):
        return float("inf")
    floor = max([abs(v) for col in ca[1:] for v in col] + [0.0])
    return max([worst(list(x), list(y), floor) for x, y in zip(ca, cb)] + [0.0])


FORCES = ("force", "reaction", "contact_force")


def frame_worst(a, b, tolerance):
    """The worst difference over the frame's arrays; the net force's is scaled so that 2 x
    tolerance maps to RTOL."""
    fa, fb = frame_arrays(a), frame_arrays(b)
    if [n for n, _ in fa] != [n for n, _ in fb]:
        return float("inf")
    forces = max([abs(v) for n, vals in fa + fb if n in FORCES for v in vals] + [0.0])
    floors = {"force": forces, "reaction": forces, "contact_force": forces, "strain": 1.0, "twist": 1.0}
    result = 0.0
    for (n, x), (_, y) in zip(fa, fb):
        w = worst(list(x), list(y), floors.get(n, 0.0))
        result = max(result, w * RTOL / (2 * tolerance) if n == "force" else w)
    return result


def compare_outputs(dir_a, dir_b, tolerance):
    """(worst difference, files compared, missing): every CSV file and the last VTK frame."""
    names = sorted(os.listdir(dir_a))
    missing = [] if sorted(os.listdir(dir_b)) == names else ["different file lists"]
    frames = [n for n in names if n.endswith(".vtu")][-1:]
    files = [n for n in names if n.endswith(".csv") and n != "units.csv"] + frames
    result = 0.0
    if "units.csv" in names and not same_units(dir_a, dir_b):
        result = float("inf")
    for n in files:
        a, b = os.path.join(dir_a, n), os.path.join(dir_b, n)
        result = max(result, csv_worst(a, b) if n.endswith(".csv") else frame_worst(a, b, tolerance))
    return result, len(files), missing


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)


def main():
    srdc, examples = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for path in sorted(glob.glob(os.path.join(examples, "*.srd"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name not in examples_chosen([name]):
            continue
        model = json.loads(run([srdc, "dump", "--json", path]).stdout)
        extra = ["--duration", "%.17g" % (STEPS * model["simulate"]["dt"])] if model.get("simulate") else []
        tolerance = min([model[a]["tolerance"] for a in ("simulate", "static") if model.get(a)] or [1e-8])
        # contact between parts couples any two nodes, which a band cannot hold: banded is refused
        banded = [] if (model.get("environment") or {}).get("self_contact") else ["banded"]
        solvers = ["sparse"] + banded + (["dense"] if model["dofs"] - model["fixed_dofs"] < DENSE_MAX_DOFS else [])
        outs, results = {}, {}
        for solver in solvers:
            outs[solver] = scratch(name + "_" + solver + "_")
            results[solver] = run([srdc, "run", path, "--solver", solver, "--out", outs[solver]] + extra)
        sparse = results["sparse"]
        used = re.search(r"linear solver: sparse \((CHOLMOD Cholesky|UMFPACK LU|"
                         r"CHOLMOD Cholesky of the symmetric part, refined)\)", sparse.stdout)
        # An explicit simulation alone solves no linear system: it only has to run.
        explicit = (model.get("simulate") or {}).get("method") in ("euler", "verlet", "rk4") and not model.get("static") \
            and not model.get("modes")
        check(sparse.returncode == 0 and (used is not None or explicit),
              "%s: runs with --solver sparse (%s)" % (name, used.group(1) if used else "explicit, no linear solves"
                                                      if explicit and sparse.returncode == 0
                                                      else sparse.stderr.strip()[:300]))
        for other in solvers[1:]:
            worst, compared, missing = compare_outputs(outs[other], outs["sparse"], tolerance)
            check(results[other].returncode == 0 and compared > 0 and not missing and worst <= RTOL,
                  "%s: sparse equals %s to %.2e over %d files (tol %.0e)" % (name, other, worst, compared, RTOL))
    finish()


if __name__ == "__main__":
    main()
