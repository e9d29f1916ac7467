"""tap.py — the ok / not ok lines the Python test scripts print, their exit status, and the
temporary directories they work in."""
import atexit
import os
import shutil
import signal
import sys
import tempfile

failures = 0
checks = 0


def examples_chosen(names):
    """The example names to run: all of them, or those in $SRD_EXAMPLES (space-separated), which
    the sanitizer build sets to a sample covering every kind of object (tests/CMakeLists.txt)."""
    only = os.environ.get("SRD_EXAMPLES", "").split()
    return [n for n in names if not only or n in only]


def check(ok, what):
    """Prints one result line; remembers a failure."""
    global failures, checks
    checks += 1
    failures += not ok
    print(("ok - " if ok else "not ok - ") + what)


def summary():
    """Prints the count of passed and failed checks; returns the failures."""
    print("%d passed, %d failed" % (checks - failures, failures))
    return failures


def finish():
    """Prints the summary and exits 1 if any check failed, else 0."""
    sys.exit(1 if summary() else 0)


_root = None


def _remove_root():
    if os.environ.get("SRD_KEEP_TEMP"):
        print("# SRD_KEEP_TEMP: the runs' files are kept in " + _root)
    else:
        shutil.rmtree(_root, ignore_errors=True)


def scratch(prefix="run_"):
    """A new empty directory for one run's files. All of them live in one directory per script,
    made on first use under $TMPDIR (srd_<script>_...) and removed when the script ends, however
    it ends: normally, after failed checks, on an exception or on SIGTERM (ctest's timeout).
    SRD_KEEP_TEMP=1 keeps it, for looking at the runs of a failing check."""
    global _root
    if _root is None:
        name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        _root = tempfile.mkdtemp(prefix="srd_%s_" % name)
        atexit.register(_remove_root)
        # exit through sys.exit, which runs the atexit handlers
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return tempfile.mkdtemp(prefix=prefix, dir=_root)
