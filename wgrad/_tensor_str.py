"""How a Tensor prints: torch's layout rules (``torch/_tensor_str.py``) over numpy values.

One formatter per tensor picks integer, fixed or scientific notation from the nonzero finite
values (complex: one formatter for the real parts, one for the imaginary parts); tensors with
more than ``threshold`` elements print summarised with ``edgeitems`` at each end; lines wrap
at ``linewidth``; ``set_printoptions`` changes all of it, as torch's does.
"""
import math

import numpy as np

from . import _dtype

__all__ = ["set_printoptions", "get_printoptions", "tensor_repr"]


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set options for printing, as ``torch.set_printoptions``.

    Parameters
    ----------
    precision : int, digits after the decimal point (default 4)
    threshold : number of elements above which a tensor prints summarised (default 1000)
    edgeitems : items kept at the start and end of each dimension when summarised (default 3)
    linewidth : characters per line (default 80)
    profile : "default", "short" or "full"; explicit options override it
    sci_mode : True or False forces scientific notation on or off; None picks it per tensor

    Example
    -------
    >>> import wgrad
    >>> wgrad.set_printoptions(precision=2)
    >>> wgrad.tensor([1.2345, 3e-5])
    tensor([1.23e+00, 3.00e-05])
    >>> wgrad.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"Unknown profile: {profile}")  # torch leaves it unchecked
        (_OPTS.precision, _OPTS.threshold, _OPTS.edgeitems,
         _OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (torch._tensor_str.get_printoptions)."""
    return {k: getattr(_OPTS, k) for k in _PrintOptions.__slots__}


class _Formatter:
    """Chooses one notation and one width for all the values of a (summarised) array."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = _OPTS.precision
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return
        mags = np.abs(nz).astype(np.float64)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or
                         (not self.int_mode and lo < 1.0e-4))
        if _OPTS.sci_mode is not None:
            self.sci_mode = _OPTS.sci_mode
        # widths follow the final notation
        if self.sci_mode:
            widths = (len(f"{v:.{p}e}") for v in nz.tolist())
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in nz.tolist())
        else:
            widths = (len(f"{v:.{p}f}") for v in nz.tolist())
        self.max_width = max(self.max_width, max(widths))

    def width(self):
        return self.max_width

    def format(self, v):
        if self.floating:
            p = _OPTS.precision
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = f"{v}"
        return (self.max_width - len(s)) * " " + s


def _summarized(a):
    """The values a summarised print shows (the formatters see only these)."""
    e = _OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty((0,) * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e \
        else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


class _Writer:
    def __init__(self, real, imag=None):
        self.real, self.imag = real, imag

    def value(self, v):
        if self.imag is None:
            return self.real.format(v)
        re = self.real.format(v.real)
        im = (self.imag.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im

    def element_length(self):
        n = self.real.width() + 2
        return n + self.imag.width() + 1 if self.imag is not None else n

    def vector(self, a, indent, summarize):
        e = _OPTS.edgeitems
        per_line = max(1, int(math.floor((_OPTS.linewidth - indent) / self.element_length())))
        if summarize and not e:
            data = ["..."]
        elif summarize and a.shape[0] > 2 * e:
            data = ([self.value(v) for v in a[:e].tolist()] + [" ..."] +
                    [self.value(v) for v in a[-e:].tolist()])
        else:
            data = [self.value(v) for v in a.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def tensor(self, a, indent, summarize):
        if a.ndim == 0:
            return self.value(a.item())
        if a.ndim == 1:
            return self.vector(a, indent, summarize)
        e = _OPTS.edgeitems
        n = a.shape[0]
        if summarize and n > 2 * e:
            slices = ([self.tensor(a[i], indent + 1, summarize) for i in range(e)] + ["..."] +
                      [self.tensor(a[i], indent + 1, summarize) for i in range(n - e, n)])
        else:
            slices = [self.tensor(a[i], indent + 1, summarize) for i in range(n)]
        return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _body(a, indent):
    summarize = a.size > _OPTS.threshold
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    shown = _summarized(a) if summarize else a
    if a.dtype.kind == "c":
        w = _Writer(_Formatter(shown.real), _Formatter(shown.imag))
    else:
        w = _Writer(_Formatter(shown))
    return w.tensor(a, indent, summarize)


def _add_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > _OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(a, dtype, grad_fn_name, requires_grad, device=None):
    """torch's ``tensor(...)`` text for the numpy array ``a`` of a tensor of ``dtype``;
    ``device``: a device string to show (None for the CPU)."""
    default = _dtype.get_default_dtype()
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None:
        suffixes.append(f"device='{device}'")
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(a.shape)))
        if dtype not in (default, _dtype.default_complex(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={dtype!r}")
        body = _body(a, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
