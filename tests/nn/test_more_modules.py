"""The thin torch.nn modules of wgrad/nn/modules/more.py against torch: repr, state_dict
keys, forward values and input gradients on the same inputs and parameters."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

_X = (2, 4, 3)  # (N, C, L)
CASES = {  # name: (construct(L), input shapes, integer-valued targets as extra inputs)
    "CELU": (lambda L: L.nn.CELU(0.5), [_X]),
    "ReLU6": (lambda L: L.nn.ReLU6(), [_X]),
    "Hardshrink": (lambda L: L.nn.Hardshrink(0.3), [_X]),
    "Softshrink": (lambda L: L.nn.Softshrink(0.3), [_X]),
    "Softmin": (lambda L: L.nn.Softmin(1), [_X]),
    "CosineSimilarity": (lambda L: L.nn.CosineSimilarity(), [_X, _X]),
    "PairwiseDistance": (lambda L: L.nn.PairwiseDistance(keepdim=True), [(3, 4), (3, 4)]),
    "ConstantPad1d": (lambda L: L.nn.ConstantPad1d((1, 2), 3.5), [_X]),
    "ZeroPad2d": (lambda L: L.nn.ZeroPad2d(1), [_X]),
    "ReflectionPad1d": (lambda L: L.nn.ReflectionPad1d(2), [_X]),
    "ReplicationPad2d": (lambda L: L.nn.ReplicationPad2d((1, 0, 2, 1)), [(1, 2, 3, 3)]),
    "CircularPad3d": (lambda L: L.nn.CircularPad3d(1), [(1, 1, 2, 2, 2)]),
    "GroupNorm": (lambda L: L.nn.GroupNorm(2, 4), [_X]),
    "RMSNorm": (lambda L: L.nn.RMSNorm(3, eps=1e-6), [_X]),
    "InstanceNorm1d": (lambda L: L.nn.InstanceNorm1d(4, affine=True, track_running_stats=True),
                       [_X]),
    "InstanceNorm2d-unbatched": (lambda L: L.nn.InstanceNorm2d(4), [(4, 2, 3)]),
    "BatchNorm3d": (lambda L: L.nn.BatchNorm3d(2), [(2, 2, 2, 1, 2)]),
    "CosineEmbeddingLoss": (lambda L: L.nn.CosineEmbeddingLoss(0.1), [(3, 4), (3, 4)], [1, -1, 1]),
    "GaussianNLLLoss": (lambda L: L.nn.GaussianNLLLoss(full=True), [(3, 2), (3, 2), (3, 2)]),
    "HingeEmbeddingLoss": (lambda L: L.nn.HingeEmbeddingLoss(), [(3,)], [1, -1, -1]),
    "MarginRankingLoss": (lambda L: L.nn.MarginRankingLoss(0.2), [(3,), (3,)], [1, -1, 1]),
    "MultiLabelSoftMarginLoss": (lambda L: L.nn.MultiLabelSoftMarginLoss(), [(2, 3)],
                                 [[1, 0, 1], [0, 0, 1]]),
    "PoissonNLLLoss": (lambda L: L.nn.PoissonNLLLoss(), [(3,), (3,)]),
    "SoftMarginLoss": (lambda L: L.nn.SoftMarginLoss(reduction="sum"), [(3,)], [1, -1, 1]),
    "TripletMarginLoss": (lambda L: L.nn.TripletMarginLoss(swap=True), [(2, 3)] * 3),
}


def _run(L, case, state):
    make, shapes, *target = CASES[case]
    m = make(L).double()
    m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(len(case))
    xs = [L.tensor(rng.uniform(0.1, 1.5, s) * rng.choice([-1, 1], s), dtype=L.float64,
                   requires_grad=True) for s in shapes]
    if case in ("GaussianNLLLoss", "PoissonNLLLoss"):
        xs[-1] = L.tensor(np.abs(xs[-1].detach().numpy()), requires_grad=True)
    args = xs + [L.tensor(np.asarray(target[0], float), dtype=L.float64)] if target else xs
    y = m(*args)
    proj = L.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)))
    grads = L.autograd.grad((y * proj).sum(), xs)
    return repr(m), list(m.state_dict()), [np.asarray(t.detach().numpy())
                                           for t in (y, *grads, *m.state_dict().values())]


@pytest.mark.parametrize("case", list(CASES))
def test_module_equals_torch(case):
    tm = CASES[case][0](torch).double()
    state = {k: v.detach().numpy().astype(np.float64) if v.is_floating_point()
             else v.numpy() for k, v in tm.state_dict().items()}
    rw, kw, vw = _run(wgrad, case, state)
    rt, kt, vt = _run(torch, case, state)
    assert rw == rt and kw == kt
    for a, b in zip(vw, vt):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_instance_norm_errors_as_torch():
    out = []
    for L in (wgrad, torch):
        errs = []
        for fn in (lambda: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 2, 2)),
                   lambda: L.nn.InstanceNorm1d(3, affine=True)(L.ones(2, 4, 5)),
                   lambda: L.nn.GroupNorm(3, 4)):
            try:
                fn()
                errs.append(None)
            except Exception as e:  # noqa: BLE001 - the type and message are compared
                errs.append((type(e).__name__, str(e)))
        out.append(errs)
    assert out[0] == out[1]
