#!/usr/bin/env python3
"""check_cluster.py SRDC MODEL — `srdc sweep` past one machine (docs/cluster.md): the command
line's mistakes; an MPI sweep (mpirun -np 3 --oversubscribe) and a Slurm job-array sweep on a
single-node Slurm that this script starts itself (munged, slurmctld and slurmd as root, in a
temporary directory, stopped at the end), each with a summary identical, byte for byte, to the
local pool's; rows left unfinished by a task (marked so by hand, then by a real scancel of the
job) are rerun by the next submission, and only those; MaxArraySize caps the array. Skips
(saying why) only the parts whose services cannot start here."""
import os
import re
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), here]
from tap import check, finish, scratch  # noqa: E402
from slurm_local import Cluster  # noqa: E402

srdc, model = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
work = scratch("cluster_")
# 12 rows of a ball falling for 0.1 s; the last row (fall = 1) fails with NaN, so the summaries
# also compare a failed row.
SWEEP = [srdc, "sweep", model, "-p", "fall=0..1:lin:12", "--duration", "0.1", "--quiet"]
ROOT_MPI = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(args, env=None, timeout=120):
    full = dict(os.environ, **(env or {}))
    return subprocess.run(args, capture_output=True, text=True, cwd=work, env=full, timeout=timeout)


def check_run(ok, what, p):
    check(ok, what)
    if not ok:
        print("# exit %d\n# stdout: %s\n# stderr: %s" % (p.returncode, p.stdout, p.stderr))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def refused(p, *words):
    """Exit status 1, an `srdc: error:` line with the words, and a hint."""
    return (p.returncode == 1 and "srdc: error:" in p.stderr and "hint:" in p.stderr
            and all(w in p.stderr for w in words))


# 1. The local pool: the reference summary.
local = os.path.join(work, "local")
p = run(SWEEP + ["--out", local, "-j", "2"])
check_run(p.returncode == 2 and os.path.exists(os.path.join(local, "summary.csv")),
          "local sweep of 12 rows: 11 ok, 1 numerical failure (exit 2)", p)
reference = read(os.path.join(local, "summary.csv"))
check(all(read(os.path.join(local, "run_%d" % k, "status")).strip() in (b"ok", b"numerical_failure")
          for k in range(1, 13)), "every local run has its status file")

# 2. Mistakes on the command line.
bad = os.path.join(work, "bad")
p = run(SWEEP + ["--out", bad, "--slurm", "--chunk", "0"])
check_run(refused(p, "`--chunk 0`"), "--chunk 0 is refused with a hint", p)
p = run(SWEEP + ["--out", bad, "--slurm", "--mpi"])
check_run(refused(p, "--slurm and --mpi"), "--slurm with --mpi is refused", p)
p = run(SWEEP + ["--out", bad, "--chunk", "4"])
check_run(refused(p, "--chunk is an option of Slurm sweeps"), "--chunk without --slurm is refused", p)
p = run(SWEEP + ["--out", bad, "--mpi", "--ranks", "1"])
check_run(refused(p, "at least 2 ranks"), "an MPI sweep of one rank is refused", p)
p = run(SWEEP + ["--out", bad, "--slurm", "--submit"], env={"PATH": "/nonexistent"})
check_run(refused(p, "`sbatch`", "not on PATH"), "--submit without sbatch is refused", p)
p = run([srdc, "sweep", "--status", work])
check_run(refused(p, "not a sweep directory"), "--status of a directory that holds no sweep is refused", p)

# 3. --slurm without --submit writes the script; the sweep directory lies under the suite's
# temporary directory, on this machine's disk: a warning, not an error.
written = os.path.join(work, "written")
p = run(SWEEP + ["--out", written, "--slurm", "--chunk", "5", "--partition", "short", "--time", "10:00"],
        env={"PATH": "/nonexistent:" + os.environ["PATH"], "SLURM_CONF": "/nonexistent"})
script = os.path.join(written, "slurm", "job_1.sbatch")
check_run(p.returncode == 0 and os.path.exists(script), "--slurm writes DIR/slurm/job_1.sbatch", p)
check_run("srdc: warning: the sweep directory" in p.stderr and "compute nodes may not reach it" in p.stderr,
          "a sweep directory on a local disk is warned about", p)
check_run("assuming its default, 1001" in p.stdout, "without Slurm's configuration, MaxArraySize 1001 is assumed "
          "and said", p)
