"""F.grid_sample and F.affine_grid against torch: values and gradients (input, grid,
theta) for every mode, padding mode and align_corners, at random points and at points on
pixel centres, borders and reflection folds; gradcheck; torch's errors and warnings."""
import itertools
import warnings

import numpy as np
import pytest

import wgrad
import wgrad.nn.functional as WF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# on pixel centres, borders and folds for sizes 3 and 4, both align_corners settings
SPECIAL = np.array([-3, -5 / 3, -1.5, -1, -0.75, -0.5, -1 / 3, 0, 0.25, 1 / 3, 0.5,
                    0.75, 1, 1.25, 5 / 3, 3])
# every 2-D bilinear combination; the other modes (bicubic is slow to compile) and 3-D with
# one align_corners setting per padding mode (CI's time)
CASES = [(nd, mode, pad, ac) for nd, mode, pad, ac in itertools.product(
    (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
    (False, True)) if not (nd == 3 and mode == "bicubic")
    and (nd == 2 and mode == "bilinear" or ac == (pad == "border"))]


def _grid(nd, rng):
    """Random points and, in 2-D, the special points (torch's 2-D kernel and wgrad agree
    there; at a point exactly on a pixel boundary a one-sided derivative is chosen, and
    torch's 3-D kernel can choose the other side: NOTE [Grid sampling]), in one grid."""
    if nd == 3:
        return rng.uniform(-1.4, 1.4, (2, 1, 2, 3, 3))
    pts = np.array(list(itertools.product(SPECIAL, repeat=2)))
    pts = np.concatenate([rng.uniform(-1.4, 1.4, (6, 2)), pts])
    return np.stack([pts, pts[::-1]]).reshape(2, 1, -1, 2)


def _run(L, F, x, g, proj, **kw):
    xt, gt = L.tensor(x, requires_grad=True), L.tensor(g, requires_grad=True)
    y = F.grid_sample(xt, gt, **kw)
    (y * L.tensor(proj)).sum().backward()
    return [np.asarray(t.detach().tolist()) for t in (y, xt.grad, gt.grad)]


@pytest.mark.parametrize("nd, mode, pad, ac", CASES,
                         ids=[f"{n}d-{m}-{p}-{'ac' if a else 'noac'}" for n, m, p, a in CASES])
def test_grid_sample_equals_torch(nd, mode, pad, ac):
    rng = np.random.default_rng(nd * 7 + len(mode) + len(pad) + ac)
    x = rng.standard_normal((2, 2) + ((3, 4) if nd == 2 else (2, 3, 4)))
    g = _grid(nd, rng)
    proj = rng.standard_normal((2, 2) + g.shape[1:-1])
    kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
    for a, b in zip(_run(wgrad, WF, x, g, proj, **kw), _run(torch, TF, x, g, proj, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode, pad", [("bilinear", "reflection"), ("bicubic", "border"),
                                       ("nearest", "zeros")])
def test_grid_sample_gradcheck(mode, pad):
    rng = np.random.default_rng(3)
    x = wgrad.tensor(rng.standard_normal((1, 1, 3, 3)), requires_grad=True)
    g = wgrad.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)

    def f(x, g):
        return WF.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=False)
    assert wgrad.autograd.gradcheck(f, (x, g))


@pytest.mark.parametrize("nd, ac", [(2, False), (2, True), (3, False), (3, True)])
def test_affine_grid_equals_torch(nd, ac):
    rng = np.random.default_rng(nd + 2 * ac)
    theta = rng.standard_normal((2, nd, nd + 1))
    size = (2, 3, 4, 5) if nd == 2 else (2, 1, 2, 3, 4)
    proj = rng.standard_normal(size[:1] + size[2:] + (nd,))
    out = []
    for L, F in ((wgrad, WF), (torch, TF)):
        th = L.tensor(theta, requires_grad=True)
        grid = F.affine_grid(th, size, align_corners=ac)
        (grid * L.tensor(proj)).sum().backward()
        out.append([np.asarray(t.detach().tolist()) for t in (grid, th.grad)])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def _outcome(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
            err = None
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            err = (type(e).__name__, str(e).replace("wgrad.", "torch."))
    return err, [str(x.message) for x in w]


def _x(L, *shape, dtype="float64"):
    return L.ones(*shape, dtype=getattr(L, dtype))


BAD = {
    "align_corners None warns": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 1, 1, 1, 2)),
    "mode": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 1, 1, 1, 2), mode="area",
                                       align_corners=False),
    "padding": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 1, 1, 1, 2),
                                          padding_mode="wrap", align_corners=False),
    "batch": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 2, 1, 1, 2),
                                        align_corners=False),
    "last dim": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 1, 1, 1, 3),
                                           align_corners=False),
    "empty": lambda L, F: F.grid_sample(_x(L, 1, 1, 0, 2), _x(L, 1, 1, 1, 2),
                                        align_corners=False),
    "bicubic 5-D": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2, 2), _x(L, 1, 1, 1, 1, 3),
                                              mode="bicubic", align_corners=False),
    "dtypes": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2), _x(L, 1, 1, 1, 2, dtype="float32"),
                                         align_corners=False),
    "complex": lambda L, F: F.grid_sample(_x(L, 1, 1, 2, 2, dtype="complex128"),
                                          _x(L, 1, 1, 1, 2), align_corners=False),
    "theta dtype": lambda L, F: F.affine_grid(_x(L, 1, 2, 3, dtype="int64"), (1, 1, 2, 2),
                                              align_corners=False),
    "theta shape": lambda L, F: F.affine_grid(_x(L, 1, 2, 3), (1, 1, 2, 2, 2),
                                              align_corners=False),
    "size rank": lambda L, F: F.affine_grid(_x(L, 1, 2, 3), (1, 1, 2), align_corners=False),
    "size zero": lambda L, F: F.affine_grid(_x(L, 1, 2, 3), (1, 1, 0, 2), align_corners=False),
    "theta batch": lambda L, F: F.affine_grid(_x(L, 1, 2, 3), (2, 1, 2, 2), align_corners=False),
    "unit size warns": lambda L, F: F.affine_grid(_x(L, 1, 2, 3), (1, 1, 1, 3),
                                                  align_corners=True),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_and_warnings_as_torch(case):
    assert _outcome(lambda: BAD[case](wgrad, WF)) == _outcome(lambda: BAD[case](torch, TF))
