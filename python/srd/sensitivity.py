"""sensitivity.py — how a static equilibrium's probes change with the model's params
(libsrd's srd_static_gradient and srd_simulation_gradient, as `srdc grad` prints them;
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


def _specs(fn, params):
    numbers = sorted(k for k, v in params.items() if not isinstance(v, str))
    if numbers:  # the params' units are not known before the model is built
        raise TypeError("%s takes params as texts with units (E='3 MPa'), not numbers: %s" % (fn, numbers))
    specs = [_param_text(k, v, {}).encode() for k, v in params.items()]
    return (ctypes.c_char_p * max(len(specs), 1))(*specs), len(specs)


def simulation_gradient(path, adjoint=False, **params):
    """The derivatives of the simulate block's probes at the end of the run with respect to every
    param (SI), at the model built with `params` (texts with units), by forward sensitivities or,
    with adjoint=True, by the adjoint: `grads, why = srd.simulation_gradient("swing.srd")`, then
    `grads["tip"]["E"]`. `why` names the params without a derivative and the reason."""
    array, n = _specs("simulation_gradient", params)
    handle = ctypes.c_void_p()
    status = _c.srd_simulation_gradient(str(path).encode(), array, n, 1 if adjoint else 0, ctypes.byref(handle))
    if status:
        raise_last(status)
    try:
        return _read(handle)
    finally:
        _c.srd_gradient_free(handle)


def static_gradient(path, **params):
    """The derivatives of the static block's probes with respect to every param (SI), at the
    model built with `params` (numbers in SI or texts with units):
    `grads, why = srd.static_gradient("arm.srd", E="3 MPa")`, then `grads["tip"]["E"]` (m/Pa).
    `why` names the params without a derivative and the reason."""
    array, n = _specs("static_gradient", params)
    handle = ctypes.c_void_p()
    status = _c.srd_static_gradient(str(path).encode(), array, n, ctypes.byref(handle))
    if status:
        raise_last(status)
    try:
        return _read(handle)
    finally:
        _c.srd_gradient_free(handle)