text = open(script).read() if os.path.exists(script) else ""
check(all(s in text for s in ("#SBATCH --array=0-2", "#SBATCH --partition=short", "#SBATCH --time=10:00",
                              "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "chunk=5")),
      "the script: 3 array tasks of 5 rows, the partition, the time limit, one BLAS thread")


# 4. MPI: 3 ranks (a manager and two workers) on this machine.
def mpi_checks():
    mpi_dir = os.path.join(work, "mpi")
    worker = os.path.join(os.path.dirname(srdc), "srd-mpi-sweep")
    if not shutil.which("mpirun") or not os.path.exists(worker):
        print("# skip: MPI sweep: %s" % ("no mpirun (openmpi-bin)" if not shutil.which("mpirun")
                                         else "srd-mpi-sweep not built (no libopenmpi-dev)"))
        return
    p = run(SWEEP + ["--out", mpi_dir, "--mpi", "--ranks", "3", "--mpirun", "mpirun --oversubscribe"], env=ROOT_MPI)
    check_run(p.returncode == 2 and read(os.path.join(mpi_dir, "summary.csv")) == reference,
              "mpirun -np 3 --oversubscribe: the summary equals the local pool's byte for byte", p)
    p = run(["mpirun", "--oversubscribe", "-np", "1", worker, mpi_dir], env=ROOT_MPI)
    check_run(p.returncode != 0 and "srd-mpi-sweep: error: an MPI sweep needs at least 2 ranks" in p.stderr
              and "hint:" in p.stderr, "srd-mpi-sweep on one rank says it needs two", p)


mpi_checks()


# 5. Slurm: a single-node cluster of our own (slurm_local.py).
def slurm_checks(cluster):
    # MaxArraySize is 4 here: 12 rows of one per task would be 12 tasks, so 3 rows per task.
    capped = os.path.join(work, "capped")
    p = run(SWEEP + ["--out", capped, "--slurm", "--chunk", "1"], env=cluster.env)
    text = open(os.path.join(capped, "slurm", "job_1.sbatch")).read() if p.returncode == 0 else ""
    check_run("--chunk 1 makes more than MaxArraySize = 4 array tasks: 3 rows per task instead" in p.stdout
              and "#SBATCH --array=0-3\n" in text and "chunk=3\n" in text,
              "MaxArraySize from scontrol (4): --chunk 1 over 12 rows is raised to 3 rows per task, and said", p)
    out = os.path.join(work, "slurm")
    submit = SWEEP + ["--out", out, "--slurm", "--chunk", "5", "--submit"]
    p = run(submit, env=cluster.env)
    check_run(p.returncode == 0 and "submitted job" in p.stdout and "3 array tasks of up to 5 runs" in p.stdout,
              "--slurm --submit: 12 rows as 3 array tasks of up to 5", p)
    check(cluster.wait_jobs(), "the job array ends")
    p = run([srdc, "sweep", "--collect", out])
    check_run(p.returncode == 2 and read(os.path.join(out, "summary.csv")) == reference,
              "--collect: the Slurm sweep's summary equals the local pool's byte for byte", p)
    # A killed task leaves its rows `running`, without results: the rows of task 1 (6 to 10).
    kept = {k: os.stat(os.path.join(out, "run_%d" % k, "log.txt")).st_mtime_ns for k in range(1, 6)}
    for k in range(6, 11):
        with open(os.path.join(out, "run_%d" % k, "status"), "w") as f:
            f.write("running\n")
        os.remove(os.path.join(out, "run_%d" % k, "probes.csv"))
    p = run([srdc, "sweep", "--status", out], env=cluster.env)
    check_run(p.returncode == 2 and "5 running" in p.stdout and "were stopped" in p.stdout,
              "--status counts the killed task's rows as running, and says no job runs them", p)
    p = run(submit, env=cluster.env)
    check_run(p.returncode == 0 and "6 of 12 runs to do" in p.stdout,
              "submitting again: the 5 unfinished rows and the failed one, not the 6 that succeeded", p)
    check(cluster.wait_jobs(), "the second job array ends")
    p = run([srdc, "sweep", "--collect", out])
    check_run(read(os.path.join(out, "summary.csv")) == reference, "after the rerun the summary equals the local "
              "pool's again", p)
    check(all(os.stat(os.path.join(out, "run_%d" % k, "log.txt")).st_mtime_ns == t for k, t in kept.items()),
          "the rows that had succeeded were not run again")


def status_words(out):
    words = {}
    for k in range(1, 13):
        path = os.path.join(out, "run_%d" % k, "status")
        words[k] = open(path).read().strip() if os.path.exists(path) else "not_run"
    return words


def cancelled_job_checks(cluster):
    """A real cancellation: scancel as soon as the first row has succeeded. 12 rows at most 4
    tasks (MaxArraySize), 3 rows each, 2 tasks at a time: the tasks still pending never run."""
    out = os.path.join(work, "cancelled")
    submit = SWEEP + ["--out", out, "--slurm", "--submit"]
    p = run(submit, env=cluster.env)
    job = re.search(r"submitted job (\d+)", p.stdout)
    check_run(job is not None and "4 array tasks of up to 3 runs" in p.stdout, "12 rows as 4 array tasks of 3", p)
    if not job:
        return
    cluster.wait_for(lambda: "ok" in status_words(out).values(), 60)
    cluster.run(["scancel", job.group(1)])
    cluster.wait_jobs()
    before = status_words(out)
    left = sorted(k for k, w in before.items() if w != "ok")
    check(any(k != 12 for k in left), "scancel left rows unfinished (%s)" % ", ".join(
        "%d: %s" % (k, before[k]) for k in left))
    if "running" in before.values():
        p = run([srdc, "sweep", "--status", out], env=cluster.env)
        check_run("were stopped" in p.stdout, "--status: the rows the cancelled tasks were running were stopped", p)
    kept = {k: os.stat(os.path.join(out, "run_%d" % k, "log.txt")).st_mtime_ns for k in before if k not in left}
    p = run(submit, env=cluster.env)
    check_run(p.returncode == 0 and "%d of 12 runs to do" % len(left) in p.stdout,
              "submitting again runs the %d rows that had not succeeded" % len(left), p)
    check(cluster.wait_jobs(), "the resubmitted job ends")
    p = run([srdc, "sweep", "--collect", out])
    check_run(read(os.path.join(out, "summary.csv")) == reference,
              "after the cancelled job's rerun the summary equals the local pool's", p)
    check(all(os.stat(os.path.join(out, "run_%d" % k, "log.txt")).st_mtime_ns == t for k, t in kept.items()),
          "the rows that had succeeded before the cancellation were not run again")


cluster = Cluster(scratch("slurm_"), max_array=4)
try:
    why = cluster.start()
    if why:
        print("# skip: Slurm sweep: %s" % why)
    else:
        slurm_checks(cluster)
        cancelled_job_checks(cluster)
finally:
    cluster.stop()
finish()
