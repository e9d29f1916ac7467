#!/usr/bin/env python3
"""cluster.py [SRDC] — what each way of running a sweep adds per run: the local pool, MPI
(srd-mpi-sweep under mpirun, one worker) and Slurm job arrays (on a single-node Slurm this script
starts, as the cluster.sweeps test does; needs root). Each mode runs sweeps of N1 and N2 rows of
a run that simulates one step; the time per run is the slope (T(N2) - T(N1)) / (N2 - N1), which
leaves out what a sweep pays once (the build, mpirun's start, sbatch), and the overhead is that
slope less the slope of the same runs started one after the other by a shell loop."""
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
N1, N2 = 10, 50
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
while IFS= read -r line; do k=$((k + 1)); (IFS=$tab; exec $line --out "$1/loop_$k") > /dev/null 2>&1; done < "$1/rows.tsv"
"""


def direct(n):
    out = os.path.join(work, "direct_%d" % n)
    subprocess.run(sweep_args(n, out) + ["-j", "1"], stdout=subprocess.DEVNULL)
    return timed(["sh", "-c", LOOP, "sh", out])


def local(n):
    return timed(sweep_args(n, os.path.join(work, "local_%d" % n)) + ["-j", "1"])


def mpi(n):
    return timed(sweep_args(n, os.path.join(work, "mpi_%d" % n)) + ["--mpi", "--ranks", "2"], env=ROOT_MPI)


def slurm_dir(chunk, n):
    return os.path.join(work, "slurm_%d_%d" % (chunk or n, n))


def slurm(cluster, chunk):
    def run(n):
        args = sweep_args(n, slurm_dir(chunk, n))
        return timed(args + ["--slurm", "--submit", "--chunk", str(chunk or n)], env=cluster.env,
                     then=lambda: cluster.wait_jobs(600))
    return run


def in_task(n):
    """Per run inside one array task of n rows, from the first to the last status file written:
    the queue's own latency (seconds, and noisy) would drown the slope."""
    times = sorted(os.stat(os.path.join(slurm_dir(0, n), "run_%d" % k, "status")).st_mtime for k in range(1, n + 1))
    return (times[-1] - times[0]) / (n - 1)


def slope(measure, per_run=None):
    t1, t2 = measure(N1), measure(N2)
    return (per_run(N2) if per_run else (t2 - t1) / (N2 - N1)), t1


def main():
    modes = [("shell loop (the runs alone)", direct), ("local pool, -j 1", local)]
    if shutil.which("mpirun") and os.path.exists(os.path.join(os.path.dirname(srdc), "srd-mpi-sweep")):
        modes.append(("MPI, --ranks 2 (one worker)", mpi))
    cluster = Cluster(tempfile.mkdtemp(prefix="srd_slurm_"))
    why = cluster.start()
    if not why:
        modes += [("Slurm, one task of all rows (inside the task)", slurm(cluster, 0), in_task),
                  ("Slurm, --chunk 1 (a task per row, 2 CPUs)", slurm(cluster, 1))]
    try:
        rows = [(mode[0], *slope(*mode[1:])) for mode in modes]
    finally:
        cluster.stop()
        shutil.rmtree(cluster.dir, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    if why:
        print("Slurm not measured: %s" % why)
    base = rows[0][1]
    print("| mode | per run | overhead per run | sweep of %d rows, wall |" % N1)
    print("|---|---|---|---|")
    for name, per_run, t1 in rows:
        print("| %s | %.1f ms | %+.1f ms | %.2f s |" % (name, 1e3 * per_run, 1e3 * (per_run - base), t1))


main()
