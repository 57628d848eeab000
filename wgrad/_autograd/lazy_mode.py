"""Whether ops record into a lazy segment (NOTE [Lazy segments] in wgrad/ops/_lazy.py).

The core only reads the flag: the engine sums gradients with a recorded add while it is
on, so that summing does not force the pending segment.
"""
import os
import threading

__all__ = ["state", "group"]


class _State:
    """Process-wide, not per thread: a value recorded on one thread may be read on
    another, and the segment is locked (NOTE [Lazy segments])."""

    __slots__ = ("on", "depth")

    def __init__(self):
        self.depth = 1 if os.environ.get("WGRAD_LAZY", "0").strip().lower() in (
            "1", "true", "yes", "on") else 0
        self.on = self.depth > 0


state = _State()


class _Group(threading.local):
    """This thread's open lazy backward group, by weak reference (NOTE [Lazy backward
    groups] in wgrad/ops/_lazy_graph.py): each thread records into its own."""
    ref = None


group = _Group()
