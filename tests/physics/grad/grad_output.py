"""grad_output.py — reads what `srdc grad` prints: {param: {probe: [values]}}."""
import re


def derivatives(stdout):
    """The derivatives printed under each "name = value unit:" line, by param then probe."""
    out, param = {}, None
    for line in stdout.splitlines():
        head = re.match(r"(\w+) = \S+ .*:$", line)
        if head:
            param = head.group(1)
            out[param] = {}
        term = re.match(r"  d\((\w+)\)/d\((\w+)\) = \(?([^)]*?)\)? \S+$", line)
        if term and term.group(2) in out:
            out[term.group(2)][term.group(1)] = [float(v) for v in term.group(3).split(",")]
    return out
