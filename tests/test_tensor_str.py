"""Tensors print as torch 2.13 prints them (torch/_tensor_str.py's rules), set_printoptions
included. Each case builds the same tensor in both libraries and compares the text."""
import pytest

import wgrad

CASES = {
    "small-sci": lambda m: m.tensor([3e-5, 1.0]),
    "large-sci": lambda m: m.tensor([1e10, 1.0]),
    "nan-scalar": lambda m: m.tensor(float("nan")),
    "nonfinite": lambda m: m.tensor([1.0, float("inf"), float("nan")]),
    "fixed": lambda m: m.tensor([1.5, -2.25, 100.0]),
    "complex": lambda m: m.tensor([1 + 2j, -3.5 - 1e-5j]),
    "complex-mixed": lambda m: m.tensor([1e-9 + 1j, 2.0]),
    "complex128-scalar": lambda m: m.tensor(1 + 1j, dtype=m.complex128),
    "int-matrix": lambda m: m.tensor([[1, 2], [300, -4]]),
    "bool": lambda m: m.tensor([True, False]),
    "summarised-2d": lambda m: m.arange(2000.).reshape(40, 50),
    "summarised-int": lambda m: m.arange(3000).reshape(3, 1000),
    "empty-2d": lambda m: m.zeros(0, 3, dtype=m.float64),
    "empty-int64": lambda m: m.tensor([], dtype=m.int64),
    "float64-scalar": lambda m: m.tensor(2.5, dtype=m.float64),
    "float16": lambda m: m.tensor([1.0, 2.0], dtype=m.float16),
    "bfloat16": lambda m: m.tensor([1.0, 2.0], dtype=m.bfloat16),
    "signed-zero": lambda m: m.tensor([0.0, -0.0]),
    "requires-grad": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True),
    "grad-fn": lambda m: m.ones(2, requires_grad=True) * 2,
    "wrapped-line": lambda m: m.arange(10.) / 3,
    "1e8": lambda m: m.tensor([123456789.0, 1.0]),
    "tiny-wrapped": lambda m: m.linspace(-1, 1, 30).reshape(3, 10) * 1e-3,
    "3d": lambda m: m.ones(2, 3, 4),
    "int32": lambda m: m.tensor([1, 2, 3], dtype=m.int32),
}
OPTIONS = [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False), dict(threshold=5),
           dict(edgeitems=1, threshold=5), dict(linewidth=30), dict(profile="short"),
           dict(profile="full")]


def _text(m, case):
    return repr(case(m)).replace("wgrad.", "torch.")


def test_small_values_print_in_scientific_notation():
    # torch 2.13's text (before, wgrad printed 3e-5 as 0.0000)
    assert repr(wgrad.tensor([3e-5, 1.0])) == "tensor([3.0000e-05, 1.0000e+00])"


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name):
    torch = pytest.importorskip("torch")
    assert _text(wgrad, CASES[name]) == _text(torch, CASES[name])


@pytest.mark.parametrize("opts", OPTIONS, ids=str)
def test_set_printoptions_matches_torch(opts):
    torch = pytest.importorskip("torch")
    out = {}
    for m in (torch, wgrad):
        m.set_printoptions(**opts)
        try:
            out[m.__name__] = [_text(m, lambda m: m.tensor([1.23456789, 1e-3])),
                               _text(m, lambda m: m.arange(20.)),
                               _text(m, lambda m: m.arange(2000.).reshape(40, 50) - 7.5)]
        finally:
            m.set_printoptions(profile="default")
    assert out["wgrad"] == out["torch"]


@pytest.mark.parametrize("spec", ["", ".3f", "e"])
@pytest.mark.parametrize("value", [0.5, [1.5], 3, True, 1 + 2j])
def test_format_is_torchs(value, spec):
    """A 0-d tensor formats as its number (f"{t}" too); others print, or refuse a spec."""
    torch = pytest.importorskip("torch")

    def fmt(T):
        t = T.tensor(value)
        try:
            return format(t, spec)
        except (TypeError, ValueError) as e:
            return type(e).__name__, str(e)
    assert fmt(wgrad) == fmt(torch)
