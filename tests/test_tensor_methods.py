"""The Tensor method set is declared (NOTE [Tensor methods]) and matches torch.Tensor's."""
import os
import sys

import pytest

import wgrad
from wgrad.ops import _FAMILIES

_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, _TOOLS)
import gen_tensor_stub as stub  # noqa: E402

# wgrad's own Tensor methods, absent from torch.Tensor
WGRAD_ADDITIONS = {"jax"}

COMMON = ("add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "sin", "abs", "angle",
          "conj", "sum", "mean", "max", "min", "argmax", "norm", "reshape", "view", "permute",
          "transpose", "squeeze", "unsqueeze", "expand", "flatten", "clone", "detach", "to",
          "float", "double", "cfloat", "cdouble", "long", "type_as", "where", "matmul",
          "masked_fill", "gather", "scatter", "index_select", "sort", "topk", "add_", "mul_",
          "zero_", "fill_", "copy_", "backward", "register_hook", "retain_grad",
          "requires_grad_", "item", "tolist", "numpy", "size", "dim", "numel", "is_complex",
          "real", "imag", "mT", "mH", "grad", "grad_fn", "is_leaf")

# functions that torch has only as torch.<name>
FUNCTION_ONLY = ("view_as_real", "view_as_complex", "complex", "polar", "cat", "stack",
                 "einsum", "tensordot", "broadcast_tensors", "meshgrid", "softplus", "conv2d",
                 "vector_norm", "var_mean", "trapezoid", "chain_matmul", "getitem", "numpy_T")


def _public_callables():
    return sorted(n for n in dir(wgrad.Tensor)
                  if not n.startswith("_") and callable(getattr(wgrad.Tensor, n)))


def test_every_method_is_a_torch_method_or_a_listed_addition():
    torch = pytest.importorskip("torch")
    extra = [n for n in _public_callables()
             if not hasattr(torch.Tensor, n) and n not in WGRAD_ADDITIONS]
    assert extra == []
    assert all(not hasattr(torch.Tensor, n) for n in WGRAD_ADDITIONS)


def test_declared_methods_are_torch_methods():
    torch = pytest.importorskip("torch")
    for mod in _FAMILIES:
        assert len(set(mod.METHODS)) == len(mod.METHODS), mod.__name__
        wrong = [n for n in mod.METHODS if not hasattr(torch.Tensor, n)]
        assert wrong == [], mod.__name__


def test_declared_methods_are_bound_to_their_function():
    for mod in _FAMILIES:
        for name in mod.METHODS:
            fn = getattr(mod, name)  # methods take no out= (NOTE [out= arguments])
            assert getattr(wgrad.Tensor, name) is getattr(fn, "without_out", fn), name


@pytest.mark.parametrize("name", COMMON)
def test_common_torch_method_exists(name):
    assert hasattr(wgrad.Tensor, name)


@pytest.mark.parametrize("name", FUNCTION_ONLY)
def test_function_only_names_are_not_methods(name):
    assert not hasattr(wgrad.Tensor, name)


def test_method_forms_match_the_functions():
    x = wgrad.tensor([[1.0, -2.0], [3.0, 0.5]])
    c = wgrad.tensor([[True, False], [False, True]])
    assert x.where(c, 0.0).tolist() == wgrad.where(c, x, 0.0).tolist()
    assert x.type_as(wgrad.zeros(1, dtype=wgrad.complex128)).dtype is wgrad.complex128
    assert x.cdouble().dtype is wgrad.complex128 and x.long().dtype is wgrad.int64
    assert x.exp().tolist() == wgrad.exp(x).tolist()


def test_tensor_stub_is_current():
    with open(stub.OUT, encoding="utf-8") as fh:
        committed = fh.read()
    assert committed == stub.generate(), (
        "wgrad/_tensor.pyi is stale: run `python tools/gen_tensor_stub.py` and commit it")


def test_tensor_stub_lists_every_method():
    text = stub.generate()
    for name in _public_callables():
        assert f"    def {name}(" in text, name
