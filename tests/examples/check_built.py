#!/usr/bin/env python3
"""check_built.py SRDC EXAMPLES_DIR — every example as a standalone simulator.

For each examples/*.srd: `srdc build` makes an executable; `ldd` must show no LLVM and no srd
library; the executable and `srdc run` then run the model (simulations cut to a few steps) and
every output they write (probes, energies, modes, the last VTK frame) must agree to 1e-12
relative, first with the defaults and then with the first param moved inside its range.
Then, on one example: --help lists the params with defaults, units and ranges; --info prints
what `srdc dump` prints; bad -p values (unknown name, wrong dimension, out of range, not a
number) are refused with their message and exit status 1 before anything is written.

Prints one `ok - ...` / `not ok - ...` line per check and the build times; exits 1 on a failure.
"""
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, examples_chosen, finish  # noqa: E402
from vtk_frame import frame_arrays  # noqa: E402

RTOL = 1e-12
STEPS = 6


def worst_difference(a, b):
    """Largest |a - b| over values of one block, relative to the block's largest magnitude."""
    if len(a) != len(b):
        return float("inf")
    scale = max([abs(x) for x in a + b] + [1e-300])
    return max([abs(x - y) / scale for x, y in zip(a, b)] + [0.0])


def csv_columns(path):
    with open(path) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    return list(zip(*[[float(v) for v in row] for row in rows[1:]])) if len(rows) > 1 else []


def vtk_arrays(path):
    return [values for _, values in frame_arrays(path)]


def same_units(dir_a, dir_b):
    """units.csv holds words, not numbers: the two runs must write the same text."""
    a, b = os.path.join(dir_a, "units.csv"), os.path.join(dir_b, "units.csv")
    return os.path.exists(b) and open(a).read() == open(b).read()


def compare_outputs(dir_a, dir_b):
    """(worst relative difference, files compared, missing files): every CSV file and the last
    VTK frame, block by block (CSV columns, VTK arrays)."""
    worst, compared, missing = 0.0, 0, []
    names_a = sorted(os.listdir(dir_a))
    if sorted(os.listdir(dir_b)) != names_a:
        missing.append("different file lists")
    frames = [n for n in names_a if n.endswith(".vtu")]
    files = [(n, csv_columns) for n in names_a if n.endswith(".csv") and n != "units.csv"]
    files += [(n, vtk_arrays) for n in frames[-1:]]
    if "units.csv" in names_a:
        worst = worst if same_units(dir_a, dir_b) else float("inf")
        compared += 1
    for name, blocks in files:
        b = os.path.join(dir_b, name)
        if not os.path.exists(b):
            missing.append(name)
            continue
        ba, bb = blocks(os.path.join(dir_a, name)), blocks(b)
        if len(ba) != len(bb):
            worst = float("inf")
        for x, y in zip(ba, bb):
            worst = max(worst, worst_difference(list(x), list(y)))
        compared += 1
    return worst, compared, missing


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)


def moved_override(param):
    """The first param moved inside its declared range, written in SI with its unit."""
    v = param["value"]
    lo, hi = param.get("min", -float("inf")), param.get("max", float("inf"))
    alt = v * 1.1 if v != 0 else 0.1
    if not lo <= alt <= hi:
        alt = v * 0.9 if v != 0 else -0.1
    unit = "" if param["unit"] == "1" else param["unit"]
    return "%s=%.17g %s" % (param["name"], alt, unit) if unit else "%s=%.17g" % (param["name"], alt)


