"""wgrad.save / wgrad.load: exact round trips, the documented layout read by plain numpy,
and clear errors (never a half-loaded object) for corrupt or foreign files."""
import io
import json
import math
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import wgrad


def _same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, wgrad.Tensor):
        assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
        assert a.requires_grad == b.requires_grad
        x, y = np.asarray(a.detach()), np.asarray(b.detach())
        if a.dtype is wgrad.bfloat16:
            x, y = x.view(np.uint16), y.view(np.uint16)
        np.testing.assert_array_equal(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def _round_trip(obj, **kw):
    buf = io.BytesIO()
    wgrad.save(obj, buf)
    buf.seek(0)
    return wgrad.load(buf, **kw)


def _tensors():
    return {
        "f32": wgrad.tensor([1.5, -2.25, 1e-30]),
        "f64": wgrad.tensor([[math.pi, -0.0]], dtype=wgrad.float64),
        "c64": wgrad.tensor([1 + 2j, -3.5j]),
        "c128": wgrad.tensor([[1e-300 + 1j]], dtype=wgrad.complex128),
        "bf16": wgrad.tensor([1.0, 3.140625, -2.0e-3], dtype=wgrad.bfloat16),
        "f16": wgrad.tensor([65504.0, 1e-4], dtype=wgrad.float16),
        "i64": wgrad.tensor([2 ** 62, -1]),
        "i8": wgrad.tensor([-128, 127], dtype=wgrad.int8),
        "bool": wgrad.tensor([True, False]),
        "zero_dim": wgrad.tensor(3.0),
        "zero_dim_c": wgrad.tensor(1 - 1j),
        "empty": wgrad.zeros(0, 3),
        "empty_c": wgrad.zeros(2, 0, dtype=wgrad.cdouble),
        "grad": wgrad.tensor([1.0], requires_grad=True),
    }


def test_tensor_round_trips_exact():
    t = _tensors()
    _same(t, _round_trip(t))
    for v in t.values():
        _same(v, _round_trip(v))


def test_nested_structures():
    obj = OrderedDict(a=[1, 2.5, float("nan"), float("inf"), -float("inf"), 1 + 2j, None,
                        True, "s", (wgrad.float64, wgrad.cfloat)],
                      b={0: {"step": 3, "exp_avg": wgrad.ones(2, dtype=wgrad.cfloat)},
                         1: (), "x": []},
                      c=(1, (2, [3])), d=wgrad.Size([2, 3]))
    out = _round_trip(obj)
    assert isinstance(out, OrderedDict) and isinstance(out["b"], dict)
    assert type(out["b"]) is dict and list(out["b"]) == [0, 1, "x"]
    obj["d"] = (2, 3)  # a Size comes back as the tuple it is
    _same(obj, out)


def test_parameters_and_shared_tensors():
    p = wgrad.nn.Parameter(wgrad.ones(2, dtype=wgrad.cfloat))
    q = wgrad.nn.Parameter(wgrad.zeros(1), requires_grad=False)
    x = wgrad.tensor([1.0])
    out = _round_trip([p, q, x, x])
    assert type(out[0]) is wgrad.nn.Parameter and out[0].requires_grad
    assert type(out[1]) is wgrad.nn.Parameter and not out[1].requires_grad
    assert out[2] is out[3]
    _same([p, q, x, x], out)


def test_module_state_dict_and_path(tmp_path):
    m = wgrad.nn.Sequential(wgrad.nn.Linear(3, 2, dtype=wgrad.cfloat), wgrad.nn.BatchNorm1d(2))
    path = tmp_path / "model.pt"
    wgrad.save(m.state_dict(), path)
    sd = wgrad.load(str(path), map_location="cpu", weights_only=False)
    _same(m.state_dict(), sd)
    # the module versions come back too (torch.save pickles them): BatchNorm's is 2
    assert sd._metadata == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    m2 = wgrad.nn.Sequential(wgrad.nn.Linear(3, 2, dtype=wgrad.cfloat), wgrad.nn.BatchNorm1d(2))
    m2.load_state_dict(sd)
    _same(m.state_dict(), m2.state_dict())
    with open(path, "rb") as fh:
        _same(sd, wgrad.load(fh, map_location=lambda t, loc: t))
    _same(sd, wgrad.load(path, map_location={"cpu": "cpu"}))


def test_layout_readable_by_numpy():
    """The documented layout (docs/nn.md): JSON structure + one .npy per tensor."""
    buf = io.BytesIO()
    wgrad.save({"w": wgrad.tensor([1 + 2j]), "b": wgrad.tensor([1.0], dtype=wgrad.bfloat16)},
               buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        head = json.loads(z.read("wgrad.json"))
        assert head["format"] == "wgrad.save" and head["version"] == 1
        pairs = head["root"]["$dict"]
        w = pairs[0][1]
        assert pairs[0][0] == "w" and w["dtype"] == "complex64" and w["shape"] == [1]
        arr = np.load(io.BytesIO(z.read(f"tensors/{w['$tensor']}.npy")), allow_pickle=False)
        np.testing.assert_array_equal(arr, np.array([1 + 2j], np.complex64))
        b = pairs[1][1]
        bits = np.load(io.BytesIO(z.read(f"tensors/{b['$tensor']}.npy")), allow_pickle=False)
        assert bits.dtype == np.uint16 and bits[0] == 0x3F80  # bfloat16 1.0


def test_unsupported_objects_are_refused_before_writing():
    buf = io.BytesIO()
    with pytest.raises(TypeError, match="save its state_dict"):
        wgrad.save(wgrad.nn.Linear(1, 1), buf)
    with pytest.raises(TypeError, match="cannot store an object of type builtins.set"):
        wgrad.save({"a": {1, 2}}, buf)
    assert buf.getvalue() == b""


def _corrupt_files():
    good = io.BytesIO()
    wgrad.save({"w": wgrad.ones(3), "n": 1}, good)
    raw = good.getvalue()
    files = {"garbage": b"not a zip at all", "truncated": raw[: len(raw) // 2],
             "empty": b""}
    pickled = io.BytesIO()
    with zipfile.ZipFile(pickled, "w") as z:  # the layout of a torch.save file
        z.writestr("archive/data.pkl", pickle.dumps({"w": 1}))
    files["torch_like"] = pickled.getvalue()

    def rewrite(edit):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(raw)) as zin, zipfile.ZipFile(out, "w") as zout:
            for info in zin.infolist():
                data = edit(info.filename, zin.read(info.filename))
                if data is not None:
                    zout.writestr(info.filename, data)
        return out.getvalue()
    files["missing_array"] = rewrite(lambda n, d: None if n.endswith(".npy") else d)
    files["bad_json"] = rewrite(lambda n, d: d[:-3] if n == "wgrad.json" else d)
    files["wrong_shape"] = rewrite(
        lambda n, d: d.replace(b'"shape": [3]', b'"shape": [4]') if n == "wgrad.json" else d)
    files["other_format"] = rewrite(
        lambda n, d: d.replace(b"wgrad.save", b"other") if n == "wgrad.json" else d)
    pick = io.BytesIO()
    np.save(pick, np.array([object()], dtype=object), allow_pickle=True)
    files["pickled_array"] = rewrite(lambda n, d: pick.getvalue() if n.endswith(".npy") else d)
    return files


@pytest.mark.parametrize("name", sorted(_corrupt_files()))
def test_corrupt_or_foreign_files(name):
    data = _corrupt_files()[name]
    with pytest.raises(RuntimeError, match="not a wgrad save file|corrupt wgrad save file"):
        wgrad.load(io.BytesIO(data))


def test_real_torch_file_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(RuntimeError, match="is not a wgrad save file .it looks like a "
                                           "torch.save file"):
        wgrad.load(path)
