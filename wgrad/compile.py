"""wgrad.compile (placeholder, replaced below)."""
__all__ = ["compile"]


def compile(step=None, **kw):  # noqa: A001
    raise NotImplementedError
