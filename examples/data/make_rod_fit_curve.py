#!/usr/bin/env python3
"""make_rod_fit_curve.py SRDC — writes rod_fit_curve.csv, the "measured" deflection curve of
../rod_fit.srd: the rod's static equilibrium (the model without its optimize block) at E = 4 MPa and kappa0 = 8 /m (run by SRDC), its
height z at the arc-length fractions s = 0, 0.1, ..., 1 (nodes 0, 4, ..., 40 of its 41), with 17
digits.   python3 data/make_rod_fit_curve.py build/srdc   (from examples/)"""
import csv
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, "..", "rod_fit.srd")
with tempfile.TemporaryDirectory() as out:
    # The model without its optimize block (which reads the curve this writes).
    text = open(model).read()
    plain = os.path.join(out, "rod_fit.srd")
    with open(plain, "w") as f:
        f.write(text[:text.index("optimize {")])
    subprocess.run([sys.argv[1], "run", plain, "--quiet", "--out", out, "-p", "E=4MPa", "-p", "kappa0=8/m"],
                   check=True)
    with open(os.path.join(out, "rod_fit.csv")) as f:
        row = list(csv.DictReader(f))[-1]
with open(os.path.join(here, "rod_fit_curve.csv"), "w") as f:
    f.write("s,z\n")
    for k in range(11):
        f.write("%.2f,%.17g\n" % (k / 10, float(row["z%d" % (4 * k)])))
