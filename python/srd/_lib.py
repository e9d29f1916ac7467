"""_lib.py — loads libsrd (the C API, api/srd.h) with ctypes and declares its functions.

The library is looked for, in order: $SRD_LIBRARY; libsrd.so inside this package (a pip install
copies it there); the build tree of the checkout this package sits in (build/libsrd.so).
"""
import ctypes
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("SRD_LIBRARY")
    if env:
        yield env
        return
    yield os.path.join(_here, "libsrd.so")
    yield os.path.join(_here, "..", "..", "build", "libsrd.so")


def _load():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return ctypes.CDLL(os.path.abspath(path)), os.path.abspath(path)
        tried.append(os.path.abspath(path))
    raise ImportError("srd: cannot find libsrd.so (looked at %s); build it with `sh scripts/build.sh build` "
                      "or set SRD_LIBRARY to its path" % ", ".join(tried))


# An installed package carries the standard library of .srd modules beside libsrd.so.
if os.path.isdir(os.path.join(_here, "stdlib")):
    os.environ.setdefault("SRD_STDLIB", os.path.join(_here, "stdlib"))

lib, path = _load()

c_double_p = ctypes.POINTER(ctypes.c_double)
c_int_p = ctypes.POINTER(ctypes.c_int)
handle = ctypes.c_void_p

_signatures = {
    "srd_last_error": (ctypes.c_char_p, []),
    "srd_error": (ctypes.c_char_p, [handle]),
    "srd_version": (ctypes.c_char_p, []),
    "srd_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                ctypes.POINTER(handle)]),
    "srd_close": (None, [handle]),
    "srd_reset": (ctypes.c_int, [handle]),
    "srd_run_steps": (ctypes.c_int, [handle, ctypes.c_int]),
    "srd_run_until": (ctypes.c_int, [handle, ctypes.c_double]),
    "srd_set_dt": (ctypes.c_int, [handle, ctypes.c_double]),
    "srd_time": (ctypes.c_double, [handle]),
    "srd_dt": (ctypes.c_double, [handle]),
    "srd_steps": (ctypes.c_long, [handle]),
    "srd_run_many": (ctypes.c_int, [ctypes.POINTER(handle), ctypes.c_int, ctypes.c_int, ctypes.c_int, c_int_p]),
    "srd_param_count": (ctypes.c_int, [handle]),
    "srd_param_name": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_param_unit": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_param_is_input": (ctypes.c_int, [handle, ctypes.c_int]),
    "srd_param_index": (ctypes.c_int, [handle, ctypes.c_char_p]),
    "srd_get_param": (ctypes.c_int, [handle, ctypes.c_char_p, c_double_p]),
    "srd_set_param": (ctypes.c_int, [handle, ctypes.c_char_p, ctypes.c_double]),
    "srd_set_input": (ctypes.c_int, [handle, ctypes.c_char_p, ctypes.c_double]),
    "srd_set_input_at": (ctypes.c_int, [handle, ctypes.c_int, ctypes.c_double]),
    "srd_get_input": (ctypes.c_int, [handle, ctypes.c_char_p, c_double_p]),
    "srd_dof_count": (ctypes.c_int, [handle]),
    "srd_node_count": (ctypes.c_int, [handle]),
    "srd_q": (ctypes.c_void_p, [handle]),
    "srd_v": (ctypes.c_void_p, [handle]),
    "srd_x": (ctypes.c_void_p, [handle]),
    "srd_xdot": (ctypes.c_void_p, [handle]),
    "srd_dof_kind": (ctypes.c_void_p, [handle]),
    "srd_dof_owner": (ctypes.c_void_p, [handle]),
    "srd_dof_fixed": (ctypes.c_void_p, [handle]),
    "srd_node_dof": (ctypes.c_void_p, [handle]),
    "srd_edges": (ctypes.c_void_p, [handle, c_int_p]),
    "srd_triangles": (ctypes.c_void_p, [handle, c_int_p]),
    "srd_edge_twist": (ctypes.c_void_p, [handle]),
    "srd_object_count": (ctypes.c_int, [handle]),
    "srd_object_name": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_object_kind": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_object_index": (ctypes.c_int, [handle, ctypes.c_char_p]),
    "srd_object_nodes": (ctypes.c_void_p, [handle, ctypes.c_int, c_int_p]),
    "srd_element_set_count": (ctypes.c_int, [handle]),
    "srd_element_set_kind": (ctypes.c_char_p, [handle, ctypes.c_int, c_int_p, c_int_p]),
    "srd_element_set_nodes": (ctypes.c_void_p, [handle, ctypes.c_int]),
    "srd_body_count": (ctypes.c_int, [handle]),
    "srd_body_name": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_get_body": (ctypes.c_int, [handle, ctypes.c_int, c_double_p, c_double_p, c_double_p, c_double_p]),
    "srd_set_body": (ctypes.c_int, [handle, ctypes.c_int, c_double_p, c_double_p, c_double_p, c_double_p]),
    "srd_probe_count": (ctypes.c_int, [handle]),
    "srd_probe_name": (ctypes.c_char_p, [handle, ctypes.c_int]),
    "srd_probe_index": (ctypes.c_int, [handle, ctypes.c_char_p]),
    "srd_probe_size": (ctypes.c_int, [handle, ctypes.c_int]),
    "srd_read_probe_at": (ctypes.c_int, [handle, ctypes.c_int, c_double_p, ctypes.c_int]),
    "srd_save_state": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
    "srd_load_state": (ctypes.c_int, [handle, ctypes.c_char_p, ctypes.c_size_t]),
    "srd_free": (None, [ctypes.c_void_p]),
    "srd_static_gradient": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_void_p)]),
    "srd_simulation_gradient": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                               ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]),
    "srd_objective_gradient": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                              ctypes.c_char_p, c_double_p, ctypes.POINTER(ctypes.c_void_p)]),
    "srd_gradient_param_count": (ctypes.c_int, [ctypes.c_void_p]),
    "srd_gradient_param": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "srd_gradient_probe_count": (ctypes.c_int, [ctypes.c_void_p]),
    "srd_gradient_probe": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int, c_int_p]),
    "srd_gradient_values": (c_double_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    "srd_gradient_why": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "srd_gradient_free": (None, [ctypes.c_void_p]),
    "srd_modal_gradient": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_void_p)]),
    "srd_frequency_gradient_mode_count": (ctypes.c_int, [ctypes.c_void_p]),
    "srd_frequency_gradient_param_count": (ctypes.c_int, [ctypes.c_void_p]),
    "srd_frequency_gradient_frequency": (ctypes.c_double, [ctypes.c_void_p, ctypes.c_int]),
    "srd_frequency_gradient_param": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "srd_frequency_gradient_value": (ctypes.c_double, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    "srd_frequency_gradient_param_why": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "srd_frequency_gradient_mode_why": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "srd_frequency_gradient_free": (None, [ctypes.c_void_p]),
    "srd_energy": (ctypes.c_int, [handle, c_double_p, c_double_p]),
    "srd_reaction_forces": (ctypes.c_int, [handle, c_double_p, ctypes.c_int]),
    "srd_contact_forces": (ctypes.c_int, [handle, ctypes.c_int, c_double_p, ctypes.c_int]),
}

for _name, (_restype, _argtypes) in _signatures.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes
