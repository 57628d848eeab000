"""torch's float32 precision API (issue #23 item 1, NOTE [Float32 precision]): the flags,
their defaults and coupling as torch's, and the precision each op's lowered program
carries per flag (checkable without a GPU: on a CPU every setting computes the same)."""
import re

import jax
import pytest

import wgrad
import wgrad.nn.functional as F
from wgrad.ops import _host_gemm

_DOT = re.compile(r"dot_general.*?precision = \[(\w+), (\w+)\]")
_CONV = re.compile(r"convolution.*?precision_config = \[#stablehlo<precision (\w+)>, "
                   r"#stablehlo<precision (\w+)>\]")
EXPECTED = {"highest": "HIGHEST", "high": "HIGH", "medium": "DEFAULT"}


@pytest.fixture(autouse=True)
def _restore_precision():
    p, conv = wgrad.get_float32_matmul_precision(), wgrad.backends.cudnn.allow_tf32
    yield
    wgrad.set_float32_matmul_precision(p)
    wgrad.backends.cudnn.allow_tf32 = conv


def _precisions(fn, *tensors, pattern=_DOT):
    """The set of precisions in ``fn``'s lowered program (jax.jit over wgrad code)."""
    text = jax.jit(lambda *xs: fn(*map(wgrad.from_jax, xs))._data).lower(
        *[t._data for t in tensors]).as_text()
    found = pattern.findall(text)
    assert found, text
    return {p for pair in found for p in pair}


def test_defaults_are_torchs():
    torch = pytest.importorskip("torch")
    assert wgrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert wgrad.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    assert wgrad.backends.cudnn.allow_tf32 is torch.backends.cudnn.allow_tf32


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_allow_tf32_follows_the_precision_as_torch(precision):
    torch = pytest.importorskip("torch")
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
        wgrad.set_float32_matmul_precision(precision)
        assert wgrad.get_float32_matmul_precision() == precision
        assert wgrad.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.set_float32_matmul_precision(before)


def test_setting_allow_tf32_selects_high_or_highest():
    wgrad.backends.cuda.matmul.allow_tf32 = True
    assert wgrad.get_float32_matmul_precision() == "high"
    wgrad.backends.cuda.matmul.allow_tf32 = False
    assert wgrad.get_float32_matmul_precision() == "highest"


def test_an_unknown_precision_warns_and_changes_nothing():
    with pytest.warns(UserWarning, match="'foo' is not one of|foo is not one of 'highest', "
                                         "'high', or 'medium'"):
        wgrad.set_float32_matmul_precision("foo")
    assert wgrad.get_float32_matmul_precision() == "highest"


_A = wgrad.randn(3, 4)
_B = wgrad.randn(4, 2)
_BATCH = wgrad.randn(2, 3, 4)
_SQ = wgrad.randn(3, 3)
PRODUCTS = {
    "matmul": (lambda a, b: a @ b, (_A, _B)),
    "mm": (wgrad.mm, (_A, _B)),
    "bmm": (lambda x, b: wgrad.bmm(x, b.expand(2, 4, 2)), (_BATCH, _B)),
    "einsum": (lambda a, b: wgrad.einsum("ij,jk->ik", a, b), (_A, _B)),
    "tensordot": (lambda a, b: wgrad.tensordot(a, b, dims=1), (_A, _B)),
    "complex64_matmul": (lambda a, b: a.to(wgrad.complex64) @ b.to(wgrad.complex64),
                         (_A, _B)),
    "matrix_power": (lambda a: wgrad.linalg.matrix_power(a, 3), (_SQ,)),
    "multi_dot": (lambda a: wgrad.linalg.multi_dot([a, a, a]), (_SQ,)),
    "backward": (lambda a, b: wgrad.autograd.grad((a @ b).sum(), a, create_graph=False)[0]
                 * 1, (_A.requires_grad_(False), _B)),
}
if hasattr(F, "linear"):
    PRODUCTS["linear"] = (lambda a, b: F.linear(a, b.mT), (_A, _B))


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
@pytest.mark.parametrize("op", sorted(PRODUCTS))
def test_products_carry_the_matmul_precision(op, precision):
    fn, args = PRODUCTS[op]
    if op == "backward":
        def fn(a, b):
            a.requires_grad_(True)
            return wgrad.autograd.grad((a @ b).sum(), a)[0]
    wgrad.set_float32_matmul_precision(precision)
    assert _precisions(fn, *args) == {EXPECTED[precision]}


