"""batch.py — N models stepped together on threads with one call (libsrd's srd_run_many): for
parallel environments, ensembles and sweeps in one process."""
import ctypes

import numpy as np

from . import _lib
from .errors import ArgumentError, raise_last, _by_status, SrdError
from .model import Model


class Batch:
    """`Batch("snake.srd", 8, E="2 MPa")` opens 8 copies of a model; `Batch(models=[...])` takes
    models already open (of any files). step() advances all of them, `threads` at a time
    (0: one per core)."""

    def __init__(self, path=None, n=None, threads=0, models=None, **params):
        if models is None:
            if path is None or n is None or n < 1:
                raise ArgumentError("Batch(path, n): give a model file and n >= 1, or models=[...]")
            models = [Model(path, **params) for _ in range(int(n))]
        self.models = list(models)
        if len(set(map(id, self.models))) != len(self.models):
            raise ArgumentError("a batch cannot hold the same model twice")
        self.threads = int(threads)

    def __len__(self):
        return len(self.models)

    def __getitem__(self, k):
        return self.models[k]

    def step(self, n=1):
        """n steps of every model; raises the first failure (the others keep their steps). The
        status of each model is in `last_status` (0: stepped)."""
        handles = (_lib.handle * len(self.models))(*[m._ptr for m in self.models])
        status = (ctypes.c_int * len(self.models))()
        first = _lib.lib.srd_run_many(handles, len(self.models), int(n), self.threads, status)
        self.last_status = np.array(status[:], dtype=int)
        if first:
            raise_last(first)

    def reset(self):
        for m in self.models:
            m.reset()

    def set_input(self, name, values):
        """Input `name` of model k set to values[k] (one value for all when a scalar)."""
        values = np.broadcast_to(np.asarray(values, dtype=float), (len(self.models),))
        for m, value in zip(self.models, values):
            m.set_input(name, float(value))

    def probe(self, name):
        """Probe `name` of every model: an array with one row per model."""
        return np.array([m.probe(name) for m in self.models])

    @property
    def x(self):
        """Node positions of every model (copies), n_models x n_nodes x 3 when they share a shape."""
        return np.array([m.x for m in self.models])

    @property
    def t(self):
        return np.array([m.t for m in self.models])

    def close(self):
        for m in self.models:
            m.close()
