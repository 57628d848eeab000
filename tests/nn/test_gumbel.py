"""F.gumbel_softmax: the distribution (the Gumbel-max trick samples the softmax), the
straight-through gradient of ``hard=True``, and torch's deprecation warning for ``eps``."""
import warnings

import numpy as np
import pytest

import wgrad
import wgrad.nn.functional as F

torch = pytest.importorskip("torch")


def test_hard_samples_follow_the_softmax():
    wgrad.manual_seed(0)
    logits = wgrad.tensor([1.0, 2.0, 0.5, -1.0], dtype=wgrad.float64)
    n = 20000
    counts = F.gumbel_softmax(logits.expand(n, 4), tau=0.7, hard=True).sum(0).numpy()
    p = torch.softmax(torch.tensor([1.0, 2.0, 0.5, -1.0], dtype=torch.float64), 0).numpy()
    assert np.all(np.abs(counts / n - p) < 4 * np.sqrt(p * (1 - p) / n))


@pytest.mark.parametrize("dim", [-1, 0])
def test_straight_through_gradient_is_the_soft_one(dim):
    logits = wgrad.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    proj = wgrad.tensor(np.random.default_rng(2).standard_normal((3, 4)))
    grads, outs = [], []
    for hard in (False, True):
        wgrad.manual_seed(5)  # the same noise for both
        y = F.gumbel_softmax(logits, tau=0.3, hard=hard, dim=dim)
        outs.append(y.detach().numpy())
        grads.append(wgrad.autograd.grad((y * proj).sum(), logits)[0].numpy())
    soft, hard = outs
    one_hot = (soft == soft.max(axis=dim, keepdims=True)).astype(float)
    np.testing.assert_array_equal(hard, one_hot)
    np.testing.assert_allclose(soft.sum(dim), 1.0)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-15)


def test_eps_warns_as_torch():
    msgs = []
    for L in (wgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.nn.functional.gumbel_softmax(L.zeros(2), eps=1e-5)
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1] and msgs[0]
