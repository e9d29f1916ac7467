#!/usr/bin/env python3
"""check_tutorial.py SRD_ROOT — runs every ```sh block of docs/tutorial.md, in order, in one
shell in a fresh directory, with SRD pointing at the checkout and its build/ on PATH. Each
block must exit 0; afterwards the files the tutorial promises must exist and make sense.
Prints ok / not ok lines; exits 1 on a failure.
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish  # noqa: E402



def python_with_matplotlib(work):
    """A directory whose `python3` is one that has matplotlib, as the tutorial's reader's Debian
    python3 has (scripts/setup.sh installs python3-matplotlib); the Python on PATH may be one of
    the machine's own without it."""
    shim = os.path.join(work, ".python-shim")
    os.makedirs(shim, exist_ok=True)
    for python in ("python3", "/usr/bin/python3"):
        if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            path = shutil.which(python)
            os.symlink(path, os.path.join(shim, "python3"))
            break
    return shim


def main():
    root = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(root, "build")
    with open(os.path.join(root, "docs", "tutorial.md")) as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    check(len(blocks) >= 8, "the tutorial has %d runnable blocks" % len(blocks))
    work = tempfile.mkdtemp(prefix="srd_tutorial_")
    env = dict(os.environ, SRD=root, PATH=os.pathsep.join([build, python_with_matplotlib(work), os.environ["PATH"]]))
    try:
        for k, block in enumerate(blocks):
            r = subprocess.run(["sh", "-e", "-c", block], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            first = block.strip().splitlines()[0]
            check(r.returncode == 0, "block %d (`%s`) runs%s" % (k + 1, first, "" if r.returncode == 0 else
                                                                 ":\n" + r.stdout[-1500:]))
        summary = os.path.join(work, "sweep", "summary.csv")
        rows = list(csv.DictReader(open(summary))) if os.path.exists(summary) else []
        check(len(rows) == 9 and all(r["status"] == "ok" for r in rows), "the sweep ran 9 inflations, all ok")
        if len(rows) == 9:
            z = [float(r["tip_z"]) for r in rows]
            check(z[0] < 0 < z[2] and max(z) > 0.03,
                  "the tip sags without inflation (%.4f m) and rises as the finger curls (highest %.4f m)" %
                  (z[0], max(z)))
        svg = os.path.join(work, "finger.svg")
        check(os.path.exists(svg) and open(svg).read().count('id="series_') == 2, "finger.svg has the two curves")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
