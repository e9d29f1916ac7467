#!/usr/bin/env python3
"""temp_leftovers.py setup|check DIR — the suite's temporary directory: every test runs with
TMPDIR=DIR (tests/CMakeLists.txt). `setup`, before the tests, makes DIR exist and empty;
`check`, after all of them, lists what they left there, removes it, and fails if anything was
left: every test removes the files it makes, also when one of its checks fails."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import check, finish  # noqa: E402

mode, tmp = sys.argv[1], sys.argv[2]
if mode == "setup":
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    check(os.path.isdir(tmp) and not os.listdir(tmp), "temporary directory %s is empty before the tests" % tmp)
else:
    left = sorted(os.listdir(tmp)) if os.path.isdir(tmp) else []
    check(os.path.isdir(tmp) and not left,
          "the tests left nothing in their temporary directory %s (left: %s)" % (tmp, ", ".join(left) or "nothing"))
    for name in left:
        path = os.path.join(tmp, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
finish()
