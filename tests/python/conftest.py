"""conftest.py — what the Python tests share: the repository's paths, srdc, and the package
imported from the checkout (python/) with the library the build made ($SRD_LIBRARY)."""
import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture
def srdc():
    path = os.environ.get("SRDC", os.path.join(ROOT, "build", "srdc"))
    if not os.path.exists(path):
        pytest.fail("srdc not found at %s (set SRDC)" % path)
    return path


def srdc_env():
    """The environment for running srdc: without the sanitizer runtime the interpreter may have
    preloaded (tests/CMakeLists.txt), which an instrumented srdc links itself."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def example(name):
    return os.path.join(EXAMPLES, name)
