"""F.ctc_loss against torch: losses and torch's gradient with respect to log_probs
(NOTE [CTC gradient]) for padded and concatenated targets, unbatched input, blank,
reductions, zero_infinity and impossible alignments; gradcheck through log_softmax; torch's
errors."""
import numpy as np
import pytest

import wgrad
import wgrad.nn.functional as WF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
X = np.random.default_rng(1).standard_normal((7, 2, 4))


def _run(L, F, tg, il, tl, blank=0, unbatched=False, dtype="float64", red="sum", zi=False):
    lp = L.tensor(X[:, :1] if unbatched else X, dtype=getattr(L, dtype)).log_softmax(-1)
    lp = (lp[:, 0] if unbatched else lp).detach().requires_grad_()
    lengths = (lambda v: L.tensor(v)) if unbatched else (lambda v: v)
    loss = F.ctc_loss(lp, L.tensor(tg), lengths(il), lengths(tl), blank=blank, reduction=red,
                      zero_infinity=zi)
    g, = L.autograd.grad(loss.sum(), lp)
    return np.asarray(loss.detach().tolist()), np.asarray(g.tolist())


CASES = {
    "padded-mean": dict(tg=[[1, 2, 2], [3, 1, 0]], il=[7, 5], tl=[3, 2], red="mean"),
    "concatenated-sum": dict(tg=[1, 2, 3, 3, 1], il=[7, 6], tl=[2, 3]),
    "blank-3-tuples": dict(tg=[[0, 1], [2, 2]], il=(7, 4), tl=(2, 2), blank=3),
    "unbatched-none": dict(tg=[1, 2], il=7, tl=2, unbatched=True, red="none"),
    "float32-mean": dict(tg=[[1, 2], [2, 1]], il=[7, 7], tl=[2, 2], dtype="float32", red="mean"),
    "impossible-nan-grad": dict(tg=[[1, 1, 1], [1, 2, 3]], il=[7, 2], tl=[3, 3], red="none"),
    "zero-infinity": dict(tg=[[1, 1, 1], [1, 2, 3]], il=[7, 2], tl=[3, 3], zi=True),
    "empty-target": dict(tg=[[1, 2], [1, 2]], il=[7, 7], tl=[0, 2], red="none"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_loss_and_gradient_equal_torch(case):
    (lw, gw), (lt, gt) = (_run(L, F, **CASES[case]) for L, F in ((wgrad, WF), (torch, TF)))
    tol = 1e-5 if CASES[case].get("dtype") == "float32" else 1e-11
    np.testing.assert_allclose(lw, lt, rtol=tol, atol=tol)
    np.testing.assert_allclose(gw, gt, rtol=tol, atol=tol)  # NaN where torch's is NaN


def test_gradcheck_through_log_softmax():
    # torch's gradient with respect to log_probs is the true one once it passes through
    # the log_softmax that made them
    x = wgrad.tensor(X[:5], requires_grad=True)
    assert wgrad.autograd.gradcheck(
        lambda x: WF.ctc_loss(x.log_softmax(2), wgrad.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2]),
        (x,))


def _error(L, F, fn):
    try:
        fn(L, F)
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)
    return None


BAD = {
    "target longer than its row": lambda L, F: _run(L, F, [[1, 2], [1, 2]], [7, 7], [3, 2]),
    "input length over T": lambda L, F: _run(L, F, [[1, 2], [1, 2]], [8, 7], [2, 2]),
    "reduction": lambda L, F: _run(L, F, [[1, 2], [1, 2]], [7, 7], [2, 2], red="avg"),
    "double backward": lambda L, F: L.autograd.grad(L.autograd.grad(F.ctc_loss(
        (lp := L.tensor(X).log_softmax(2).detach().requires_grad_()), L.tensor([[1, 2], [2, 1]]),
        [7, 7], [2, 2]), lp, create_graph=True)[0].sum(), lp),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_as_torch(case):
    assert _error(wgrad, WF, BAD[case]) == _error(torch, TF, BAD[case]) is not None


def test_integer_lengths_raise_a_type_error_as_torch():
    # torch lists its overloads after this prefix; wgrad names what it expects instead
    prefix = "ctc_loss() received an invalid combination of arguments - got"
    for L, F in ((wgrad, WF), (torch, TF)):
        with pytest.raises(TypeError, match=prefix.replace("(", r"\(").replace(")", r"\)")):
            F.ctc_loss(L.tensor(X[:, 0]).log_softmax(-1), L.tensor([1, 2]), 7, 2)
