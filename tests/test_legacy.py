"""Legacy typed-tensor constructors (LongTensor, FloatTensor, ...) against torch's."""
import warnings

import pytest

import wgrad

torch = pytest.importorskip("torch")

NAMES = ["FloatTensor", "DoubleTensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_constructors_match_torch(name):
    for args in [([1, 0, 2],), (2, 3), (), (torch.Size([4]),)]:
        w_args = tuple(wgrad.Size(a) if isinstance(a, torch.Size) else a for a in args)
        got, want = getattr(wgrad, name)(*w_args), getattr(torch, name)(*args)
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        if args and isinstance(args[0], list):
            assert got.tolist() == want.tolist()
    t = getattr(wgrad, name)([1])
    assert isinstance(t, getattr(wgrad, name))
    assert not isinstance(wgrad.ones(1, dtype=wgrad.complex64), getattr(wgrad, name))
    assert getattr(wgrad, name)(t) is t


def test_index_with_long_tensor():
    x = wgrad.arange(5.0, requires_grad=True)
    x[wgrad.LongTensor([1, 1, 3])].sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("arg", ["DoubleTensor", "torch.DoubleTensor", "torch.FloatTensor",
                                 "IntTensor", "torch.cuda.FloatTensor", "foo", 3])
def test_set_default_tensor_type_is_torchs(arg):
    """The default dtype it sets and its errors; wgrad warns every call (torch once)."""
    torch = pytest.importorskip("torch")

    def run(T):
        a = getattr(T, arg) if arg in ("DoubleTensor", "IntTensor") else arg
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                T.set_default_tensor_type(a)
            if T is wgrad:
                assert any("set_default_tensor_type" in str(w.message) for w in seen)
            return str(T.get_default_dtype()).split(".")[-1]
        except (TypeError, ModuleNotFoundError) as e:
            return type(e).__name__, str(e)
        finally:
            T.set_default_dtype(T.float32)
    assert run(wgrad) == run(torch)
