#!/usr/bin/env python3
"""check_tiers.py SRDC EXAMPLES — `srdc run` of every example with its kernels interpreted
throughout (SRD_JIT=interp), compiled before the first step (SRD_JIT=wait) and tiered (the
default: interpreted until the helper thread's compiled code takes over) writes the same
files, byte for byte: when the compiled kernels arrive must not change a result. Also checks
that SRD_TIMING reports the first kernel call, that a tiered run writes its cache entry, and that
srdc itself does not link LLVM."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, examples_chosen, finish, scratch  # noqa: E402

srdc, examples = sys.argv[1], sys.argv[2]
# Short runs: a few steps of each dynamic example (at least two of its time steps).
DURATION = {"gripper": "0.3", "snake": "0.2", "snake_goal": "0.2", "snake_steer": "1.1", "earthworm": "0.1",
            "parachute": "0.03"}


def run(name, mode, cache="off"):
    out = scratch(name + "_" + mode + "_")
    cmd = [srdc, "run", os.path.join(examples, name + ".srd"), "--out", out, "--quiet"]
    cmd += ["--duration", DURATION.get(name, "0.02")]
    env = dict(os.environ, SRD_CACHE=cache, SRD_JIT=mode, SRD_TIMING="1", OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return p, out


def files(out):
    """Every file the run wrote (the checkpoint too), by relative path."""
    found = {}
    for root, _, names in os.walk(out):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                found[os.path.relpath(path, out)] = f.read()
    return found


names = examples_chosen(sorted(f[:-4] for f in os.listdir(examples) if f.endswith(".srd")))
for name in names:
    results = {}
    for mode in ("wait", "interp", "tiered"):
        p, out = run(name, mode)
        check(p.returncode == 0 and "warning" not in p.stderr,
              "%s, SRD_JIT=%s: runs without a warning (exit %d)" % (name, mode, p.returncode))
        if p.returncode:
            print("# " + p.stderr.strip().replace("\n", "\n# "))
        results[mode] = files(out)
        timing = [l for l in p.stderr.splitlines() if l.startswith("srdc: timing:")]
        check(len(timing) == 1 and "first kernel call" in timing[0],
              "%s, SRD_JIT=%s: SRD_TIMING reports the first kernel call" % (name, mode))
    for mode in ("interp", "tiered"):
        check(results[mode] == results["wait"] and len(results["wait"]) > 0,
              "%s: SRD_JIT=%s writes the files of SRD_JIT=wait byte for byte (%d files)"
              % (name, mode, len(results["wait"])))

# srdc must not load LLVM at start-up (its static initialisers cost ~20 ms): it loads
# libsrdllvm.so when it compiles.
p = subprocess.run(["readelf", "-d", srdc], capture_output=True, text=True)
check(p.returncode == 0 and "NEEDED" in p.stdout and "libLLVM" not in p.stdout,
      "srdc does not link libLLVM (loaded with libsrdllvm.so on first use)")

cache = scratch("cache_")
p, _ = run("snake", "tiered", cache)
entries = os.listdir(cache) if os.path.isdir(cache) else []
check(p.returncode == 0 and len(entries) >= 1, "a tiered run writes its kernel cache entries (%d)" % len(entries))
p, _ = run("snake", "tiered", cache)
check(p.returncode == 0 and "from the kernel cache" in p.stderr, "the next tiered run loads it: %s" % p.stderr.strip())
finish()
