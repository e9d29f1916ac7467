"""setup.py — puts libsrd.so (from $SRD_LIBRARY, else the checkout's build/) and the .srd
standard library into the package being installed, so that it works without the checkout."""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class WithLibrary(build_py):
    def run(self):
        super().run()
        library = os.environ.get("SRD_LIBRARY") or os.path.join(HERE, "..", "build", "libsrd.so")
        if not os.path.exists(library):
            raise SystemExit("srd: %s not found: build it first (sh scripts/build.sh build) or set SRD_LIBRARY"
                             % library)
        target = os.path.join(self.build_lib, "srd")
        shutil.copy(library, os.path.join(target, "libsrd.so"))
        os.makedirs(os.path.join(target, "stdlib"), exist_ok=True)
        for module in glob.glob(os.path.join(HERE, "..", "stdlib", "*.srd")):
            shutil.copy(module, os.path.join(target, "stdlib"))


setup(cmdclass={"build_py": WithLibrary})
