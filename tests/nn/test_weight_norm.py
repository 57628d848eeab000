"""nn.utils.weight_norm / remove_weight_norm against torch: parameters, values, gradients
of the magnitude and direction, dims (0, 1, None), removal and errors."""
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _pair(make_args, dim):
    out = []
    for lib in (torch, wgrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = getattr(lib.nn, make_args[0])(*make_args[1:], dtype=lib.float64)
        out.append(m)
    tm, wm = out
    wm.load_state_dict({k: wgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for m, lib in ((tm, torch), (wm, wgrad)):
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            assert lib.nn.utils.weight_norm(m, dim=dim) is m
    return tm, wm


@pytest.mark.parametrize("make_args,dim,shape", [
    (("Linear", 3, 2), 0, (4, 3)),
    (("Conv1d", 2, 4, 3), 1, (1, 2, 5)),
    (("Conv1d", 2, 4, 3), None, (1, 2, 5)),
])
def test_weight_norm_matches_torch(make_args, dim, shape):
    tm, wm = _pair(make_args, dim)
    assert list(wm.state_dict()) == list(tm.state_dict())
    for k in ("weight_g", "weight_v"):
        assert tuple(getattr(wm, k).shape) == tuple(getattr(tm, k).shape)
    x = np.random.default_rng(0).standard_normal(shape)
    with torch.no_grad(), wgrad.no_grad():  # a changed magnitude is used by the next call
        tm.weight_g.mul_(1.5)
        wm.weight_g.mul_(1.5)
    outs = [m(lib.tensor(x)) for m, lib in ((tm, torch), (wm, wgrad))]
    np.testing.assert_allclose(outs[1].detach().numpy(), outs[0].detach().numpy(), rtol=1e-12)
    for o in outs:
        (o * o).sum().backward()
    for k in ("weight_g", "weight_v", "bias"):
        np.testing.assert_allclose(getattr(wm, k).grad.numpy(), getattr(tm, k).grad.numpy(),
                                   rtol=1e-10, atol=1e-12)
    for m, lib in ((tm, torch), (wm, wgrad)):
        lib.nn.utils.remove_weight_norm(m)
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]  # torch's order
        assert isinstance(m.weight, lib.nn.Parameter) and not m._forward_pre_hooks
    np.testing.assert_allclose(wm.weight.detach().numpy(), tm.weight.detach().numpy(),
                               rtol=1e-12)


def test_weight_norm_errors_match_torch():
    for lib in (torch, wgrad):
        m = lib.nn.Linear(3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.weight_norm(m)
            with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on "
                                                   "the same parameter weight"):
                lib.nn.utils.weight_norm(m)
        lib.nn.utils.remove_weight_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in Linear"):
            lib.nn.utils.remove_weight_norm(m)
