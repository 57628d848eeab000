"""matplotlib is optional: one place that says how to get it."""
import importlib.util

__all__ = ["require_matplotlib", "have_matplotlib"]


def have_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


def require_matplotlib(what):
    if not have_matplotlib():
        raise ImportError(f"{what} needs matplotlib: pip install wgrad[viz] "
                          f"(or pip install matplotlib)")
