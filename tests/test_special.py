"""wgrad.special against torch.special: the functions they share with the top level give
torch's values, gradients and grad_fn names; the others raise NotImplementedError."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

X = np.array([[0.3, 1.7, 2.5], [0.9, 0.05, 3.2]])  # in every function's domain
# name, function of (library's special module, input tensor)
CASES = [(n, (lambda n: lambda s, x: getattr(s, n)(x))(n)) for n in (
    "digamma", "psi", "erf", "erfc", "exp2", "expit", "expm1", "gammaln", "i0", "log1p",
    "sinc")] + [
    ("erfinv", lambda s, x: s.erfinv(x / 4)),
    ("logit", lambda s, x: s.logit(x / 4)),
    ("logit eps", lambda s, x: s.logit(x, eps=0.1)),
    ("gammainc", lambda s, x: s.gammainc(x.detach() + 1, x)),
    ("gammaincc", lambda s, x: s.gammaincc(x.detach() + 1, x)),
    ("log_softmax", lambda s, x: s.log_softmax(x, 1)),
    ("softmax", lambda s, x: s.softmax(x, 0)),
    ("logsumexp", lambda s, x: s.logsumexp(x, 1, keepdim=True)),
    ("multigammaln", lambda s, x: s.multigammaln(x + 1, 2)),
    ("polygamma", lambda s, x: s.polygamma(2, x)),
    ("round", lambda s, x: s.round(x, decimals=1)),
    ("xlogy", lambda s, x: s.xlogy(x, x + 1)),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_special_matches_torch(name, f):
    out = []
    for lib in (wgrad, torch):
        x = lib.tensor(X, requires_grad=True)
        y = f(lib.special, x)
        y.backward(lib.ones_like(y))
        out.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    (a, ga, na), (b, gb, nb) = out
    # torch.testing's float64 tolerances (digamma's gradient, trigamma, differs by ~5e-10)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(ga, gb, rtol=1e-7, atol=1e-7)
    assert na == nb


def test_the_rest_of_torch_special_raises():
    public = {n for n in dir(torch.special) if not n.startswith("_") and
              callable(getattr(torch.special, n)) and n not in ("Tensor",)}
    missing = sorted(n for n in public if not hasattr(wgrad.special, n))
    assert not missing, missing  # every torch.special function has a name here
    for name in wgrad.special.NOT_IMPLEMENTED:
        with pytest.raises(NotImplementedError, match=f"special.{name} is not implemented"):
            getattr(wgrad.special, name)(wgrad.ones(2))