def main():
    srdc, examples = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="srd_built_")
    build_times = []
    try:
        for path in sorted(glob.glob(os.path.join(examples, "*.srd"))):
            name = os.path.splitext(os.path.basename(path))[0]
            if name not in examples_chosen([name]):
                continue
            exe = os.path.join(work, name)
            t0 = time.time()
            b = run([srdc, "build", path, "-o", exe, "--quiet"], work)
            build_times.append((name, time.time() - t0))
            check(b.returncode == 0 and os.access(exe, os.X_OK), "%s: srdc build makes an executable%s" %
                  (name, "" if b.returncode == 0 else " (" + b.stderr.strip()[:300] + ")"))
            if b.returncode != 0:
                continue
            libs = run(["ldd", exe], work).stdout
            check(not re.search(r"llvm|libsrd", libs, re.I), "%s: the simulator links no LLVM and no srd library" % name)
            model = json.loads(run([srdc, "dump", "--json", path], work).stdout)
            extra = []
            if model.get("simulate"):
                extra = ["--duration", "%.17g" % (STEPS * model["simulate"]["dt"])]
            variants = [("defaults", [])]
            # a param that shapes the discretisation makes a new model, which a built simulator
            # refuses by design: move the first param that does not
            params = [p for p in model["params"] if not p.get("discretisation")]
            if params:
                moved = moved_override(params[0])
                variants.append(("-p " + moved, ["-p", moved]))
            for label, args in variants:
                out_run, out_exe = os.path.join(work, name + ".run"), os.path.join(work, name + ".exe")
                for d in (out_run, out_exe):
                    shutil.rmtree(d, ignore_errors=True)
                r1 = run([srdc, "run", path, "--quiet", "--out", out_run] + extra + args, work)
                r2 = run([exe, "--quiet", "--out", out_exe] + extra + args, work)
                same_status = r1.returncode == r2.returncode
                check(same_status, "%s (%s): srdc run and the simulator exit alike (%d, %d)" %
                      (name, label, r1.returncode, r2.returncode))
                if not same_status or r1.returncode != 0:
                    continue
                worst, compared, missing = compare_outputs(out_run, out_exe)
                check(compared > 0 and not missing and worst <= RTOL,
                      "%s (%s): %d outputs agree, worst relative difference %.2e (tol %.0e)%s" %
                      (name, label, compared, worst, RTOL, " missing: " + ", ".join(missing) if missing else ""))
        interface_checks(srdc, examples, work)
        sweep_checks(srdc, examples, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("# build times: " + ", ".join("%s %.2f s" % nt for nt in build_times))
    finish()


def interface_checks(srdc, examples, work):
    path = os.path.join(examples, "jumper.srd")
    exe = os.path.join(work, "jumper")
    if not os.path.exists(exe):
        check(False, "jumper simulator exists for the interface checks")
        return
    h = run([exe, "--help"], work)
    check(h.returncode == 0 and re.search(r"youngs\s+1\.5e\+07 Pa, a pressure \(Pa\), 1e\+06 Pa \.\. 1e\+09 Pa",
                                          h.stdout) is not None and "kappa_ratio" in h.stdout,
          "--help lists each param with its default, unit, dimension and range")
    info = run([exe, "--info"], work)
    dump = run([srdc, "dump", path], work)
    check(info.returncode == 0 and info.stdout == dump.stdout, "--info prints what `srdc dump` prints")
    bad = [
        ("youngs=2m", "`-p youngs=2m`: param `youngs` is a pressure (Pa), but this is a length (m)"),
        ("young=2MPa", "the model has no param `young` (in `-p young=2MPa`)"),
        ("youngs=5GPa", "the value given with -p of `youngs` (5e+09 Pa) is outside its range"),
        ("youngs=abc", "`-p youngs=abc`: `abc` is not a number"),
        ("youngs=2 furlongs", "`-p youngs=2 furlongs`: unknown unit"),
    ]
    for spec, message in bad:
        out = os.path.join(work, "bad_out")
        shutil.rmtree(out, ignore_errors=True)
        r = run([exe, "-p", spec, "--out", out], work)
        check(r.returncode == 1 and message in r.stderr and not os.path.exists(out),
              "-p %s is refused with exit status 1 (got %d), before any output, saying: %s" %
              (spec, r.returncode, message))
    portable = os.path.join(work, "jumper_portable")
    b = run([srdc, "build", path, "-o", portable, "--portable", "--quiet"], work)
    outs = [os.path.join(work, d) for d in ("native_out", "portable_out")]
    r1 = run([exe, "--duration", "0.01", "--out", outs[0]], work)
    r2 = run([portable, "--duration", "0.01", "--out", outs[1]], work) if b.returncode == 0 else r1
    worst, compared, _ = compare_outputs(outs[0], outs[1]) if b.returncode == 0 else (1, 0, [])
    check(b.returncode == 0 and r1.returncode == r2.returncode == 0 and compared and worst <= RTOL,
          "--portable (x86-64-v3) builds and matches the native build (worst %.2e, tol %.0e)" % (worst, RTOL))
    static = os.path.join(work, "jumper_static")
    b = run([srdc, "build", path, "-o", static, "--static", "--quiet"], work)
    libs = run(["ldd", static], work).stdout if b.returncode == 0 else ""
    needed = sorted(re.findall(r"^\s*(\S+\.so[.\d]*)", libs, re.M))
    out_static = os.path.join(work, "static_out")
    r3 = run([static, "--duration", "0.01", "--out", out_static], work) if b.returncode == 0 else r1
    worst, compared, _ = compare_outputs(outs[0], out_static) if b.returncode == 0 else (1, 0, [])
    check(b.returncode == 0 and r3.returncode == 0 and compared and worst == 0 and
          all(re.match(r"(linux-vdso|libc\.|libm\.|ld-linux)", os.path.basename(lib)) for lib in needed),
          "--static links OpenBLAS and LAPACK in: the simulator needs only %s and matches the shared build "
          "(worst %.1e)" % (", ".join(needed), worst))
    check("\r" not in r1.stdout + r1.stderr and "simulated" in r1.stdout,
          "no progress bar when the output is not a terminal; the summary line is printed")
    r = run([exe, "--frames", "3"], work)
    check(r.returncode == 1 and "unknown option `--frames`" in r.stderr, "an unknown option is refused with status 1")


def read_summary(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def sweep_checks(srdc, examples, work):
    """srdc sweep: the params reach every run, a failing run is reported and the sweep goes on."""
    cantilever = os.path.join(examples, "cantilever_rod.srd")
    out = os.path.join(work, "sweep_E")
    r = run([srdc, "sweep", cantilever, "-p", "youngs=1GPa..16GPa:log:3", "-j", "2", "--out", out, "--quiet"], work)
    rows = read_summary(os.path.join(out, "summary.csv")) if r.returncode == 0 else []
    check(r.returncode == 0 and len(rows) == 3 and all(row["status"] == "ok" for row in rows),
          "sweep over 3 Young's moduli: all runs ok (exit %d, %d rows)" % (r.returncode, len(rows)))
    if len(rows) == 3:
        moduli = [float(row["youngs_Pa"]) for row in rows]
        check(all(abs(a / b - 1) < 1e-12 for a, b in zip(moduli, [1e9, 4e9, 16e9])),
              "the grid is 1, 4, 16 GPa (log spacing, ends exact)")
        # Small deflections (tip / L < 1.3 %): the tip moves as 1 / E to well within 1 %.
        products = [float(row["tip"]) * E for row, E in zip(rows, moduli)]
        spread = max(products) / min(products) - 1
        check(abs(spread) < 0.01, "tip deflection times E is the same for every run: the param reached each "
              "run (spread %.2e, tol 1e-2)" % abs(spread))
    sets = os.path.join(work, "sets.csv")
    with open(sets, "w") as f:
        f.write("youngs\n2GPa\n4 GPa\n")
    out = os.path.join(work, "sweep_csv")
    r = run([srdc, "sweep", cantilever, "--csv", sets, "--out", out, "--quiet"], work)
    rows = read_summary(os.path.join(out, "summary.csv")) if r.returncode == 0 else []
    check(len(rows) == 2 and [float(row["youngs_Pa"]) for row in rows] == [2e9, 4e9] and
          abs(float(rows[0]["tip"]) / float(rows[1]["tip"]) - 2) < 0.01,
          "sweep over a CSV of parameter sets: one run per row, tip ratio 2 for E ratio 2 (tol 1 %)")
    fall = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep_fall.srd")
    out = os.path.join(work, "sweep_fall")
    r = run([srdc, "sweep", fall, "-p", "fall=0,1", "--out", out], work)
    rows = read_summary(os.path.join(out, "summary.csv")) if os.path.exists(os.path.join(out, "summary.csv")) else []
    check(r.returncode == 2 and [row["status"] for row in rows] == ["ok", "numerical_failure"] and
          "numerical_failure" in r.stdout and os.path.exists(os.path.join(out, "run_2", "fall_000000.vtu")),
          "a run that fails is reported, keeps its frames, and the sweep finishes the others (exit %d)" % r.returncode)
    for spec, message in (("youngs=1GPa..2GPa:cubic:3", "a range is a..b:lin:n or a..b:log:n"),
                          ("young=1GPa", "the model has no param `young`"),
                          ("youngs=1GPa..2m:lin:3", "param `youngs` is a pressure (Pa), but `2m` is a length (m)"),
                          ("youngs=0.5MPa", "lies outside the range of `youngs`")):
        out = os.path.join(work, "sweep_bad")
        r = run([srdc, "sweep", cantilever, "-p", spec, "--out", out], work)
        check(r.returncode == 1 and message in r.stderr and not os.path.exists(out),
              "sweep -p %s is refused with status 1 before anything runs: %s" % (spec, message))


if __name__ == "__main__":
    main()
