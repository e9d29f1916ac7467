"""tap.py — the ok / not ok lines the Python test scripts print, and their exit status."""
import sys

failures = 0
checks = 0


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
