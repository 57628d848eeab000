"""Legacy typed-tensor constructors (LongTensor, FloatTensor, ...) against torch's."""
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
