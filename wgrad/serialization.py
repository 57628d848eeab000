"""``wgrad.save`` / ``wgrad.load``: a zip of one JSON structure and one ``.npy`` per tensor.

# NOTE [Save format]
# A save file is a zip archive (stored, not compressed) holding
#   wgrad.json            {"format": "wgrad.save", "version": 1, "root": <value>}
#   tensors/<i>.npy       tensor i, written by np.save(allow_pickle=False)
# <value> is JSON: null, true/false, numbers, strings and lists stand for themselves
# (finite floats only); everything else is a one-key object:
#   {"$tensor": i, "dtype": "complex64", "shape": [2, 3], "requires_grad": false,
#    "parameter": false}                      (bfloat16: the .npy holds the uint16 bits)
#   {"$tuple": [...]}, {"$dict": [[key, value], ...]}, {"$odict": [[key, value], ...]}
#   {"$float": "nan" | "inf" | "-inf"}, {"$complex": [re, im]}, {"$dtype": "float32"}
# Loading parses the JSON and reads each array with allow_pickle=False, so it can run no
# code; the whole object is built before it is returned, and any inconsistency raises
# RuntimeError naming the file. docs/nn.md shows how plain numpy reads a file.
"""
import collections
import io
import json
import math
import os
import zipfile

import numpy as np

from . import _dtype as D
from ._creation import tensor as _tensor
from ._device import device as _device
from ._tensor import Size, Tensor
from .nn.parameter import Parameter

__all__ = ["save", "load"]

_FORMAT = "wgrad.save"
_VERSION = 1
_JSON = "wgrad.json"


