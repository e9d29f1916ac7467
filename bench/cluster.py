#!/usr/bin/env python3
"""cluster.py [SRDC] — what each way of running a sweep adds per run: the local pool, MPI
(srd-mpi-sweep under mpirun, one worker) and Slurm job arrays (on a single-node Slurm this script
starts, as the cluster.sweeps test does; needs root). Each mode runs a sweep of N rows of a run
that simulates one step; the time per run is the span from the first run's end to the last's
(their status files' times) over N - 1, which leaves out what a sweep pays once (the build,
mpirun's start, sbatch and the queue), and the overhead is that less the same for the runs
started one after the other by a shell loop. The wall time of a whole sweep of N rows is
printed too."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "cluster"))
from slurm_local import Cluster  # noqa: E402

srdc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "srdc"))
model = os.path.join(here, "..", "tests", "examples", "sweep_fall.srd")
N = 40
ROOT_MPI = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
work = tempfile.mkdtemp(prefix="srd_bench_cluster_")


def sweep_args(n, out):
    return [srdc, "sweep", model, "-p", "fall=0..0.5:lin:%d" % n, "--duration", "0.01", "--quiet", "--out", out]


def timed(args, env=None, then=None):
    start = time.perf_counter()
    subprocess.run(args, env=dict(os.environ, **(env or {})), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if then:
        then()
    return time.perf_counter() - start


# The runs alone: the rows of a local sweep, started one after the other by sh.
LOOP = """tab=$(printf '\\t'); k=0
while IFS= read -r line; do
    k=$((k + 1)); (IFS=$tab; exec $line --out "$1/loop_$k") > /dev/null 2>&1; touch "$1/loop_$k/status"
done < "$1/rows.tsv"
"""


def direct(out):
    subprocess.run(sweep_args(N, out) + ["-j", "1"], stdout=subprocess.DEVNULL)
    return timed(["sh", "-c", LOOP, "sh", out]), "loop_%d"


def local(out):
    return timed(sweep_args(N, out) + ["-j", "1"]), "run_%d"


def mpi(out):
    return timed(sweep_args(N, out) + ["--mpi", "--ranks", "2"], env=ROOT_MPI), "run_%d"


def slurm(cluster, chunk):
    def run(out):
        args = sweep_args(N, out) + ["--slurm", "--submit", "--chunk", str(chunk)]
        return timed(args, env=cluster.env, then=lambda: cluster.wait_jobs(600)), "run_%d"
    return run


def measure(name, run):
    """(name, time per run, wall time of the sweep) of one mode."""
    out = os.path.join(work, name.split()[0].lower() + "_%d" % len(os.listdir(work)))
    wall, runs = run(out)
    ends = sorted(os.stat(os.path.join(out, runs % k, "status")).st_mtime for k in range(1, N + 1))
    return name, (ends[-1] - ends[0]) / (N - 1), wall


def main():
    modes = [("shell loop (the runs alone)", direct), ("local pool, -j 1", local)]
    if shutil.which("mpirun") and os.path.exists(os.path.join(os.path.dirname(srdc), "srd-mpi-sweep")):
        modes.append(("MPI, --ranks 2 (one worker)", mpi))
    cluster = Cluster(tempfile.mkdtemp(prefix="srd_slurm_"))
    why = cluster.start()
    if not why:
        modes += [("Slurm, one task of all rows", slurm(cluster, N)),
                  ("Slurm, --chunk 1 (a task per row, 2 CPUs)", slurm(cluster, 1))]
    try:
        rows = [measure(*mode) for mode in modes]
    finally:
        cluster.stop()
        shutil.rmtree(cluster.dir, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    if why:
        print("Slurm not measured: %s" % why)
    base = rows[0][1]
    print("| mode | per run | overhead per run | sweep of %d rows, wall |" % N)
    print("|---|---|---|---|")
    for name, per_run, wall in rows:
        print("| %s | %.1f ms | %+.1f ms | %.2f s |" % (name, 1e3 * per_run, 1e3 * (per_run - base), wall))


main()
