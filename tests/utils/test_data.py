"""wgrad.utils.data against torch.utils.data: collation, the loader's batches and
lengths, splits, datasets and samplers, and torch's argument errors. Random orders are
checked by what they must be (permutations, reproducible by seed), not against torch's."""
import collections
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.utils import data as wdata

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", "x y")


def _flat(o):
    """A structure as nested Python values with each tensor's dtype name and values."""
    if hasattr(o, "numpy") and hasattr(o, "dtype"):
        return ("T", str(o.dtype).split(".")[1], o.numpy().tolist())
    if isinstance(o, dict):
        return {k: _flat(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return (type(o).__name__, [_flat(v) for v in o])
    return o


COLLATE = [  # batches, built per library
    lambda L: [L.tensor([1., 2.]), L.tensor([3., 4.])],
    lambda L: [np.arange(3), np.arange(3, 6)],
    lambda L: [np.float32(1.5), np.float32(2.5)],
    lambda L: [1.5, 2.0],
    lambda L: [1, 2, 3],
    lambda L: [True, False],
    lambda L: ["a", "b"],
    lambda L: [{"a": 1.0, "b": [1, 2]}, {"a": 2.0, "b": [3, 4]}],
    lambda L: [(L.tensor(1), "x"), (L.tensor(2), "y")],
    lambda L: [Point(1, 2.0), Point(3, 4.0)],
    lambda L: [[np.ones(2), 0], [np.zeros(2), 1]],
]


@pytest.mark.parametrize("i", range(len(COLLATE)))
def test_default_collate_and_convert_as_torch(i):
    for name in ("default_collate", "default_convert"):
        got = getattr(wdata, name)(COLLATE[i](wgrad))
        want = getattr(tdata, name)(COLLATE[i](torch))
        assert _flat(got) == _flat(want), name


def test_collate_errors_as_torch():
    for batch in ([object(), object()], [[1, 2], [3]], [np.array(["a"]), np.array(["b"])]):
        errors = []
        for lib in (wdata, tdata):
            with pytest.raises((TypeError, RuntimeError)) as e:
                lib.default_collate(batch)
            errors.append((type(e.value), str(e.value).split(";")[0]))
        assert errors[0] == errors[1]


class Stream:
    """An iterable dataset of 7 numbers, for both libraries."""

    def __init__(self, lib):
        base = lib.IterableDataset
        self.ds = type("S", (base,), {"__iter__": lambda s: iter(range(7)),
                                      "__len__": lambda s: 7})()


LOADERS = [  # keyword arguments over a 7-sample TensorDataset (or the stream)
    {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
    {"batch_size": 7}, {"batch_sampler": [[0, 1], [6, 2, 3]]},
    {"batch_size": 2, "collate_fn": len}, {"batch_size": 2, "num_workers": 2},
    {"stream": True, "batch_size": 3}, {"stream": True, "batch_size": None},
    {"stream": True, "batch_size": 3, "drop_last": True},
]


@pytest.mark.parametrize("kw", LOADERS, ids=[str(k) for k in LOADERS])
def test_loader_batches_and_length_as_torch(kw):
    out = []
    for L, lib in ((wgrad, wdata), (torch, tdata)):
        kw2 = dict(kw)
        if L is torch:
            kw2.pop("num_workers", None)  # the batches wgrad makes in-process: torch's
        if kw2.pop("stream", False):
            ds = Stream(lib).ds
        else:
            ds = lib.TensorDataset(L.arange(14.).reshape(7, 2), L.arange(7))
        loader = lib.DataLoader(ds, **kw2)
        out.append((len(loader), [_flat(b) for b in loader]))
    assert out[0] == out[1]


def test_shuffle_is_a_permutation_reproducible_by_seed():
    ds = wdata.TensorDataset(wgrad.arange(10))

    def epoch(loader):
        return [int(v) for (b,) in loader for v in b.tolist()]
    wgrad.manual_seed(5)
    loader = wdata.DataLoader(ds, batch_size=4, shuffle=True)
    a, b = epoch(loader), epoch(loader)
    assert sorted(a) == sorted(b) == list(range(10)) and a != b  # a new order each epoch
    wgrad.manual_seed(5)
    assert epoch(wdata.DataLoader(ds, batch_size=4, shuffle=True)) == a
    g = wgrad.Generator().manual_seed(1)
    c = epoch(wdata.DataLoader(ds, batch_size=3, shuffle=True, generator=g))
    assert c == epoch(wdata.DataLoader(ds, batch_size=3, shuffle=True,
                                       generator=wgrad.Generator().manual_seed(1)))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.34, 0.33, 0.33], [1.0, 0.0]])
