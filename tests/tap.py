"""tap.py — the ok / not ok lines the Python test scripts print, and their exit status."""
import sys

failures = 0


def check(ok, what):
    """Prints one result line; remembers a failure."""
    global failures
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failures += 1


def finish():
    """Exits 1 if any check failed, else 0."""
    sys.exit(1 if failures else 0)
