"""sensitivity.py — how a static equilibrium's probes, a simulation's probes at its end and the
natural frequencies change with the model's params (libsrd's srd_static_gradient,
srd_simulation_gradient and srd_modal_gradient, as `srdc grad` prints them;
docs/optimization.md)."""
import ctypes

import numpy as np

from . import _lib
from .errors import raise_last
from .model import _param_text

_c = _lib.lib


def _read(handle):
    """{probe: {param: derivative}} and {param: why not derived} from a result handle."""
    grads, why = {}, {}
    for k in range(_c.srd_gradient_param_count(handle)):
        reason = _c.srd_gradient_why(handle, k)
        if reason:
            why[_c.srd_gradient_param(handle, k).decode()] = reason.decode()
    for i in range(_c.srd_gradient_probe_count(handle)):
        size = ctypes.c_int()
        probe = _c.srd_gradient_probe(handle, i, ctypes.byref(size)).decode()
        grads[probe] = {}
        for k in range(_c.srd_gradient_param_count(handle)):
            name = _c.srd_gradient_param(handle, k).decode()
            if name in why:
                continue
            values = np.array(_c.srd_gradient_values(handle, i, k)[:size.value])
            grads[probe][name] = float(values[0]) if size.value == 1 else values
    return grads, why


def _specs(params, what):
    numbers = sorted(k for k, v in params.items() if not isinstance(v, str))
    if numbers:  # the params' units are not known before the model is built
        raise TypeError("%s takes params as texts with units (E='3 MPa'), not numbers: %s" % (what, numbers))
    specs = [_param_text(k, v, {}).encode() for k, v in params.items()]
    return (ctypes.c_char_p * max(len(specs), 1))(*specs), len(specs)


def _result(call, read, free):
    """Calls call(&handle) (a libsrd sensitivity function), raises its error, reads and frees."""
    handle = ctypes.c_void_p()
    status = call(ctypes.byref(handle))
    if status:
        raise_last(status)
    try:
        return read(handle)
    finally:
        free(handle)


def _read_modal(handle):
    """Frequencies, {param: derivatives per mode} and {param or mode: why not} from a handle."""
    n_modes, n_params = _c.srd_frequency_gradient_mode_count(handle), _c.srd_frequency_gradient_param_count(handle)
    freqs = np.array([_c.srd_frequency_gradient_frequency(handle, j) for j in range(n_modes)])
    grads, why = {}, {}
    for k in range(n_params):
        name = _c.srd_frequency_gradient_param(handle, k).decode()
        grads[name] = np.array([_c.srd_frequency_gradient_value(handle, j, k) for j in range(n_modes)])
        reason = _c.srd_frequency_gradient_param_why(handle, k)
        if reason:
            why[name] = reason.decode()
    for j in range(n_modes):
        reason = _c.srd_frequency_gradient_mode_why(handle, j)
        if reason:
            why[j + 1] = reason.decode()
    return freqs, grads, why


def modal_gradient(path, **params):
    """The natural frequencies of the model's `modes` block (Hz) and their derivatives with
    respect to every param (Hz per SI unit), at the model built with `params` (texts with
    units): `freqs, grads, why = srd.modal_gradient("rod.srd", E="3 MPa")`, then
    `grads["E"][0]` is d(f1)/d(E) (NaN where there is none). `why` names the params without a
    derivative and the modes (numbered from 1) without one: rigid modes, repeated frequencies."""
    array, n = _specs(params, "modal_gradient")
    return _result(lambda out: _c.srd_modal_gradient(str(path).encode(), array, n, out), _read_modal,
                   _c.srd_frequency_gradient_free)


def simulation_gradient(path, adjoint=False, **params):
    """The derivatives of the simulate block's probes at the end of the run with respect to every
    param (SI), at the model built with `params` (texts with units), by forward sensitivities or,
    with adjoint=True, by the adjoint: `grads, why = srd.simulation_gradient("swing.srd")`, then
    `grads["tip"]["E"]`. `why` names the params without a derivative and the reason."""
    array, n = _specs(params, "simulation_gradient")
    return _result(lambda out: _c.srd_simulation_gradient(str(path).encode(), array, n, 1 if adjoint else 0, out),
                   _read, _c.srd_gradient_free)


def objective_gradient(path, objective=None, **params):
    """An objective (as `minimize = ...;` holds it; None: the model's `optimize` block's) and its
    derivative with respect to every param, at the model built with `params` (texts with units),
    as `srdc grad --objective` prints them: `value, grads, why = srd.objective_gradient("swing.srd",
    "integral((tip.z + 2 cm)^2) / (1 mm^2 * 1 s)")`, then `grads["E"]` (per Pa)."""
    array, n = _specs(params, "objective_gradient")
    value = ctypes.c_double()
    text = objective.encode() if objective is not None else None
    grads, why = _result(lambda out: _c.srd_objective_gradient(str(path).encode(), array, n, text, ctypes.byref(value),
                                                               out), _read, _c.srd_gradient_free)
    return value.value, grads.get("objective", {}), why


def static_gradient(path, **params):
    """The derivatives of the static block's probes with respect to every param (SI), at the
    model built with `params` (numbers in SI or texts with units):
    `grads, why = srd.static_gradient("arm.srd", E="3 MPa")`, then `grads["tip"]["E"]` (m/Pa).
    `why` names the params without a derivative and the reason."""
    array, n = _specs(params, "static_gradient")
    return _result(lambda out: _c.srd_static_gradient(str(path).encode(), array, n, out), _read, _c.srd_gradient_free)
