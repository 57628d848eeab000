"""wgrad.testing.assert_close and make_tensor against torch.testing: reports, default
tolerances by dtype, nested containers, argument errors, ranges."""
import math

import pytest

import wgrad
from wgrad.testing import assert_close, make_tensor

torch = pytest.importorskip("torch")
import torch.testing  # noqa: E402

NAN = math.nan
CASES = [
    lambda L: ((L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 3.1])), {}),
    lambda L: ((L.tensor([1.0, 2.0 + 2e-7], dtype=L.float64), L.tensor([1.0, 2.0],
                                                                        dtype=L.float64)), {}),
    lambda L: ((L.tensor([[1.0, 2.0], [3.0, 4.0]]), L.tensor([[1.0, 2.0], [3.0, 4.00001]])), {}),
    lambda L: ((L.tensor([1, 2]), L.tensor([1, 3])), {}),
    lambda L: ((L.tensor([True]), L.tensor([False])), {}),
    lambda L: ((L.tensor(1.0), L.tensor(2.0)), {}),
    lambda L: ((L.tensor([1 + 1j]), L.tensor([1 + 2j])), {}),
    lambda L: ((L.tensor([1.0, NAN]), L.tensor([1.0, NAN])), {}),
    lambda L: ((L.tensor([1.0, NAN]), L.tensor([1.0, NAN])), {"equal_nan": True}),
    lambda L: ((L.tensor([1.0]), L.tensor([1.1])), {"rtol": 0.2, "atol": 0}),
    lambda L: ((L.tensor([1.0]), L.tensor([1.1])), {"rtol": 0.2}),
    lambda L: ((L.tensor([1.0]), L.tensor([1.1])), {"msg": "custom"}),
    lambda L: ((L.tensor([1.0]), L.tensor([1.1])), {"msg": lambda m: m[:9] + "!"}),
    lambda L: ((L.ones(2), L.ones(2, dtype=L.float64)), {}),
    lambda L: ((L.ones(2), L.ones(2, dtype=L.float64)), {"check_dtype": False}),
    lambda L: ((L.ones(2), L.ones(3)), {}),
    lambda L: ((1.0, 1.1), {}),
    lambda L: ((2, 3), {}),
    lambda L: (([L.ones(1), L.ones(1)], [L.ones(1), L.zeros(1)]), {}),
    lambda L: (({"a": L.ones(1)}, {"a": L.zeros(1)}), {}),
    lambda L: ((L.ones(1, requires_grad=True), L.ones(1)), {}),
]


def _outcome(lib, mod, case):
    args, kw = case(lib)
    try:
        mod.assert_close(*args, **kw)
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e).replace("torch.", "").replace("wgrad.", "")
    return None


@pytest.mark.parametrize("case", CASES)
def test_assert_close_matches_torch(case):
    assert _outcome(wgrad, wgrad.testing, case) == _outcome(torch, torch.testing, case)


def test_make_tensor_ranges_and_flags():
    ints = make_tensor(2000, dtype=wgrad.int64)
    assert (ints.min().item(), ints.max().item()) == (-9, 9)
    assert make_tensor(500, dtype=wgrad.uint8).min().item() == 0
    f = make_tensor((40, 50), dtype=wgrad.float64, low=-1, high=2)
    assert tuple(f.shape) == (40, 50) and f.dtype == wgrad.float64
    assert -1 <= f.min().item() and f.max().item() < 2
    c = make_tensor(3, dtype=wgrad.complex128, requires_grad=True, noncontiguous=True,
                    device="cpu")
    assert c.requires_grad and c.dtype == wgrad.complex128 and c.imag.abs().sum().item() > 0
    assert make_tensor(2, dtype=wgrad.int64, low=0, high=1, exclude_zero=True).tolist() == [1, 1]
    with pytest.warns(FutureWarning):
        z = make_tensor(2, dtype=wgrad.float32, low=0, high=0, exclude_zero=True)
    assert z.tolist() == torch.testing.make_tensor(
        2, dtype=torch.float32, device="cpu", low=0, high=0, exclude_zero=True).tolist()
    assert make_tensor((), dtype=wgrad.bool).dtype == wgrad.bool


@pytest.mark.parametrize("kw", [
    {"dtype": "int64", "requires_grad": True},
    {"dtype": "float32", "low": 5, "high": 1},
    {"dtype": "float32", "low": NAN},
])
def test_make_tensor_errors_match_torch(kw):
    msgs = []
    for lib, mod in ((wgrad, wgrad.testing), (torch, torch.testing)):
        k = dict(kw, dtype=getattr(lib, kw["dtype"]), device="cpu")
        with pytest.raises(ValueError) as e:
            mod.make_tensor(2, **k)
        msgs.append(str(e.value).replace("torch.", "").replace("wgrad.", ""))
    assert msgs[0] == msgs[1]
