"""test_install.py — the package installs with pip from the checkout into a virtual environment
that sees Debian's numpy, without any package registry, and works there away from the checkout."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT, example


def test_pip_install_into_a_venv(tmp_path):
    source = tmp_path / "checkout"
    shutil.copytree(os.path.join(ROOT, "python"), source / "python", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(ROOT, "stdlib"), source / "stdlib")
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env)], check=True)
    library = os.path.abspath(os.environ.get("SRD_LIBRARY", os.path.join(ROOT, "build", "libsrd.so")))
    pip_env = dict(os.environ, SRD_LIBRARY=library)
    subprocess.run([str(env / "bin" / "pip"), "install", "-q", "--no-build-isolation", "--no-index",
                    str(source / "python")], check=True, env=pip_env)
    run_env = {k: v for k, v in os.environ.items() if k not in ("SRD_LIBRARY", "PYTHONPATH", "SRD_STDLIB")}
    script = ("import srd; m = srd.Model(%r); m.step(2); "
              "print(srd.library_path); print(m.x.shape)" % example("snake.srd"))
    out = subprocess.run([str(env / "bin" / "python"), "-c", script], check=True, env=run_env, cwd=str(tmp_path),
                         capture_output=True, text=True).stdout.split("\n")
    assert out[0].startswith(str(env)), "the installed copy of libsrd.so is the one loaded: %s" % out[0]
    assert out[1] == "(21, 3)"
