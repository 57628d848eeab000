"""Pictures of complex fields (domain colouring) and a live loss plot for notebooks."""
import sys
import time

import numpy as np

from ._mpl import require_matplotlib

__all__ = ["complex_image", "domain_colours", "LivePlot"]


def _to_numpy(z):
    if hasattr(z, "detach"):
        z = z.detach()
    if hasattr(z, "numpy"):
        z = z.numpy()
    return np.asarray(z)


def domain_colours(z, scale="log", decades=3.0, vmax=None):
    """RGB values (``z.shape + (3,)``, floats in [0, 1]) of a complex array by domain
    colouring: the phase is the hue (0 red, pi/2 yellow-green, pi cyan, -pi/2 violet)
    and the magnitude the brightness.

    ``scale="linear"``: brightness ``|z| / vmax``; ``scale="log"``: ``|z| = vmax`` is
    full brightness and each of ``decades`` decades below it a step toward black.
    ``vmax`` defaults to the largest finite magnitude.
    """
    if scale not in ("log", "linear"):
        raise ValueError(f"scale must be 'log' or 'linear', got {scale!r}")
    z = _to_numpy(z).astype(np.complex128)
    mag = np.abs(z)
    finite = np.isfinite(mag)
    if vmax is None:
        vmax = float(mag[finite].max()) if finite.any() else 1.0
    vmax = vmax if vmax > 0 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if scale == "linear":
            v = mag / vmax
        else:
            v = 1.0 + np.log10(mag / vmax) / decades
    v = np.clip(np.nan_to_num(v, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    h = np.nan_to_num(np.mod(np.angle(z) / (2 * np.pi), 1.0))
    # HSV -> RGB with full saturation: each channel is v times a piecewise-linear hue ramp
    k = np.stack([np.mod(n + 6 * h, 6) for n in (5.0, 3.0, 1.0)], axis=-1)
    ramp = 1.0 - np.clip(np.minimum(k, 4 - k), 0.0, 1.0)
    return ramp * v[..., None]


def complex_image(z, ax=None, scale="log", decades=3.0, vmax=None, wheel=False, title=None,
                  **imshow_kwargs):
    """Show a 2-D complex tensor by domain colouring (phase as hue, magnitude as brightness).

    Parameters
    ----------
    z : Tensor or array, 2-D, complex (real works: phase 0 or pi)
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise (shown inline in a notebook).
    scale : {"log", "linear"}
        Magnitude to brightness: linear in ``|z| / vmax``, or logarithmic over ``decades``.
    decades : float
        Dynamic range of the log scale.
    vmax : float, optional
        The magnitude drawn at full brightness (default: the largest).
    wheel : bool
        Add a small colour wheel (phase around, magnitude outward) as a key.
    title : str, optional
    **imshow_kwargs
        Passed to ``Axes.imshow`` (``extent``, ``origin``, ``interpolation``...).

    Returns
    -------
    matplotlib.image.AxesImage
        ``.axes`` and ``.figure`` give its axes and figure.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.viz import complex_image, domain_colours
    >>> x = wgrad.linspace(-2, 2, 64)
    >>> z = wgrad.complex(x[None, :], x[:, None])
    >>> im = complex_image(z ** 3 - 1, scale="linear")   # doctest: +SKIP
    >>> domain_colours(z ** 3 - 1, scale="linear").shape  # the RGB values it shows
    (64, 64, 3)
    """
    require_matplotlib("complex_image")
    arr = _to_numpy(z)
    if arr.ndim != 2:
        raise ValueError(f"complex_image expects a 2-D tensor, got {arr.ndim} dimensions")
    rgb = domain_colours(arr, scale=scale, decades=decades, vmax=vmax)
    if ax is None:
        # optional dependency: imported when first needed
        import matplotlib.pyplot as plt
        _, ax = plt.subplots()
    imshow_kwargs.setdefault("interpolation", "nearest")
    im = ax.imshow(rgb, **imshow_kwargs)
    if title is not None:
        ax.set_title(title)
    if wheel:
        r = np.linspace(-1, 1, 101)
        w = r[None, :] + 1j * r[:, None]
        key = domain_colours(w, scale="linear", vmax=1.0)
        key[np.abs(w) > 1] = 1.0
        inset = ax.inset_axes((0.78, 0.78, 0.2, 0.2))
        inset.imshow(key, origin="lower")
        inset.axis("off")
    return im


# -- the live loss plot ----------------------------------------------------------------
def _in_notebook():
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _open_display(fig):
    # IPython is present whenever _in_notebook() is true
    from IPython.display import display
    return display(fig, display_id=True)


def _scalar(v):
    if hasattr(v, "detach"):
        v = v.detach()
    if hasattr(v, "item"):
        v = v.item()
    return float(v)


class LivePlot:
    """A loss curve that redraws in place while an optimisation loop runs.

    In a Jupyter notebook the figure is displayed once and updated through its display
    handle (at most every ``min_interval`` seconds, and at ``close``); elsewhere
    ``update`` only records the values, and ``close`` saves the figure to ``save_to``
    if given. matplotlib is needed only to draw (``pip install wgrad[viz]``).

    Parameters
    ----------
    title : str
    logy : bool
        Logarithmic y axis (when every value is positive).
    save_to : str, optional
        Path the final figure is written to by ``close()``.
    min_interval : float
        Seconds between two redraws in a notebook.
    notebook : bool, optional
        Force the notebook behaviour on or off (default: detected).

    Example
    -------
    >>> from wgrad.viz import LivePlot
    >>> with LivePlot("loss") as plot:
    ...     for step in range(3):
    ...         plot.update(loss=1.0 / (step + 1))
    >>> plot.history["loss"]
    [(0, 1.0), (1, 0.5), (2, 0.3333333333333333)]
    """

    def __init__(self, title="loss", logy=True, save_to=None, min_interval=0.5, notebook=None):
        self.title = title
        self.logy = logy
        self.save_to = save_to
        self.min_interval = min_interval
        self.notebook = _in_notebook() if notebook is None else notebook
        self.history = {}
        self._step = 0
        self._fig = None
        self._handle = None
        self._last_draw = 0.0
        if self.notebook:
            require_matplotlib("LivePlot in a notebook")

    def update(self, value=None, step=None, **series):
        """Record ``value`` (as the series named by ``title``) and/or named ``series``
        values (Tensors or numbers) at ``step`` (default: one more than the last)."""
        if value is not None:
            series = {self.title: value, **series}
        if not series:
            raise TypeError("update() needs a value or named series values")
        step = self._step if step is None else int(step)
        for name, v in series.items():
            self.history.setdefault(name, []).append((step, _scalar(v)))
        self._step = step + 1
        if self.notebook and time.monotonic() - self._last_draw >= self.min_interval:
            self._redraw()

    __call__ = update

    def figure(self):
        """The figure with the curves so far (a new matplotlib Figure, not on pyplot)."""
        require_matplotlib("LivePlot.figure")
        # optional dependency: imported when first needed
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        if self._fig is None:
            self._fig = Figure(figsize=(6, 3.5))
            FigureCanvasAgg(self._fig)
            self._fig.add_subplot()
        ax = self._fig.axes[0]
        ax.clear()
        positive = True
        for name, pts in self.history.items():
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=name)
            positive = positive and min(ys) > 0
        if self.logy and positive and self.history:
            ax.set_yscale("log")
        ax.set_xlabel("step")
        if len(self.history) > 1:
            ax.legend()
        last = "  ".join(f"{n} {pts[-1][1]:.4g}" for n, pts in self.history.items())
        ax.set_title(f"{self.title}  (step {self._step - 1}: {last})" if last else self.title)
        ax.grid(True, alpha=0.3)
        self._fig.tight_layout()
        return self._fig

    def _redraw(self):
        fig = self.figure()
        if self._handle is None:
            self._handle = _open_display(fig)
        else:
            self._handle.update(fig)
        self._last_draw = time.monotonic()

    def save(self, path, dpi=120):
        """Write the current figure to ``path``."""
        self.figure().savefig(path, dpi=dpi)
        return path

    def close(self):
        """Draw the final curves (notebook) and save them to ``save_to`` (if given)."""
        if self.notebook and self.history:
            self._redraw()
        if self.save_to is not None:
            self.save(self.save_to)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
