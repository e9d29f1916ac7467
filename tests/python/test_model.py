"""test_model.py — srd.Model: zero-copy views, state round trips, the same numbers as
`srdc run` and as a simulator built with --shared, and clear exceptions for bad use."""
import csv
import os
import subprocess

import numpy as np
import pytest

import srd
from conftest import example, srdc_env


def test_views_are_zero_copy_and_stay_in_step():
    m = srd.Model(example("rod_drop.srd"))
    x, q = m.x, m.q
    assert x.shape == (m.n_nodes, 3) and q.shape == (m.n_dofs,)
    address = x.__array_interface__["data"][0]
    m.step(20)
    assert m.x.__array_interface__["data"][0] == address, "the view is the library's memory, not a copy"
    assert np.array_equal(x, q[m.node_dof[:, None] + np.arange(3)]), "x is q at every node's DOFs"
    assert m.t == pytest.approx(20 * m.dt, rel=1e-12)


def test_state_round_trip():
    a = srd.Model(example("rod_drop.srd"))
    b = srd.Model(example("rod_drop.srd"))
    a.x[3] += (0, 0, 1e-3)              # a new initial state through the node view ...
    a.xdot[3] = (0, 0, -0.5)
    b.q[b.node_dof[3] + 2] += 1e-3      # ... and the same through q and v
    b.v[b.node_dof[3] + 2] = -0.5
    a.step(30)
    b.step(30)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v), "the state written is the one the run starts from"
    assert np.array_equal(a.x, b.x)
    a.q = a.q.copy()                    # writing back what was read changes nothing
    a.v = np.array(a.v)
    a.step(10)
    b.step(10)
    assert np.array_equal(a.q, b.q)


def _probes_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def test_same_numbers_as_srdc_run(srdc, tmp_path):
    subprocess.run([srdc, "run", example("rod_drop.srd"), "--duration", "0.05", "--out", str(tmp_path), "--quiet"],
                   check=True, env=srdc_env())
    header, rows = _probes_csv(tmp_path / "probes.csv")
    m = srd.Model(example("rod_drop.srd"))
    last = rows[-1]
    m.run_until(last[0])
    assert m.t == pytest.approx(last[0], abs=1e-12)
    for name in ("low_z", "high_z"):
        assert m.probe(name) == pytest.approx(last[header.index(name)], rel=1e-11, abs=1e-14)
    assert np.allclose(m.probe("middle"), [last[header.index("middle." + c)] for c in "xyz"], rtol=1e-11, atol=1e-14)


def test_built_shared_library_gives_the_same_bits(srdc, tmp_path):
    library = tmp_path / "snake.so"
    subprocess.run([srdc, "build", example("snake.srd"), "--shared", "-o", str(library), "--quiet"], check=True,
                   env=srdc_env())
    built = srd.Model(library, amplitude="12/m")
    jit = srd.Model(example("snake.srd"), amplitude=12.0)
    assert built.params == jit.params == {"amplitude": 12.0, "frequency": 1.0}
    built.step(40)
    jit.step(40)
    assert np.array_equal(built.q, jit.q)


def test_batch_equals_one_at_a_time():
    batch = srd.Batch(example("snake.srd"), 3, threads=2)
    alone = srd.Model(example("snake.srd"))
    batch.step(25)
    alone.step(25)
    for m in batch.models:
        assert np.array_equal(m.q, alone.q)
    assert np.array_equal(batch.probe("head_x"), np.full(3, alone.probe("head_x")))


def test_set_param_builds_anew_and_old_views_survive():
    m = srd.Model(example("snake.srd"))
    old = m.x
    m.step(5)
    frozen = old.copy()
    m.set_param("amplitude", 5.0)
    assert m.t == 0 and m.params["amplitude"] == 5.0
    m.step(5)
    assert np.array_equal(old, frozen), "a view of the model before set_param keeps its memory, unchanged"
    assert not np.array_equal(m.x, frozen)


def test_errors_are_exceptions_with_srd_messages(tmp_path):
    bad = tmp_path / "bad.srd"
    bad.write_text("rod r { nodes = 3; }\nsimulate { dt = 1 ms; duration = 1 s; }\n")
    with pytest.raises(srd.ModelError) as e:
        srd.Model(bad)
    assert "bad.srd:1:" in str(e.value) and "error:" in str(e.value) and "^" in str(e.value)
    m = srd.Model(example("snake.srd"))
    with pytest.raises(srd.ArgumentError, match="no param or input `bias`"):
        m.set_input("bias", 0.1)
    with pytest.raises(srd.ArgumentError, match="is a param"):
        m.set_input("amplitude", 1.0)
    with pytest.raises(ValueError, match="shape"):
        m.x = np.zeros((3, 3))
    with pytest.raises(TypeError):
        m.q = np.array(["a"] * m.n_dofs)
    with pytest.raises(TypeError):
        m.set_input("amplitude", "fast")
    with pytest.raises(srd.ArgumentError, match="no probe"):
        m.probe("tail")
    with pytest.raises(srd.ArgumentError):
        m.step(-1)
    view = m.x
    m.close()
    with pytest.raises(srd.StateError, match="closed"):
        m.step()
    with pytest.raises(srd.StateError):
        m.x
    assert view.shape == (21, 3) and np.isfinite(view).all(), "a view outlives close() without a crash"


