"""slurm_local.py — a single-node Slurm cluster on this machine, for tests and benchmarks of
`srdc sweep --slurm`: munged, slurmctld and slurmd started as root in the foreground, children
of the calling script, with every file in one directory; no cgroups (proctrack/linuxproc,
task/none), no accounting, no systemd. Cluster(dir).start() returns None or why it could not
start; stop() ends the daemons. SLURM_CONF in Cluster.env points sbatch and squeue at it."""
import os
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_conf(d, host, max_array):
    return "\n".join([
        "ClusterName=srdtest", "SlurmctldHost=%s(127.0.0.1)" % host, "SlurmUser=root", "SlurmdUser=root",
        "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
        "AuthType=auth/munge", "CredType=cred/munge", "AuthInfo=socket=%s/munge.sock" % d,
        "StateSaveLocation=%s/state" % d, "SlurmdSpoolDir=%s/spool" % d,
        "SlurmctldPidFile=%s/slurmctld.pid" % d, "SlurmdPidFile=%s/slurmd.pid" % d,
        "SlurmctldLogFile=%s/slurmctld.log" % d, "SlurmdLogFile=%s/slurmd.log" % d,
        # no cgroups, no accounting: nothing outside this directory
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none", "MpiDefault=none",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "ReturnToService=2", "MaxArraySize=%d" % max_array,
        "NodeName=%s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN" % host,
        "PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP" % host, ""])


class Cluster:
    """munged, slurmctld and slurmd in the foreground, children of this script."""

    def __init__(self, directory, max_array=1001):
        """directory: an empty directory for the daemons' files, removed by the caller;
        max_array: the cluster's MaxArraySize."""
        self.procs, self.max_array = [], max_array
        # A Unix socket's path is short (108 bytes): a long $TMPDIR moves the daemons to /tmp.
        self.dir = directory
        if len(self.dir) > 80:
            self.dir = tempfile.mkdtemp(prefix="srd_slurm_", dir="/tmp")
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(self.dir, sub))
        self.env = dict(SLURM_CONF=os.path.join(self.dir, "slurm.conf"))

    def start(self):
        missing = [c for c in ("munged", "slurmctld", "slurmd", "sbatch", "squeue") if not shutil.which(c)]
        if missing:
            return "not installed: %s (Debian: munge slurmctld slurmd slurm-client)" % ", ".join(missing)
        if os.geteuid() != 0:
            return "slurmd and munged need root"
        d = self.dir
        with open(os.path.join(d, "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(d, "munge.key"), 0o600)
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write(slurm_conf(d, socket.gethostname().split(".")[0], self.max_array))
        # --force: the socket's directory (under $TMPDIR, 0700) is only root's, as is the cluster
        self.spawn(["munged", "-F", "--force", "--key-file=%s/munge.key" % d, "--socket=%s/munge.sock" % d,
                    "--pid-file=%s/munged.pid" % d, "--log-file=%s/munged.log" % d,
                    "--seed-file=%s/munged.seed" % d])
        if not self.wait_for(lambda: os.path.exists(os.path.join(d, "munge.sock")), 10):
            return "munged did not start (%s)" % self.log("munged.log")
        self.spawn(["slurmctld", "-D", "-i"])
        self.spawn(["slurmd", "-D"])
        if not self.wait_for(self.node_idle, 30):
            return "slurmctld or slurmd did not start (%s %s)" % (self.log("slurmctld.log"), self.log("slurmd.log"))
        return None

    def spawn(self, args):
        self.procs.append(subprocess.Popen(args, env=dict(os.environ, **self.env), stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, cwd=self.dir))

    def log(self, name):
        path = os.path.join(self.dir, name)
        lines = open(path, errors="replace").read().splitlines() if os.path.exists(path) else ["no log"]
        return "%s: %s" % (name, " / ".join(lines[-3:]))

    def node_idle(self):
        if any(p.poll() is not None for p in self.procs):
            return None  # a daemon died: stop waiting
        p = self.run(["sinfo", "-h", "-o", "%T"])
        return p.returncode == 0 and "idle" in p.stdout

    @staticmethod
    def wait_for(test, seconds):
        end = time.time() + seconds
        while time.time() < end:
            got = test()
            if got is None or got:  # None: it will never come
                return bool(got)
            time.sleep(0.2)
        return False

    def wait_jobs(self, seconds=60):
        return self.wait_for(lambda: not self.run(["squeue", "-h"]).stdout.strip(), seconds)

    def run(self, args):
        return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **self.env), timeout=20)

    def stop(self):
        for p in reversed(self.procs):  # slurmd, slurmctld, then munged
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if self.dir.startswith("/tmp/"):
            shutil.rmtree(self.dir, ignore_errors=True)
