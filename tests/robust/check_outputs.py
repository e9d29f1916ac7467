#!/usr/bin/env python3
"""check_outputs.py SRDC PHYSICS_DIR — a run whose outputs cannot be written stops with the I/O
exit status (3) and names the file, instead of exiting 0 with a file cut mid-row; frames are
whole or absent. The full disk is /dev/full behind the output's name, or a file-size limit."""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import check, finish  # noqa: E402

srdc, physics = sys.argv[1], sys.argv[2]
EXIT_IO = 3


def run(model, out, *args, fsize=None):
    def limit():
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return subprocess.run([srdc, "run", os.path.join(physics, model), "--out", out, "--quiet", *args],
                          capture_output=True, text=True, preexec_fn=limit)


def full_disk(name, model, *args):
    """NAME in the output folder is /dev/full: every write to it fails with ENOSPC."""
    out = tempfile.mkdtemp(prefix="srd_io_")
    try:
        os.symlink("/dev/full", os.path.join(out, name))
        p = run(model, out, *args)
        check(p.returncode == EXIT_IO, "%s on a full disk: exit status %d (want %d)" % (name, p.returncode, EXIT_IO))
        check("cannot write %s/%s: No space left on device" % (out, name) in p.stderr,
              "%s on a full disk: the message names the file: %r" % (name, p.stderr.strip()))
    finally:
        shutil.rmtree(out)


full_disk("probes.csv", "oscillator.srd", "--duration", "10ms")
full_disk("energy.csv", "oscillator.srd", "--duration", "10ms")
full_disk("static_probes.csv", "hanging_spring.srd")
full_disk("modes.csv", "chain_modes.srd")

# Frames under a file-size limit smaller than one frame: the run fails naming the frame, and
# leaves neither a cut .vtu nor a temporary file.
out = tempfile.mkdtemp(prefix="srd_io_")
try:
    p = run("cantilever_static.srd", out, fsize=2000)
    check(p.returncode == EXIT_IO and ".vtu" in p.stderr and "File too large" in p.stderr,
          "a frame larger than the file-size limit: exit %d, %r" % (p.returncode, p.stderr.strip()))
    left = sorted(f for f in os.listdir(out) if f.endswith(".vtu") or f.endswith(".tmp"))
    check(not left, "no cut frame or temporary file is left (found %s)" % left)
finally:
    shutil.rmtree(out)

finish()