class _Encoder:
    def __init__(self):
        self.arrays = []
        self.seen = {}

    def value(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return self.float(float(obj))
        if isinstance(obj, (complex, np.complexfloating)):
            return {"$complex": [self.float(obj.real), self.float(obj.imag)]}
        if isinstance(obj, D.dtype):
            return {"$dtype": obj.name}
        if isinstance(obj, collections.OrderedDict):
            items = [[self.value(k), self.value(v)] for k, v in obj.items()]
            meta = getattr(obj, "_metadata", None)
            if isinstance(meta, dict):  # a state_dict's module versions, kept as torch.save
                return {"$odict_meta": [items, self.value(meta)]}
            return {"$odict": items}
        if isinstance(obj, dict):
            return {"$dict": [[self.value(k), self.value(v)] for k, v in obj.items()]}
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, (tuple, Size)):
            return {"$tuple": [self.value(v) for v in obj]}
        hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
        raise TypeError(f"wgrad.save cannot store an object of type "
                        f"{type(obj).__module__}.{type(obj).__qualname__}{hint}; it stores "
                        f"tensors, numbers, strings, None, dtypes and nested dict/list/tuple")

    @staticmethod
    def float(x):
        if math.isfinite(x):
            return x
        return {"$float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}

    def tensor(self, t):
        idx = self.seen.get(id(t))
        if idx is None:
            idx = len(self.arrays)
            self.seen[id(t)] = idx
            a = np.asarray(t._data)
            if t.dtype is D.bfloat16:
                a = a.view(np.uint16)
            self.arrays.append(a)
        return {"$tensor": idx, "dtype": t.dtype.name, "shape": list(t.shape),
                "requires_grad": bool(t.requires_grad),
                "parameter": isinstance(t, Parameter)}


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, state dicts, optimizer state: nested dict/list/tuple of
    tensors, numbers, strings, None) to a path or a writable binary file object.

    The file is a zip of one JSON structure and one ``.npy`` per tensor (NOTE [Save
    format], docs/nn.md); nothing is pickled. ``pickle_module`` and ``pickle_protocol``
    are accepted for torch's signature and ignored.

    Example
    -------
    >>> import io, wgrad
    >>> buf = io.BytesIO()
    >>> wgrad.save({"w": wgrad.tensor([1 + 2j]), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> wgrad.load(buf)
    {'w': tensor([1.+2.j]), 'step': 3}
    """
    enc = _Encoder()
    root = enc.value(obj)  # everything is encoded before anything is written
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "root": root},
                        allow_nan=False)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(_JSON, header)
        for i, a in enumerate(enc.arrays):
            data = io.BytesIO()
            np.save(data, a, allow_pickle=False)
            z.writestr(f"tensors/{i}.npy", data.getvalue())
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(buf.getvalue())
    else:
        f.write(buf.getvalue())


class _Corrupt(Exception):
    pass


class _Decoder:
    def __init__(self, zf, map_location):
        self.zf = zf
        self.map_location = map_location
        self.cache = {}

    def value(self, v):
        if v is None or isinstance(v, (bool, str, int, float)):
            return v
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if not isinstance(v, dict) or len(v) == 0:
            raise _Corrupt(f"unexpected JSON value {v!r}")
        if "$tensor" in v:
            return self.tensor(v)
        if len(v) != 1:
            raise _Corrupt(f"unexpected JSON object {v!r}")
        (tag, body), = v.items()
        if tag == "$tuple":
            return tuple(self.value(x) for x in body)
        if tag == "$odict_meta":
            if not (isinstance(body, list) and len(body) == 2):
                raise _Corrupt(f"unexpected JSON value {body!r}")
            d = collections.OrderedDict((self.value(k), self.value(x)) for k, x in body[0])
            d._metadata = self.value(body[1])
            return d
        if tag in ("$dict", "$odict"):
            pairs = [(self.value(k), self.value(x)) for k, x in body]
            return collections.OrderedDict(pairs) if tag == "$odict" else dict(pairs)
        if tag == "$float":
            return float(body)
        if tag == "$complex":
            return complex(self.value(body[0]), self.value(body[1]))
        if tag == "$dtype":
            return D.as_dtype(body)
        raise _Corrupt(f"unknown tag {tag!r}")

    def tensor(self, v):
        idx = v["$tensor"]
        if idx in self.cache:
            return self.cache[idx]
        dt = D.as_dtype(v["dtype"])
        with self.zf.open(f"tensors/{int(idx)}.npy") as fh:
            a = np.load(io.BytesIO(fh.read()), allow_pickle=False)
        if dt is D.bfloat16:
            if a.dtype != np.uint16:
                raise _Corrupt(f"tensor {idx}: bfloat16 stored as {a.dtype}")
            a = a.view(dt.np)
        elif a.dtype != dt.np:
            raise _Corrupt(f"tensor {idx}: dtype {a.dtype} but the structure says {dt.name}")
        if list(a.shape) != list(v["shape"]):
            raise _Corrupt(f"tensor {idx}: shape {list(a.shape)} but the structure says "
                           f"{v['shape']}")
        t = _tensor(a, dtype=dt, device=self._device())
        if self.map_location is not None and callable(self.map_location):
            moved = self.map_location(t, "cpu")
            t = moved if isinstance(moved, Tensor) else t
        if v.get("parameter"):
            t = Parameter(t, requires_grad=bool(v.get("requires_grad")))
        elif v.get("requires_grad"):
            t.requires_grad_(True)
        self.cache[idx] = t
        return t

    def _device(self):
        m = self.map_location
        if m is None or callable(m):
            return None
        if isinstance(m, dict):
            m = m.get("cpu")
            if m is None:
                return None
        return _device(m)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object written by ``wgrad.save`` from a path or a readable binary file.

    Loading never unpickles, so it cannot run code: ``weights_only=True`` (the default)
    and ``weights_only=False`` read the same things. ``map_location`` may be a device (or
    its name), a dict (the ``"cpu"`` entry is used: tensors are saved from the host) or a
    callable ``fn(tensor, "cpu")`` returning the tensor to use. A file that is not a wgrad
    save file (a torch.save file, a truncated or damaged zip) raises RuntimeError and
    returns nothing.

    Example
    -------
    >>> import io, wgrad
    >>> buf = io.BytesIO()
    >>> wgrad.save([wgrad.nn.Parameter(wgrad.zeros(2))], buf)
    >>> _ = buf.seek(0)
    >>> wgrad.load(buf)
    [Parameter containing:
    tensor([0., 0.], requires_grad=True)]
    """
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name",
                                                                          "the file")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            raw = fh.read()
    else:
        raw = f.read()
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise RuntimeError(f"{name} is not a wgrad save file (not a zip archive; it may be "
                           f"truncated or corrupt)")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            names = set(zf.namelist())
            if _JSON not in names:
                what = " (it looks like a torch.save file)" if any(
                    n.endswith("data.pkl") for n in names) else ""
                raise RuntimeError(f"{name} is not a wgrad save file{what}: it has no "
                                   f"{_JSON}")
            header = json.loads(zf.read(_JSON).decode("utf-8"))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise RuntimeError(f"{name} is not a wgrad save file: {_JSON} does not "
                                   f"name the format {_FORMAT!r}")
            if header.get("version") != _VERSION:
                raise RuntimeError(f"{name} is a wgrad save file of version "
                                   f"{header.get('version')}; this wgrad reads version "
                                   f"{_VERSION}")
            return _Decoder(zf, map_location).value(header["root"])
    except RuntimeError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, IndexError, OSError, EOFError,
            UnicodeDecodeError, _Corrupt) as e:
        raise RuntimeError(f"{name} is a corrupt wgrad save file: {type(e).__name__}: {e}") \
            from e
