"""srd — soft robots from Python: open a .srd model (or a simulator built with
`srdc build --shared`), step it, read its state as numpy arrays, set its inputs.

    import srd
    m = srd.Model("examples/snake.srd")
    m.run(0.5)
    print(m.x[-1], m.probe("head"))
"""
from ._lib import lib as _c, path as library_path
from .errors import (SrdError, ModelError, NumericalError, SrdIOError, SrdMemoryError, ArgumentError,
                     StateError)
from .model import Model
from .batch import Batch
from .sensitivity import modal_gradient, objective_gradient, simulation_gradient, static_gradient

__version__ = _c.srd_version().decode()

__all__ = ["Model", "Batch", "static_gradient", "simulation_gradient", "modal_gradient", "objective_gradient", "SrdError", "ModelError", "NumericalError", "SrdIOError", "SrdMemoryError",
           "ArgumentError", "StateError", "library_path"]
