"""errors.py — srd's failures as Python exceptions, each carrying the library's message (for a
bad .srd file: file:line:col, the source line, a caret and a hint)."""
from . import _lib


class SrdError(Exception):
    """Any failure reported by libsrd; `status` is the C API's srd_status."""
    status = 0


class ModelError(SrdError, ValueError):
    """The model, or a value given for it, is wrong."""
    status = 1


class NumericalError(SrdError, RuntimeError):
    """A step failed (did not converge, or became NaN); reset() starts the model again."""
    status = 2


class SrdIOError(SrdError, OSError):
    status = 3


class SrdMemoryError(SrdError, MemoryError):
    status = 4


class ArgumentError(SrdError, ValueError):
    """An unknown name, an index out of range, an array of the wrong size."""
    status = 5


class StateError(SrdError, RuntimeError):
    """The model failed earlier (reset it) or is closed."""
    status = 6


_by_status = {c.status: c for c in (ModelError, NumericalError, SrdIOError, SrdMemoryError, ArgumentError,
                                     StateError)}


def raise_last(status):
    message = _lib.lib.srd_last_error().decode(errors="replace")
    raise _by_status.get(status, SrdError)(message)


def check(status, ptr=None):
    if status:
        raise_last(status)
