"""The one table of torch's dtype names: ``dtype.scalar_name`` and ``dtype.legacy_type``."""
import re

import pytest

import wgrad

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128"]


def _torch_scalar_name(d):
    """torch's ScalarType name of ``d``, as its index_put_ error message prints it."""
    other = torch.float64 if d is not torch.float64 else torch.float32
    with pytest.raises(RuntimeError) as e:
        torch.zeros(2, dtype=d).index_put_((torch.tensor([0]),), torch.zeros(1, dtype=other))
    return re.search(r"got (\w+) for the destination", str(e.value)).group(1)


@pytest.mark.parametrize("name", NAMES)
def test_scalar_name_is_torchs(name):
    assert getattr(wgrad, name).scalar_name == _torch_scalar_name(getattr(torch, name))


@pytest.mark.parametrize("name", NAMES)
def test_legacy_type_is_torchs(name):
    assert getattr(wgrad, name).legacy_type == torch.zeros(1, dtype=getattr(torch, name)).type()


@pytest.mark.parametrize("name", ["bfloat16", "int16", "uint8"])
def test_messages_name_every_dtype_as_torch_does(name):
    # dtypes some of the old per-module copies of the table did not know
    x = wgrad.zeros(2, dtype=wgrad.float32)
    v = wgrad.zeros(1, dtype=getattr(wgrad, name))
    with pytest.raises(RuntimeError) as ours:
        x.index_put_((wgrad.tensor([0]),), v)
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(2).index_put_((torch.tensor([0]),), torch.zeros(1, dtype=getattr(torch, name)))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", [None] + NAMES)
def test_finfo_and_iinfo_are_torchs(name):
    """Every attribute and the repr, or the same TypeError."""
    def info(T):
        d = None if name is None else getattr(T, name)
        out = []
        for kind in ("finfo", "iinfo"):
            try:
                i = getattr(T, kind)() if d is None else getattr(T, kind)(d)
            except TypeError as e:
                out.append(("TypeError", str(e)))
                continue
            attrs = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype") if kind == "finfo" else ("bits", "max", "min", "dtype")
            out.append([repr(i)] + [getattr(i, a) for a in attrs])
            if d is None:
                break
        return out
    assert info(wgrad) == info(torch)
