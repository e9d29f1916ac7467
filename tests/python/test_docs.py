"""test_docs.py — the first example of docs/python.md runs as written and prints what its
comments say."""
import os
import re
import subprocess
import sys

from conftest import ROOT


def test_first_example_of_python_md():
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    code = re.search(r"## A first example\n\n```python\n(.*?)```", text, re.S).group(1)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    said = [line.split("# ", 1)[1].strip() for line in code.splitlines() if "print(" in line and "# " in line]
    assert len(out) == len(said) == 2
    for printed, comment in zip(out, said):
        assert " ".join(printed.split()) == " ".join(comment.split()), (printed, comment)
