"""Lazy modules (NOTE [Lazy modules]) against torch: reprs and state dicts before the first
call, the class, shapes and reprs after it, loading a checkpoint into an uninitialized
module, and the uninitialized parameter's own behaviour and errors."""
import copy

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

CASES = {
    "LazyLinear": (lambda L: L.nn.LazyLinear(3), (2, 5)),
    "LazyLinear-nobias": (lambda L: L.nn.LazyLinear(3, bias=False), (4,)),
    "LazyConv1d": (lambda L: L.nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    "LazyConv2d": (lambda L: L.nn.LazyConv2d(4, 3, 1, 0, 1, 2, False), (1, 2, 5, 5)),
    "LazyConvTranspose1d": (lambda L: L.nn.LazyConvTranspose1d(4, 3, 2), (3, 5)),
    "LazyConvTranspose2d": (lambda L: L.nn.LazyConvTranspose2d(2, 2, output_padding=0),
                            (1, 3, 4, 4)),
    "LazyConv3d": (lambda L: L.nn.LazyConv3d(2, 2), (1, 3, 2, 3, 3)),
    "LazyConvTranspose3d": (lambda L: L.nn.LazyConvTranspose3d(2, 2, stride=2), (2, 2, 2, 2)),
    "LazyBatchNorm1d": (lambda L: L.nn.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda L: L.nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
}


def _describe(L, make, shape):
    m = make(L)
    log = [repr(m), type(m).__name__, {k: repr(v) for k, v in m.state_dict().items()}]
    x = L.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=L.float32)
    y = m(x)
    log += [type(m).__name__, repr(m), tuple(y.shape),
            {k: tuple(v.shape) for k, v in m.state_dict().items()},
            hasattr(m, "_initialize_hook"), hasattr(m, "_load_hook"),
            [type(p).__name__ for p in m.parameters()]]
    return log


@pytest.mark.parametrize("case", list(CASES))
def test_lazy_module_lifecycle_as_torch(case):
    make, shape = CASES[case]
    assert _describe(wgrad, make, shape) == _describe(torch, make, shape)


@pytest.mark.parametrize("case", ["LazyLinear", "LazyConv1d", "LazyBatchNorm1d"])
def test_load_state_dict_materializes(case):
    make, shape = CASES[case]
    src = make(wgrad)
    src(wgrad.ones(*shape))
    dst = make(wgrad)
    dst.load_state_dict(src.state_dict())
    assert type(dst).__name__ == case  # loading materializes; only a call converts it
    assert not dst.has_uninitialized_params()
    for (k, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    x = wgrad.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=wgrad.float32)
    src.eval(), dst.eval()
    np.testing.assert_allclose(src(x).detach().numpy(), dst(x).detach().numpy())


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return (type(e).__name__, str(e))


def test_uninitialized_parameter_as_torch():
    log = {}
    for L in (wgrad, torch):
        p = L.nn.UninitializedParameter()
        b = L.nn.UninitializedBuffer()
        out = [repr(p), repr(b), p.requires_grad, b.requires_grad,
               L.nn.parameter.is_lazy(p), L.nn.parameter.is_lazy(L.zeros(1)),
               _outcome(lambda: p.shape)[0], _outcome(lambda: p.shape)[1],
               _outcome(lambda: p.share_memory_()), type(copy.deepcopy(p)).__name__]
        p.materialize((2, 3))
        b.materialize((4,), dtype=L.float64)
        out += [type(p).__name__, tuple(p.shape), p.requires_grad, type(b).__name__,
                tuple(b.shape), str(b.dtype).split(".")[-1]]
        bad = L.nn.LazyConv2d(2, 3)
        out.append(_outcome(lambda: bad(L.ones(2, 3))))
        grouped = L.nn.LazyConv1d(4, 1, groups=2)
        out.append(_outcome(lambda: grouped(L.ones(1, 3, 2))))
        lazy_a, lazy_b = L.nn.LazyLinear(3), L.nn.LazyLinear(3)
        out.append(str(lazy_b.load_state_dict(lazy_a.state_dict())))  # both uninitialized
        out.append(lazy_b.has_uninitialized_params())
        out.append(_outcome(lambda: L.nn.Linear(2, 3).load_state_dict(lazy_a.state_dict())))
        log[L.__name__] = out
    assert log["wgrad"] == log["torch"]
