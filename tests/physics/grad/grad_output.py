"""grad_output.py — reads what `srdc grad` prints: {param: {probe: [values]}}."""
import re


def derivatives(stdout):
    """The derivatives printed under each "name = value unit:" line, by param then probe (a
    reaction's six values: its force, then its moment)."""
    out, param = {}, None
    for line in stdout.splitlines():
        head = re.match(r"(\w+) = \S+ .*:$", line)
        if head:
            param = head.group(1)
            out[param] = {}
        term = re.match(r"  d\((\w+)\)/d\((\w+)\) = \(?([^)]*?)\)? \S+$", line)
        if term and term.group(2) in out:
            out[term.group(2)][term.group(1)] = [float(v) for v in term.group(3).split(",")]
        reaction = re.match(r"  d\((\w+)\)/d\((\w+)\) = \(([^)]*)\) \S+, moment \(([^)]*)\) \S+$", line)
        if reaction and reaction.group(2) in out:  # a reaction: its force, then its moment
            values = reaction.group(3).split(",") + reaction.group(4).split(",")
            out[reaction.group(2)][reaction.group(1)] = [float(v) for v in values]
    return out
