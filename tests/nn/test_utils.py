"""nn.utils against torch: clip_grad_norm_ (complex gradients by |g|), clip_grad_value_,
parameters_to_vector, vector_to_parameters."""
import numpy as np
import pytest

import wgrad
from wgrad.nn import utils

torch = pytest.importorskip("torch")


def _params(L, grads):
    ps = []
    for g in grads:
        p = L.nn.Parameter(L.zeros(tuple(g.shape), dtype=getattr(L, str(g.dtype))))
        p.grad = L.tensor(g) if g is not None else None
        ps.append(p)
    return ps


def _grads(dtype, scale=1.0):
    rng = np.random.default_rng(0)
    out = []
    for shape in [(3, 4), (5,), ()]:
        a = rng.standard_normal(shape) * scale
        if dtype == "complex128":
            a = a + 1j * rng.standard_normal(shape) * scale
        out.append(np.asarray(a))
    return out


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(dtype, norm_type, max_norm):
    grads = _grads(dtype)
    pw, pt = _params(wgrad, grads), _params(torch, grads)
    nw = utils.clip_grad_norm_(pw, max_norm, norm_type=norm_type, foreach=True)
    nt = torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type=norm_type)
    assert nw.dtype is getattr(wgrad, str(nt.dtype).replace("torch.", ""))
    np.testing.assert_allclose(float(nw), float(nt), rtol=1e-12)
    for a, b in zip(pw, pt):
        np.testing.assert_allclose(np.asarray(a.grad), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    assert float(utils.clip_grad_norm_([], 1.0)) == 0.0
    p = wgrad.nn.Parameter(wgrad.zeros(2, dtype=wgrad.cdouble))
    p.grad = wgrad.tensor([3 + 4j, 0j], dtype=wgrad.cdouble)
    assert float(utils.clip_grad_norm_(p, 1.0)) == 5.0  # a single tensor is accepted
    p.grad = wgrad.tensor([float("nan"), 0.0], dtype=wgrad.cdouble)
    tp = torch.nn.Parameter(torch.zeros(2, dtype=torch.cdouble))
    tp.grad = torch.tensor([float("nan"), 0.0], dtype=torch.cdouble)
    with pytest.raises(RuntimeError) as et:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ew:
        utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert str(ew.value) == str(et.value)
    assert np.isnan(float(utils.clip_grad_norm_(p, 1.0)))


def test_clip_grad_value():
    grads = _grads("float64", 3.0)
    pw, pt = _params(wgrad, grads), _params(torch, grads)
    utils.clip_grad_value_(pw, 1.5)
    torch.nn.utils.clip_grad_value_(pt, 1.5)
    for a, b in zip(pw, pt):
        np.testing.assert_array_equal(np.asarray(a.grad), b.grad.numpy())
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
        utils.clip_grad_value_(_params(wgrad, _grads("complex128")), 1.0)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_vector_round_trip(dtype):
    grads = _grads(dtype)
    mw = wgrad.nn.Sequential(wgrad.nn.Linear(3, 2, dtype=getattr(wgrad, dtype)))
    mt = torch.nn.Sequential(torch.nn.Linear(3, 2, dtype=getattr(torch, dtype)))
    mt.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in mw.state_dict().items()})
    vw = utils.parameters_to_vector(mw.parameters())
    vt = torch.nn.utils.parameters_to_vector(mt.parameters())
    np.testing.assert_array_equal(np.asarray(vw.detach()), vt.detach().numpy())
    new = np.arange(vt.numel()).astype(grads[0].dtype)
    w = mw[0].weight
    utils.vector_to_parameters(wgrad.tensor(new), mw.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), mt.parameters())
    assert mw[0].weight is w and w.is_leaf
    for a, b in zip(mw.parameters(), mt.parameters()):
        np.testing.assert_array_equal(np.asarray(a.detach()), b.detach().numpy())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        utils.vector_to_parameters([1.0], mw.parameters())
