"""test_sensitivity.py — srd.static_gradient and srd.simulation_gradient give what `srdc grad`
prints (the same solves and tangents through libsrd), name the params they cannot derive, and
refuse a model without the block with srd's message."""
import os
import re
import subprocess

import numpy as np
import pytest

import srd
from conftest import ROOT, srdc_env

ARM = os.path.join(ROOT, "tests", "physics", "grad", "arm.srd")
SWING = os.path.join(ROOT, "tests", "physics", "grad", "swing.srd")
REACT = os.path.join(ROOT, "tests", "physics", "grad", "react.srd")


def test_same_as_srdc_grad(srdc):
    grads, why = srd.static_gradient(ARM, kappa0="6/m")
    assert why == {}
    printed = subprocess.run([srdc, "grad", ARM, "-p", "kappa0=6/m"], capture_output=True, text=True,
                             check=True, env=srdc_env()).stdout
    seen = 0
    for probe, param, values in re.findall(r"d\((\w+)\)/d\((\w+)\) = \(?([^)]*?)\)? \S+\n", printed):
        expected = np.array([float(v) for v in values.split(",")])
        assert np.allclose(np.atleast_1d(grads[probe][param]), expected, rtol=1e-8, atol=0), (probe, param)
        seen += 1
    assert seen == 15, "three probes, five params"


def printed_force_probes(srdc, name, pattern):
    """srd.static_gradient of tests/physics/grad/NAME and what `srdc grad` prints that matches
    pattern (probe, param, values)."""
    path = os.path.join(ROOT, "tests", "physics", "grad", name)
    grads, why = srd.static_gradient(path)
    printed = subprocess.run([srdc, "grad", path], capture_output=True, text=True, check=True, env=srdc_env()).stdout
    return grads, why, re.findall(pattern, printed)


def test_reaction_probe(srdc):
    """A reaction probe's derivative: its force and moment, six values, as `srdc grad` prints them."""
    grads, why, found = printed_force_probes(srdc, "react.srd",
                                             r"d\((R)\)/d\((\w+)\) = \(([^)]*)\) \S+, moment \(([^)]*)\)")
    assert why == {} and len(found) == 3
    for probe, param, force, moment in found:
        expected = np.array([float(v) for v in (force + "," + moment).split(",")])
        assert np.allclose(grads[probe][param], expected, rtol=1e-8, atol=1e-30), param


def test_contact_probe(srdc):
    """Contact probes' derivatives (the ground's and a sphere's forces), as `srdc grad` prints them."""
    grads, why, found = printed_force_probes(srdc, "press.srd", r"d\(([GS])\)/d\((\w+)\) = \(([^)]*)\) ")
    assert why == {} and len(found) == 8
    for probe, param, values in found:
        expected = np.array([float(v) for v in values.split(",")])
        assert np.allclose(grads[probe][param], expected, rtol=1e-8, atol=1e-30), (probe, param)


def test_why_and_errors(tmp_path):
    text = open(ARM).read().replace("nodes = 25;", "nodes = n;").replace("param E =", "param n = 25 in 10..40;\nparam E =")
    shaped = tmp_path / "shaped.srd"
    shaped.write_text(text)
    grads, why = srd.static_gradient(shaped)
    assert why == {"n": "it sets the discretisation"} and "n" not in grads["tip"]
    with pytest.raises(srd.ModelError, match="no `static` block"):
        srd.static_gradient(os.path.join(ROOT, "examples", "snake.srd"))
    with pytest.raises(TypeError, match="texts with units"):
        srd.static_gradient(ARM, E=3e6)


@pytest.mark.parametrize("adjoint", [False, True])
def test_simulation_same_as_srdc_grad(srdc, adjoint):
    grads, why = srd.simulation_gradient(SWING, adjoint=adjoint, kappa0="6/m")
    assert why == {}
    printed = subprocess.run([srdc, "grad", SWING, "-p", "kappa0=6/m"], capture_output=True, text=True,
                             check=True, env=srdc_env()).stdout
    seen = 0
    for probe, param, values in re.findall(r"d\((\w+)\)/d\((\w+)\) = \(?([^)]*?)\)? \S+\n", printed):
        expected = np.array([float(v) for v in values.split(",")])
        assert np.allclose(np.atleast_1d(grads[probe][param]), expected, rtol=1e-10, atol=0), (probe, param)
        seen += 1
    assert seen == 8, "two probes, four params"
    for param, force, moment in re.findall(r"d\(R\)/d\((\w+)\) = \(([^)]*)\) \S+, moment \(([^)]*)\)", printed):
        expected = np.array([float(v) for v in (force + "," + moment).split(",")])
        assert np.allclose(grads["R"][param], expected, rtol=1e-9, atol=0), ("R", param)  # forward or adjoint
        seen += 1
    assert seen == 12, "and the clamp's reaction"
    with pytest.raises(srd.ModelError, match="no `simulate` block"):
        srd.simulation_gradient(ARM)


