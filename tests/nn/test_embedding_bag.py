"""F.embedding_bag and nn.EmbeddingBag against torch: outputs and gradients (weight,
per_sample_weights) for every mode, 2-D bags and offsets (empty bags, include_last_offset),
padding_idx, max_norm; torch's errors; the module's repr; scale_grad_by_freq raises."""
import numpy as np
import pytest

import wgrad
import wgrad.nn.functional as WF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
W = np.random.default_rng(0).standard_normal((6, 3))
IDX = [1, 2, 4, 2, 5, 0, 3, 2]

CASES = {
    "mean-offsets": dict(input=IDX, offsets=[0, 3, 3, 6]),
    "sum-psw": dict(input=IDX, offsets=[0, 2, 5], mode="sum", psw=True),
    "max-offsets": dict(input=IDX, offsets=[0, 3, 3, 6], mode="max"),
    "max-ties": dict(input=[1, 0, 2, 2, 5], offsets=[0, 3], mode="max", tied=True),
    "2d-mean-padding": dict(input=[[1, 2, 2, 4], [2, 2, 2, 2], [5, 0, 3, 1]], padding_idx=2),
    "2d-max-padding": dict(input=[[1, 2, 0], [2, 2, 2]], mode="max", padding_idx=-4),
    "include-last-offset": dict(input=IDX, offsets=[0, 2, 5, 7], mode="sum",
                                include_last_offset=True),
    "max-norm": dict(input=IDX, offsets=[0, 4], mode="sum", max_norm=1.0),
}


def _run(L, F, input, offsets=None, psw=False, tied=False, **kw):
    # tied: rows 0, 1, 2 share values per column, so a bag's maximum is reached twice and
    # its gradient must go to the first row that reaches it, as torch's
    table = np.vstack([[1.0, 5.0, 2.0], [1.0, 2.0, 2.0], [3.0, 5.0, 0.5], W[3:]]) if tied \
        else W
    w = L.tensor(table, requires_grad=True)
    x = L.tensor(input)
    p = L.tensor(np.linspace(0.5, 2, x.numel()).reshape(tuple(x.shape)),
                 requires_grad=True) if psw else None
    off = None if offsets is None else L.tensor(offsets)
    if kw.get("max_norm") is not None:  # renormalises the weight in place: on a copy
        w = L.tensor(table).requires_grad_()
    out = F.embedding_bag(x, w, off, per_sample_weights=p, **kw)
    proj = L.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grads = L.autograd.grad((out * proj).sum(), [w] + ([p] if psw else []))
    return [np.asarray(t.detach().tolist()) for t in (out, *grads)]


@pytest.mark.parametrize("case", list(CASES))
def test_embedding_bag_equals_torch(case):
    for a, b in zip(_run(wgrad, WF, **CASES[case]), _run(torch, TF, **CASES[case])):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _error(L, F, fn):
    try:
        fn(L, F)
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e).replace("wgrad.", "torch.").split("\n")[0]
    return None


BAD = {
    "1-D without offsets": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3)),
    "2-D with offsets": lambda L, F: F.embedding_bag(L.tensor([[1, 2]]), L.ones(6, 3),
                                                     L.tensor([0])),
    "psw with mean": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3), L.tensor([0]),
                                                  per_sample_weights=L.ones(2)),
    "psw shape": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3), L.tensor([0]),
                                              mode="sum", per_sample_weights=L.ones(3)),
    "mode": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3), L.tensor([0]),
                                         mode="median"),
    "first offset": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3), L.tensor([1])),
    "last offset": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6, 3),
                                                L.tensor([0, 3])),
    "index range": lambda L, F: F.embedding_bag(L.tensor([1, 9]), L.ones(6, 3), L.tensor([0])),
    "float input": lambda L, F: F.embedding_bag(L.tensor([1., 2.]), L.ones(6, 3),
                                                L.tensor([0])),
    "3-D input": lambda L, F: F.embedding_bag(L.tensor([[[1]]]), L.ones(6, 3)),
    "1-D weight": lambda L, F: F.embedding_bag(L.tensor([1, 2]), L.ones(6), L.tensor([0])),
    "complex weight": lambda L, F: F.embedding_bag(L.tensor([1, 2]),
                                                   L.ones(6, 3, dtype=L.complex64),
                                                   L.tensor([0])),
    "module padding_idx": lambda L, F: L.nn.EmbeddingBag(6, 3, padding_idx=6),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_as_torch(case):
    assert _error(wgrad, WF, BAD[case]) == _error(torch, TF, BAD[case]) is not None


def test_module_as_torch():
    out = {}
    for L in (wgrad, torch):
        bag = L.nn.EmbeddingBag.from_pretrained(L.tensor(W), mode="sum", padding_idx=0)
        y = bag(L.tensor([[0, 1], [2, 3]]))
        out[L.__name__] = (repr(bag), bag.weight.requires_grad, np.round(np.asarray(
            y.tolist()), 12).tolist(), list(bag.state_dict()))
    assert out["wgrad"] == out["torch"]


def test_scale_grad_by_freq_raises():
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq=True is not supported"):
        WF.embedding_bag(wgrad.tensor(IDX), wgrad.tensor(W), wgrad.tensor([0]),
                         scale_grad_by_freq=True)

