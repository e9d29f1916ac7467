"""test_inputs.py — inputs set from Python change a run exactly as the same schedule written in
the model file does (bit for bit), hold until set again, return to their defaults on reset,
and are refused outside their range or when they are params."""
import numpy as np
import pytest

import srd
from conftest import example


def _scheduled_copy(tmp_path):
    """snake_goal.srd with the input replaced by a schedule: 4 /m from t = 1 s on."""
    text = open(example("snake_goal.srd")).read()
    assert "+ turn);" in text
    path = tmp_path / "snake_scheduled.srd"
    path.write_text(text.replace("+ turn);", "+ (t > 1 s ? 4 /m : 0 /m));"))
    return path


def test_input_equals_the_schedule_in_the_file(tmp_path):
    driven = srd.Model(example("snake_goal.srd"))
    scheduled = srd.Model(_scheduled_copy(tmp_path))
    for _ in range(60):
        # A step from t evaluates its actuation at its end, t + dt: the input for that instant.
        driven.set_input("turn", 4.0 if driven.t + driven.dt > 1.0 else 0.0)
        driven.step()
        scheduled.step()
    assert driven.t == scheduled.t
    assert np.array_equal(driven.q, scheduled.q), "bit for bit"
    assert driven.probe("head")[1] < -1e-3, "and the turn took effect"


def test_inputs_hold_and_reset():
    m = srd.Model(example("snake_goal.srd"))
    assert m.input_names == ["turn"] and m.inputs == {"turn": 0.0}
    m.set_input("turn", -3.5)
    m.step(4)
    assert m.input("turn") == -3.5, "an input holds until set again"
    m.reset()
    assert m.inputs == {"turn": 0.0} and m.t == 0


def test_input_errors():
    m = srd.Model(example("snake_goal.srd"))
    with pytest.raises(srd.ArgumentError, match="outside the range of input `turn`"):
        m.set_input("turn", 100.0)
    with pytest.raises(srd.ArgumentError, match="did you mean `turn`"):
        m.set_input("tunr", 1.0)
    with pytest.raises(srd.ArgumentError, match="is an input"):
        m.set_param("turn", 1.0)
    with pytest.raises(TypeError):
        m.set_input("turn", np.array([1.0, 2.0]))
    assert m.input("turn") == 0.0, "a refused value changes nothing"


def test_batch_inputs_per_model():
    batch = srd.Batch(example("snake_goal.srd"), 3)
    batch.set_input("turn", [-4.0, 0.0, 4.0])
    batch.step(100)
    y = batch.probe("head")[:, 1]
    assert y[0] > y[1] > y[2], "anticlockwise, straight and clockwise: heads at decreasing y (%s)" % y