def test_random_split_lengths_as_torch(lengths):
    ds = list(range(10))
    with warnings.catch_warnings(record=True) as seen:  # an empty split warns, as torch's
        warnings.simplefilter("always")
        mine = wdata.random_split(ds, lengths, generator=wgrad.Generator().manual_seed(0))
        theirs = tdata.random_split(ds, lengths, generator=torch.Generator().manual_seed(0))
    assert [str(w.message) for w in seen[:len(seen) // 2]] == \
        [str(w.message) for w in seen[len(seen) // 2:]]
    assert [len(s) for s in mine] == [len(s) for s in theirs]
    assert sorted(i for s in mine for i in s) == ds  # disjoint, covering


def test_datasets_as_torch():
    for L, lib in ((wgrad, wdata), (torch, tdata)):
        a = lib.TensorDataset(L.arange(3))
        b = lib.TensorDataset(L.arange(3, 5))
        cat = a + b
        assert len(cat) == 5 and int(cat[3][0]) == 3 and int(cat[-1][0]) == 4
        sub = lib.Subset(cat, [4, 0])
        assert len(sub) == 2 and int(sub[0][0]) == 4
        st = lib.StackDataset(a, a)
        assert len(st) == 3 and int(st[2][1][0]) == 2
        chain = Stream(lib).ds + Stream(lib).ds
        assert len(list(chain)) == 14
    with pytest.raises(AssertionError, match="Size mismatch"):
        wdata.TensorDataset(wgrad.ones(2), wgrad.ones(3))


def test_samplers():
    wgrad.manual_seed(0)
    w = wdata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200)
    drawn = list(w)
    assert len(w) == 200 and set(drawn) <= {1, 3} and drawn.count(3) > drawn.count(1)
    assert sorted(wdata.SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    r = wdata.RandomSampler(range(4), replacement=True, num_samples=9)
    assert len(list(r)) == 9 == len(r) and set(r) <= set(range(4))
    r = wdata.RandomSampler(range(4), num_samples=6)  # a whole permutation, then part of one
    drawn = list(r)
    assert len(drawn) == 6 and sorted(drawn[:4]) == [0, 1, 2, 3]
    assert list(wdata.BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]


ERRORS = [
    {"shuffle": True, "sampler": [0, 1]}, {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True}, {"batch_size": None, "drop_last": True},
    {"num_workers": -1}, {"stream": True, "shuffle": True},
    {"stream": True, "batch_sampler": [[0]]}, {"persistent_workers": True},
]


@pytest.mark.parametrize("kw", ERRORS, ids=[str(k) for k in ERRORS])
def test_loader_errors_as_torch(kw):
    errors = []
    for L, lib in ((wgrad, wdata), (torch, tdata)):
        kw2 = dict(kw)
        ds = Stream(lib).ds if kw2.pop("stream", False) else lib.TensorDataset(L.arange(3))
        with pytest.raises(ValueError) as e:
            lib.DataLoader(ds, **kw2)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


DATA_ERRORS = [
    lambda L, lib: lib.random_split(range(5), [2, 2]),
    lambda L, lib: lib.ConcatDataset([]),
    lambda L, lib: lib.ConcatDataset([lib.TensorDataset(L.ones(2))])[-5],
    lambda L, lib: lib.RandomSampler(range(3), replacement=1),
    lambda L, lib: lib.RandomSampler(range(3), num_samples=0),
    lambda L, lib: lib.WeightedRandomSampler([[1.]], 2),
    lambda L, lib: lib.WeightedRandomSampler([1.], 0),
    lambda L, lib: lib.BatchSampler(range(3), 2, 1),
    lambda L, lib: lib.StackDataset(lib.TensorDataset(L.ones(2)), lib.TensorDataset(L.ones(3))),
]


@pytest.mark.parametrize("i", range(len(DATA_ERRORS)))
def test_dataset_and_sampler_errors_as_torch(i):
    errors = []
    for L, lib in ((wgrad, wdata), (torch, tdata)):
        with pytest.raises(Exception) as e:
            DATA_ERRORS[i](L, lib)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]
