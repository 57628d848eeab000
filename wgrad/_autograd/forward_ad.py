"""Forward-mode AD state: the dual level and the tangent of each dual tensor.

# NOTE [Forward AD state]
# As in torch, at most one dual level exists at a time (level 0); entering a second one
# is an error. A tangent is stored beside its tensor in a side table of the current level,
# keyed by the tensor's id and guarded by a weak reference (so a dead tensor's entry goes
# away and a reused id never finds a stale tangent). Exiting the level drops the table:
# every tensor loses its tangent at once, as torch does. The core knows no Tensor class:
# it stores whatever the layers above hand it.
# ``state.active`` is the one flag the code paths of ops read (NOTE [Recording cost]):
# code that never enters a dual level pays one attribute check per op, nothing more.
"""
import threading
import weakref

__all__ = ["state", "enter_level", "exit_level", "current_level", "get_tangent",
           "set_tangent"]

_ERR_NESTED = "Nested forward mode AD is not supported at the moment"
_ERR_EXIT = ("Trying to exit a forward AD level that was not the last one that was created. "
             "This is not supported.")


class _State:
    __slots__ = ("active", "level", "generation")

    def __init__(self):
        self.active = False
        self.level = -1
        self.generation = 0  # bumped on every enter: tells one level's values from the next


state = _State()
_tangents = {}
_lock = threading.Lock()


def current_level():
    """The active dual level, -1 when none."""
    return state.level


def enter_level():
    """Enter the (single) dual level and return it."""
    with _lock:
        if state.level >= 0:
            raise RuntimeError(_ERR_NESTED)
        state.level = 0
        state.generation += 1
        state.active = True
        return 0


def exit_level(level=None):
    """Leave ``level`` (the current one by default); every tangent is dropped."""
    with _lock:
        if level is None:
            level = state.level
        if level != state.level or level < 0:
            raise RuntimeError(_ERR_EXIT)
        state.level = -1
        state.active = False
        _tangents.clear()


def get_tangent(t):
    """``t``'s tangent at the current level, or None."""
    e = _tangents.get(id(t))
    if e is None or e[0]() is not t:
        return None
    return e[1]


def set_tangent(t, tangent):
    """Make ``tangent`` (None removes it) the tangent of ``t`` at the current level."""
    key = id(t)
    if tangent is None:
        e = _tangents.get(key)
        if e is not None and e[0]() is t:
            del _tangents[key]
        return

    def drop(r, key=key):
        e = _tangents.get(key)
        if e is not None and e[0] is r:
            del _tangents[key]
    _tangents[key] = (weakref.ref(t, drop), tangent)