def adjoint_as_printed(srdc, tmp_path, name, method, probe, n_params):
    """tests/physics/grad/NAME with METHOD: the adjoint of PROBE (a vector) by the package against
    the forward sensitivities srdc grad prints, for every param."""
    model = tmp_path / name
    model.write_text(open(os.path.join(ROOT, "tests", "physics", "grad", name)).read().replace("METHOD", method))
    grads, why = srd.simulation_gradient(model, adjoint=True)
    assert why == {}
    printed = subprocess.run([srdc, "grad", str(model)], capture_output=True, text=True, check=True,
                             env=srdc_env()).stdout
    found = re.findall(r"d\(%s\)/d\((\w+)\) = \(([^)]*)\)" % probe, printed)
    assert len(found) == n_params, "every param"
    for param, values in found:
        expected = np.array([float(v) for v in values.split(",")])
        assert np.allclose(grads[probe][param][:3], expected, rtol=1e-9, atol=0), param


def test_simulation_with_a_rigid_body(srdc, tmp_path):
    """A spinning box tethered to a rod (Newmark): its angular velocity."""
    adjoint_as_printed(srdc, tmp_path, "bodies.srd", "newmark", "spin", 5)


def test_simulation_with_an_explicit_method(srdc, tmp_path):
    """The lattice slab on frictional ground under RK4: its corner."""
    adjoint_as_printed(srdc, tmp_path, "explicit.srd", "rk4", "corner", 5)


ROD = os.path.join(ROOT, "tests", "physics", "grad_modal", "rod.srd")
SAG = os.path.join(ROOT, "tests", "physics", "grad_modal", "sag.srd")


def test_modal_same_as_srdc_grad(srdc):
    freqs, grads, why = srd.modal_gradient(SAG, F="3 mN")
    assert why == {} and len(freqs) == 6
    printed = subprocess.run([srdc, "grad", SAG, "-p", "F=3mN"], capture_output=True, text=True, check=True,
                             env=srdc_env()).stdout
    seen = 0
    for mode, param, value in re.findall(r"d\(f(\d+)\)/d\((\w+)\) = (\S+) ", printed):
        assert np.isclose(grads[param][int(mode) - 1], float(value), rtol=1e-8, atol=0), (mode, param)
        seen += 1
    assert seen == 24, "six modes, four params"


def test_modal_why(tmp_path):
    freqs, grads, why = srd.modal_gradient(ROD)
    assert np.allclose(grads["E"], freqs / (2 * 3e6), rtol=1e-9, atol=0)  # f ~ sqrt(E)
    round_rod = tmp_path / "round.srd"
    round_rod.write_text(open(ROD).read().replace("planar;\n", ""))
    freqs, grads, why = srd.modal_gradient(round_rod)
    assert np.isnan(grads["E"]).all() and sorted(why) == [1, 2, 3, 4, 5, 6]
    assert "repeated frequency" in why[1]
    with pytest.raises(srd.ModelError, match="no `modes` block"):
        srd.modal_gradient(ARM)


def test_objective_same_as_srdc_grad(srdc):
    expr = "integral((tip.z + 2 cm)^2) / (1 mm^2 * 1 s) + (tip.x / 1 cm)^2"
    value, grads, why = srd.objective_gradient(SWING, expr, kappa0="6/m")
    assert why == {} and set(grads) == {"E", "rho", "kappa0", "F"}
    printed = subprocess.run([srdc, "grad", SWING, "-p", "kappa0=6/m", "--objective", expr], capture_output=True,
                             text=True, check=True, env=srdc_env()).stdout
    assert np.isclose(value, float(re.search(r"objective \(--objective\) = (\S+);", printed).group(1)), rtol=1e-12)
    for param, d in re.findall(r"d\(objective\)/d\((\w+)\) = (\S+) per", printed):
        assert np.isclose(grads[param], float(d), rtol=1e-10), param
    with pytest.raises(srd.ModelError, match="unknown name `tipz`"):
        srd.objective_gradient(SWING, "tipz / 1 cm")
    with pytest.raises(srd.ModelError, match="no objective"):
        srd.objective_gradient(SWING)


def test_objective_of_a_reaction_moment(srdc):
    """A reaction probe's moment and force by their members, as srdc grad derives them."""
    expr = "(R.mz / (1 uN*m))^2 + R.my / (1 uN*m) + R.fx / 1 mN"
    value, grads, why = srd.objective_gradient(REACT, expr)
    assert why == {} and set(grads) == {"E", "F", "rho"}
    printed = subprocess.run([srdc, "grad", REACT, "--objective", expr], capture_output=True, text=True, check=True,
                             env=srdc_env()).stdout
    assert np.isclose(value, float(re.search(r"objective \(--objective\) = (\S+);", printed).group(1)), rtol=1e-12)
    for param, d in re.findall(r"d\(objective\)/d\((\w+)\) = (\S+) per", printed):
        assert np.isclose(grads[param], float(d), rtol=1e-10), param
    with pytest.raises(srd.ModelError, match="`tip` is not a reaction probe"):
        srd.objective_gradient(REACT, "tip.mx / (1 N*m)")
