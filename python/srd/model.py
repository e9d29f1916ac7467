"""model.py — one srd model, opened from a .srd file or a simulator built with
`srdc build --shared`, stepped and read through libsrd.

State arrays (q, v, x, xdot) are numpy views of the library's memory: no copy is made, and a
view stays valid (it keeps that memory alive) however long it is held, even after close() or
set_param(). A view taken before set_param() or close() shows the old model's state, frozen;
take it again from the model.
"""
import ctypes
import numbers

import numpy as np

from . import _lib
from .errors import check, ArgumentError, StateError, raise_last

_lib_ = _lib.lib


class _Handle:
    """Owns one srd_instance; closed when the model and every view of its memory are gone."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        if self.ptr:
            _lib_.srd_close(self.ptr)
            self.ptr = None


class _View:
    """Exposes library memory to numpy, keeping the handle that owns it alive."""

    def __init__(self, owner, address, shape, typestr, readonly):
        self.owner = owner
        self.__array_interface__ = {"shape": shape, "typestr": typestr, "data": (address, readonly),
                                    "version": 3}


def _array(owner, address, shape, typestr="<f8", readonly=False):
    if not address or 0 in shape:
        return np.zeros(shape, dtype=np.dtype(typestr))
    return np.asarray(_View(owner, address, shape, typestr, readonly))


def _param_text(name, value, units):
    if isinstance(value, str):
        return "%s=%s" % (name, value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        unit = units.get(name, "1")
        return "%s=%r%s" % (name, float(value), "" if unit == "1" else " " + unit)
    raise TypeError("param %s: give a number (SI) or a text with a unit such as '2 MPa', not %r" % (name, value))


def _units(handle):
    p = handle.ptr
    return {_lib_.srd_param_name(p, k).decode(): _lib_.srd_param_unit(p, k).decode()
            for k in range(_lib_.srd_param_count(p))}


def _open(path, params):
    """Opens path with params given as texts with units or as numbers in SI (whose units are
    read from the model opened with its defaults first)."""
    texts = {k: v for k, v in params.items() if isinstance(v, str)}
    units = _units(_open_specs(path, texts, {})) if len(texts) < len(params) else {}
    return _open_specs(path, params, units)


def _open_specs(path, params, units):
    specs = [_param_text(k, v, units).encode() for k, v in params.items()]
    array = (ctypes.c_char_p * max(len(specs), 1))(*specs)
    ptr = _lib.handle()
    status = _lib_.srd_open(str(path).encode(), array, len(specs), ctypes.byref(ptr))
    if status:
        raise_last(status)
    return _Handle(ptr)


class Model:
    """A model ready to simulate: `m = srd.Model("snake.srd", E="2 MPa")`, `m.step()`,
    `m.x`, `m.probe("tip")`, `m.set_input("bias", 0.1)`, `m.run(0.5)`."""

    def __init__(self, path, **params):
        self.path = str(path)
        self._params = dict(params)
        self._h = _open(self.path, self._params)
        self._index()

    def _index(self):
        """Names looked up once: inputs and probes by index, as a control loop calls them."""
        p = self._h.ptr
        self._views = {}
        self._inputs = {_lib_.srd_param_name(p, k).decode(): k for k in range(_lib_.srd_param_count(p))
                        if _lib_.srd_param_is_input(p, k)}
        self._probes = {_lib_.srd_probe_name(p, k).decode(): (k, _lib_.srd_probe_size(p, k))
                        for k in range(_lib_.srd_probe_count(p))}
        self._probe_buffer = np.zeros(6)
        self._probe_pointer = self._probe_buffer.ctypes.data_as(_lib.c_double_p)

    # ---- life ----

    def close(self):
        """Frees the model (its memory lives on while a view of it is held). Using the model
        afterwards raises StateError."""
        self._h = None
        self._views = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _ptr(self):
        if self._h is None:
            raise StateError("the model is closed")
        return self._h.ptr

    def _check(self, status):
        check(status, self._ptr)

    def reset(self):
        """Back to the start: state, t = 0, inputs at their defaults, controller state."""
        self._check(_lib_.srd_reset(self._ptr))

    # ---- time ----

    def step(self, n=1):
        """Takes n steps of dt."""
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ArgumentError("step(n): n must be a whole number of steps >= 0, not %r" % (n,))
        self._check(_lib_.srd_run_steps(self._ptr, int(n)))

    def run(self, duration):
        """Steps for `duration` seconds from now."""
        self.run_until(self.t + float(duration))

    def run_until(self, t):
        """Steps until the time reaches t."""
        self._check(_lib_.srd_run_until(self._ptr, float(t)))

    @property
    def t(self):
        return _lib_.srd_time(self._ptr)

    @property
    def dt(self):
        return _lib_.srd_dt(self._ptr)

    @dt.setter
    def dt(self, value):
        self._check(_lib_.srd_set_dt(self._ptr, float(value)))

    @property
    def steps(self):
        return _lib_.srd_steps(self._ptr)

    # ---- params and inputs ----

    def _names(self, inputs):
        p = self._ptr
        return [_lib_.srd_param_name(p, k).decode() for k in range(_lib_.srd_param_count(p))
                if bool(_lib_.srd_param_is_input(p, k)) == inputs]

    @property
    def param_names(self):
        return self._names(False)

    @property
    def input_names(self):
        return self._names(True)

    def _value(self, name):
        value = ctypes.c_double()
        self._check(_lib_.srd_get_param(self._ptr, str(name).encode(), ctypes.byref(value)))
        return value.value

    @property
    def params(self):
        """The params' values (SI), by name."""
        return {n: self._value(n) for n in self.param_names}

    @property
    def inputs(self):
        """The inputs' current values (SI), by name."""
        return {n: self._value(n) for n in self.input_names}

    def input(self, name):
        return self._value(name)

    def set_input(self, name, value):
        """Sets input `name` (SI) from the next step on; it holds until set again."""
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError("set_input(%r): the value must be a real number (SI), not %r" % (name, value))
        k = self._inputs.get(name)
        if k is None:  # the library says what is wrong with the name
            self._check(_lib_.srd_set_input(self._ptr, str(name).encode(), float(value)))
        else:
            self._check(_lib_.srd_set_input_at(self._ptr, k, float(value)))

    def set_param(self, name, value):
        """Builds the model anew with param `name` = value (a number in SI or a text with a unit)
        and resets it. Views taken before keep showing the old model."""
        if name in self.input_names:
            raise ArgumentError("`%s` is an input: use set_input" % name)
        params = dict(self._params, **{name: value})
        self._h = _open(self.path, params)
        self._params = params
        self._index()

    # ---- state ----

    @property
    def n_dofs(self):
        return _lib_.srd_dof_count(self._ptr)

    @property
    def n_nodes(self):
        return _lib_.srd_node_count(self._ptr)

    def _view(self, key, fn, shape, typestr="<f8", readonly=False):
        view = self._views.get(key)
        if view is None:
            view = _array(self._h, fn(self._ptr), shape, typestr, readonly)
            self._views[key] = view
        return view

    def _assign(self, view, value, what):
        array = np.asarray(value)
        if array.dtype.kind not in "fiu":
            raise TypeError("%s takes real numbers, not an array of %s" % (what, array.dtype))
        if array.shape != view.shape:
            raise ValueError("%s has shape %s; an array of shape %s was given" % (what, view.shape, array.shape))
        view[...] = array

    @property
    def q(self):
        """Every DOF (n_dofs): node coordinates, twists, body centres and rotations; a view."""
        return self._view("q", _lib_.srd_q, (self.n_dofs,))

    @q.setter
    def q(self, value):
        self._assign(self.q, value, "q")

    @property
    def v(self):
        """The velocity of every DOF (n_dofs); a view."""
        return self._view("v", _lib_.srd_v, (self.n_dofs,))

    @v.setter
    def v(self, value):
        self._assign(self.v, value, "v")

    @property
    def x(self):
        """Node positions (n_nodes x 3, m); a view kept in step with q."""
        return self._view("x", _lib_.srd_x, (self.n_nodes, 3))

    @x.setter
    def x(self, value):
        self._assign(self.x, value, "x")

    @property
    def xdot(self):
        """Node velocities (n_nodes x 3, m/s); a view kept in step with v."""
        return self._view("xdot", _lib_.srd_xdot, (self.n_nodes, 3))

    @xdot.setter
    def xdot(self, value):
        self._assign(self.xdot, value, "xdot")

    # ---- maps ----

    @property
    def dof_kind(self):
        """Per DOF: 0-2 node x/y/z, 3 twist, 4 mid-edge xi, 5 body rotation, 6 multiplier."""
        return self._view("dof_kind", _lib_.srd_dof_kind, (self.n_dofs,), "<i4", True)

    @property
    def dof_fixed(self):
        return self._view("dof_fixed", _lib_.srd_dof_fixed, (self.n_dofs,), "|u1", True).astype(bool)

    @property
    def node_dof(self):
        """Per node: the index in q of its x (y and z follow)."""
        return self._view("node_dof", _lib_.srd_node_dof, (self.n_nodes,), "<i4", True)

    def _counted(self, key, fn, width):
        n = ctypes.c_int()
        address = fn(self._ptr, ctypes.byref(n))
        return self._view(key, lambda p: address, (n.value, width), "<i4", True)

    @property
    def edges(self):
        return self._counted("edges", _lib_.srd_edges, 2)

    @property
    def triangles(self):
        return self._counted("triangles", _lib_.srd_triangles, 3)

    @property
    def objects(self):
        """Object name -> (kind, node indices)."""
        out = {}
        p = self._ptr
        for k in range(_lib_.srd_object_count(p)):
            n = ctypes.c_int()
            address = _lib_.srd_object_nodes(p, k, ctypes.byref(n))
            nodes = _array(self._h, address, (n.value,), "<i4", True).copy()
            out[_lib_.srd_object_name(p, k).decode()] = (_lib_.srd_object_kind(p, k).decode(), nodes)
        return out

    @property
    def element_sets(self):
        """[(kind, nodes)] with nodes an (instances x nodes per instance) array."""
        out = []
        p = self._ptr
        for k in range(_lib_.srd_element_set_count(p)):
            n, per = ctypes.c_int(), ctypes.c_int()
            kind = _lib_.srd_element_set_kind(p, k, ctypes.byref(n), ctypes.byref(per))
            nodes = _array(self._h, _lib_.srd_element_set_nodes(p, k), (n.value, per.value), "<i4", True)
            out.append((kind.decode(), nodes.copy()))
        return out

    # ---- bodies ----

    @property
    def body_names(self):
        p = self._ptr
        return [_lib_.srd_body_name(p, k).decode() for k in range(_lib_.srd_body_count(p))]

    def _body_index(self, body):
        names = self.body_names
        if isinstance(body, str):
            if body not in names:
                raise ArgumentError("the model has no rigid body `%s` (it has %s)" % (body, names or "none"))
            return names.index(body)
        return int(body)

    def body(self, body):
        """A rigid body's pose: position, rotation (3 x 3 from its reference), velocity, omega."""
        k = self._body_index(body)
        arrays = [np.zeros(3), np.zeros((3, 3)), np.zeros(3), np.zeros(3)]
        pointers = [a.ctypes.data_as(_lib.c_double_p) for a in arrays]
        self._check(_lib_.srd_get_body(self._ptr, k, *pointers))
        return dict(zip(("position", "rotation", "velocity", "omega"), arrays))

    def set_body(self, body, position=None, rotation=None, velocity=None, omega=None):
        k = self._body_index(body)
        shapes = {"position": (3,), "rotation": (3, 3), "velocity": (3,), "omega": (3,)}
        given = dict(position=position, rotation=rotation, velocity=velocity, omega=omega)
        pointers, keep = [], []
        for name, value in given.items():
            if value is None:
                pointers.append(None)
                continue
            a = np.ascontiguousarray(value, dtype=np.float64)
            if a.shape != shapes[name]:
                raise ValueError("%s has shape %s, not %s" % (name, shapes[name], a.shape))
            keep.append(a)
            pointers.append(a.ctypes.data_as(_lib.c_double_p))
        self._check(_lib_.srd_set_body(self._ptr, k, *pointers))

    # ---- what the model measures ----

    @property
    def probe_names(self):
        p = self._ptr
        return [_lib_.srd_probe_name(p, k).decode() for k in range(_lib_.srd_probe_count(p))]

    def probe(self, name):
        """The value of probe `name` now: a float for one component, else an array (3 or 6)."""
        found = self._probes.get(name)
        if found is None:
            raise ArgumentError("the simulate block has no probe `%s` (it has %s)" % (name, self.probe_names or "none"))
        k, n = found
        out = self._probe_buffer
        self._check(_lib_.srd_read_probe_at(self._ptr, k, self._probe_pointer, n))
        return float(out[0]) if n == 1 else out[:n].copy()

    def probes(self):
        return {name: self.probe(name) for name in self.probe_names}

    def energy(self):
        """(kinetic, potential) in J."""
        ke, pe = ctypes.c_double(), ctypes.c_double()
        self._check(_lib_.srd_energy(self._ptr, ctypes.byref(ke), ctypes.byref(pe)))
        return ke.value, pe.value

    def reaction_forces(self):
        """Per DOF, the force the supports exert (zero on free DOFs)."""
        out = np.zeros(self.n_dofs)
        self._check(_lib_.srd_reaction_forces(self._ptr, out.ctypes.data_as(_lib.c_double_p), out.size))
        return out

    def contact_forces(self, target="all"):
        """Per DOF, the contact force of the ground ('ground'), obstacle k, or all of them."""
        code = {"all": -2, "ground": -1}.get(target, target)
        out = np.zeros(self.n_dofs)
        self._check(_lib_.srd_contact_forces(self._ptr, int(code), out.ctypes.data_as(_lib.c_double_p), out.size))
        return out

    def __repr__(self):
        if self._h is None:
            return "<srd.Model %s (closed)>" % self.path
        return "<srd.Model %s: %d nodes, %d DOFs, t = %g s>" % (self.path, self.n_nodes, self.n_dofs, self.t)