def test_linalg_internals_are_never_below_the_setting():
    """pinv and matrix_exp are JAX's, which fixes HIGHEST inside: more than 'medium' asks."""
    wgrad.set_float32_matmul_precision("medium")
    assert _precisions(wgrad.linalg.pinv, _SQ) == {"HIGHEST"}
    assert _precisions(wgrad.linalg.matrix_exp, _SQ) == {"HIGHEST"}


def test_a_change_reaches_cached_eager_kernels_at_once(monkeypatch):
    """The eager forward and backward kernels are jitted once per signature; the setting
    is part of their cache keys, so a change retraces them."""
    # XLA's kernels, not numpy's (NOTE [Host GEMM]: a CPU computes float32 in full anyway)
    monkeypatch.setattr(_host_gemm, "_STATE", [None])
    with wgrad.lazy(False):  # eager kernels (a lazy segment is one jax.jit of them)
        _check_eager_kernels_retrace()


def _check_eager_kernels_retrace():
    wgrad.ops.linear_algebra._matmul._fwd_cache.clear()  # other tests' kernels
    a = wgrad.randn(3, 4, requires_grad=True)
    (a @ _B).sum().backward()  # warm: kernels cached under 'highest'
    fwd = next(iter(wgrad.ops.linear_algebra._matmul._fwd_cache.values()))
    fwd = getattr(fwd, "xla", fwd)  # the jitted forward under a host product's
    wgrad.set_float32_matmul_precision("medium")
    text = fwd.lower(a._data, _B._data).as_text()
    assert set(_DOT.findall(text)) == {("DEFAULT", "DEFAULT")}
    n = fwd._cache_size()
    (a @ _B).sum().backward()
    assert fwd._cache_size() == n + 1


@pytest.mark.parametrize("allow_tf32, expected", [(True, "DEFAULT"), (False, "HIGHEST")])
def test_convolutions_follow_cudnn_allow_tf32(allow_tf32, expected):
    wgrad.backends.cudnn.allow_tf32 = allow_tf32
    x, w = wgrad.randn(1, 2, 5), wgrad.randn(3, 2, 2)
    assert _precisions(F.conv1d, x, w, pattern=_CONV) == {expected}

    def grad_x(x, w):
        x.requires_grad_(True)
        return wgrad.autograd.grad(F.conv1d(x, w).sum(), x)[0]
    assert _precisions(grad_x, x, w, pattern=_CONV) == {expected}


@pytest.mark.parametrize("allow_tf32, expected", [(True, "DEFAULT"), (False, "HIGHEST")])
def test_transposed_convolutions_follow_cudnn_allow_tf32(allow_tf32, expected):
    wgrad.backends.cudnn.allow_tf32 = allow_tf32
    x, w = wgrad.randn(1, 2, 5), wgrad.randn(2, 3, 2)
    assert _precisions(F.conv_transpose1d, x, w, pattern=_CONV) == {expected}


@pytest.mark.parametrize("precision", ["highest", "medium"])
def test_recurrent_layers_carry_the_matmul_precision(precision):
    wgrad.set_float32_matmul_precision(precision)
    wgrad.manual_seed(0)
    rnn = wgrad.nn.RNN(3, 4)
    x = wgrad.randn(2, 1, 3)
    assert _precisions(lambda x: rnn(x)[0], x) == {EXPECTED[precision]}


def test_conv_flag_is_independent_of_the_matmul_precision():
    wgrad.set_float32_matmul_precision("medium")
    assert wgrad.backends.cudnn.allow_tf32 is True
    wgrad.backends.cudnn.allow_tf32 = False
    assert wgrad.get_float32_matmul_precision() == "medium"


def test_compiled_steps_follow_a_change_of_either_flag():
    """A step traced under one setting is traced again after a change (the Python body
    runs only while tracing), and its program carries the new precisions."""
    w = wgrad.randn(2, 2, 3, requires_grad=True)
    traces = []

    @wgrad.compile
    def step(x):
        traces.append(1)
        loss = (F.conv1d(x, w) @ wgrad.ones(2, 2)).sum()
        loss.backward()
        return loss

    x = wgrad.randn(1, 2, 4)
    for _ in range(3):  # the first call has no w.grad yet, the second one has
        step(x)
    n = len(traces)
    step(x)
    assert len(traces) == n
    wgrad.set_float32_matmul_precision("medium")
    step(x)
    assert len(traces) == n + 1
    wgrad.backends.cudnn.allow_tf32 = False
    step(x)
    step(x)
    assert len(traces) == n + 2
    text = jax.jit(lambda xd: step(wgrad.from_jax(xd))._data).lower(x._data).as_text()
    assert {p for pair in _DOT.findall(text) for p in pair} == {"DEFAULT"}
    assert {p for pair in _CONV.findall(text) for p in pair} == {"HIGHEST"}
