"""wgrad.viz.complex_image (domain colouring) and LivePlot."""
import numpy as np
import pytest

import wgrad
from wgrad.viz import LivePlot, _fields, _mpl, complex_image, domain_colours

# phase -> hue: 1 red, i yellow-green (hue 1/4), -1 cyan, -i violet (hue 3/4)
COLOURS = [(1.0, (1.0, 0.0, 0.0)), (1j, (0.5, 1.0, 0.0)), (-1.0, (0.0, 1.0, 1.0)),
           (-1j, (0.5, 0.0, 1.0)), (0.0, (0.0, 0.0, 0.0))]


@pytest.mark.parametrize("z, rgb", COLOURS)
def test_phase_is_hue_magnitude_is_brightness(z, rgb):
    got = domain_colours(wgrad.tensor([[z, 1.0]], dtype=wgrad.complex128), scale="linear")
    np.testing.assert_allclose(got[0, 0], rgb, atol=1e-12)
    half = domain_colours(np.array([z / 2, 1.0]), scale="linear")[0]
    np.testing.assert_allclose(half, np.array(rgb) / 2, atol=1e-12)


def test_log_scale_decades():
    z = np.array([1.0, 10 ** -1.5, 1e-3, 1e-5, np.nan])
    v = domain_colours(z, scale="log", decades=3).max(axis=-1)
    np.testing.assert_allclose(v, [1.0, 0.5, 0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(domain_colours(z, scale="log", decades=3, vmax=10.0)[0],
                               [2 / 3, 0, 0], atol=1e-12)
    with pytest.raises(ValueError, match="scale"):
        domain_colours(z, scale="sqrt")


@pytest.mark.skipif(not _mpl.have_matplotlib(), reason="matplotlib not installed")
def test_complex_image_draws_the_colours():
    import matplotlib
    matplotlib.use("Agg")
    x = wgrad.linspace(-1, 1, 8, dtype=wgrad.float64)
    z = wgrad.complex(x[None, :], x[:, None]).requires_grad_()
    im = complex_image(z, wheel=True, title="z")
    np.testing.assert_allclose(im.get_array(), domain_colours(z))
    assert im.axes.get_title() == "z"
    with pytest.raises(ValueError, match="2-D"):
        complex_image(x)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setattr(_mpl, "have_matplotlib", lambda: False)
    with pytest.raises(ImportError, match=r"pip install wgrad\[viz\]"):
        complex_image(np.ones((2, 2)))
    plot = LivePlot(notebook=False)      # recording needs no matplotlib
    plot.update(wgrad.tensor(2.0))
    assert plot.history == {"loss": [(0, 2.0)]}


class _Handle:
    def __init__(self):
        self.updates = 0


def test_live_plot_updates_in_place_in_a_notebook(monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    handles = []

    def open_display(fig):
        h = _Handle()
        h.update = lambda f: setattr(h, "updates", h.updates + 1)
        handles.append((h, fig))
        return h

    monkeypatch.setattr(_fields, "_open_display", open_display)
    path = tmp_path / "loss.png"
    with LivePlot("loss", notebook=True, min_interval=0.0, save_to=str(path)) as plot:
        for step in range(4):
            plot.update(loss=wgrad.tensor(1.0 / (step + 1)), err=step + 1.0)
    assert len(handles) == 1 and handles[0][0].updates == 4    # 3 updates + close
    ax = handles[0][1].axes[0]
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [1, 1 / 2, 1 / 3, 1 / 4])
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(TypeError, match="value"):
        plot.update()