def test_failure_then_reset():
    m = srd.Model(os.path.join(os.path.dirname(__file__), "..", "physics", "failing.srd"))
    with pytest.raises(srd.NumericalError, match="t = "):
        m.run(1.0)
    t = m.t
    assert 0 < t < 1 and np.isfinite(m.q).all()
    with pytest.raises(srd.StateError, match="reset"):
        m.step()
    m.reset()
    m.step()
    assert m.t > 0


def test_energy_of_a_free_fall():
    """rod_drop before it reaches the floor: kinetic + potential energy constant to the implicit
    Euler step's dissipation, which is O(dt) per unit time: 1e-3 relative here."""
    m = srd.Model(example("rod_drop.srd"))
    ke0, pe0 = m.energy()
    m.run(0.02)
    ke, pe = m.energy()
    assert ke > 0 and pe < pe0
    assert ke + pe == pytest.approx(ke0 + pe0, rel=1e-3, abs=1e-3 * abs(pe0 - pe))


def test_snapshots_continue_bit_for_bit():
    """A snapshot holds what q and v do not: time, rod frames, rigid bodies' turns, inputs."""
    for name, inputs in (("rod_drop.srd", {}), ("snake_goal.srd", {"turn": -3.0}), ("rigid_gripper.srd", {})):
        m = srd.Model(example(name))
        for k, v in inputs.items():
            m.set_input(k, v)
        m.step(15)
        state = m.save_state()
        m.step(15)
        reference = m.q.copy()
        m.reset()
        m.load_state(state)
        assert m.t == pytest.approx(15 * m.dt) and m.inputs == inputs
        m.step(15)
        assert np.array_equal(m.q, reference), name
        other = srd.Model(example(name))
        other.load_state(state)
        other.step(15)
        assert np.array_equal(other.q, reference), name + " in another instance"
    with pytest.raises(srd.ModelError, match="different model"):
        srd.Model(example("snake.srd")).load_state(state)
    with pytest.raises(TypeError):
        m.load_state("state")


def test_contact_between_parts_is_action_and_reaction():
    """examples/ply.srd at 1.5 s, its strands pressed together: the forces the parts exert on
    each other are there, and they sum to zero over the model (Newton's third law, to 1e-12 of
    the largest)."""
    m = srd.Model(example("ply.srd"))
    m.run(1.5)
    f = m.contact_forces("parts")[m.node_dof[:, None] + np.arange(3)]
    largest = np.abs(f).max()
    assert largest > 1e-3
    assert np.abs(f.sum(axis=0)).max() < 1e-12 * largest
    with pytest.raises(srd.ArgumentError, match="-3 the model's parts"):
        m.contact_forces(-4)


WELDED = """
material silicone { E = 2 GPa; nu = 0.45; rho = 1100 kg/m^3; }
rod arm { path = line((-0.135, 0, 0) m, (-0.015, 0, 0) m); nodes = 10; radius = 2 mm; material = silicone; }
clamp arm.start;
body box { position = (0, 0, 0) m; shape = box; size = (3 cm, 2 cm, 1 cm); mass = 20 g; }
joint weld { type = fixed; a = arm.end; b = box; }
gravity = (0, 0, -9.81) m/s^2;
static { load_steps = 10; tolerance = 1e-10; }
simulate { start = equilibrium; method = implicit_euler; dt = 2 ms; duration = 0.02 s; tolerance = 1e-10; }
"""


def test_start_from_equilibrium_keeps_the_bodies_turns(tmp_path):
    """A run from a static equilibrium starts with the bodies turned as the static solve found them
    (the DOFs alone would put the box back at its reference turn, and it would jump)."""
    path = tmp_path / "welded.srd"
    path.write_text(WELDED)
    m = srd.Model(str(path))
    x0 = m.x.copy()
    assert x0[:, 2].min() < -1e-4, "the rod sags under the box at the equilibrium"
    m.step(5)
    assert np.abs(m.x - x0).max() < 1e-9, "at rest at the equilibrium, the run stays there"
