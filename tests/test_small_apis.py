"""Small torch APIs against torch itself: nonzero_static, empty_permuted's layout,
nonzero(as_tuple=True), the deterministic debug mode."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

CALLS = [
    lambda L: L.nonzero_static(L.tensor([0., 1., 2., 0.]), size=3),
    lambda L: L.nonzero_static(L.tensor([[1, 0], [0, 1]]), size=1, fill_value=7),
    lambda L: L.nonzero_static(L.tensor([[1, 0], [3, 1]]), size=5),
    lambda L: L.tensor([0., 2.]).nonzero_static(size=0),
    lambda L: L.nonzero(L.tensor([[0, 2], [3, 0]]), as_tuple=True),
    lambda L: L.nonzero(L.tensor(5.), as_tuple=True),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_values_and_dtypes_as_torch(i):
    got, want = (CALLS[i](L) for L in (wgrad, torch))
    got, want = (o if isinstance(o, tuple) else (o,) for o in (got, want))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("size", [-1, 2.5])
def test_nonzero_static_errors_as_torch(size):
    errors = []
    for L in (wgrad, torch):
        with pytest.raises((TypeError, RuntimeError)) as e:
            L.nonzero_static(L.tensor([1., 0.]), size=size)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_empty_permuted_layout_as_torch():
    for size, perm in [((2, 3, 4), (0, 2, 1)), ((2, 3), (1, 0)), ((5,), (0,))]:
        got, want = (L.empty_permuted(size, perm, requires_grad=True) for L in (wgrad, torch))
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert got.is_contiguous() == want.is_contiguous() and got.is_leaf and got.requires_grad
    for args in [((2, 3), (0,)), ((2, 3), (0, 0))]:
        errors = []
        for L in (wgrad, torch):
            with pytest.raises(RuntimeError) as e:
                L.empty_permuted(*args)
            errors.append(str(e.value))
        assert errors[0] == errors[1]


def test_deterministic_debug_mode_as_torch():
    try:
        for mode in ["warn", 2, "default", 1, 0]:
            seen = []
            for L in (wgrad, torch):
                L.set_deterministic_debug_mode(mode)
                seen.append((L.get_deterministic_debug_mode(),
                             L.are_deterministic_algorithms_enabled(),
                             L.is_deterministic_algorithms_warn_only_enabled()))
            assert seen[0] == seen[1]
        for bad in ["x", 3, 1.0]:
            errors = []
            for L in (wgrad, torch):
                with pytest.raises(Exception) as e:
                    L.set_deterministic_debug_mode(bad)
                errors.append((type(e.value), str(e.value)))
            assert errors[0] == errors[1]
    finally:
        wgrad.set_deterministic_debug_mode(0)
        torch.set_deterministic_debug_mode(0)


def test_random_module_as_torch():
    for L in (wgrad, torch):
        L.random.manual_seed(3)
        a = L.rand(3)
        with L.random.fork_rng():
            L.rand(5)  # drawn inside: the state outside is restored
        b = L.rand(3)
        L.random.manual_seed(3)
        L.rand(3)
        np.testing.assert_array_equal(b.numpy(), L.rand(3).numpy())
        assert L.random.initial_seed() == 3 and not np.array_equal(a.numpy(), b.numpy())
        s = L.random.get_rng_state()
        c = L.rand(2)
        L.random.set_rng_state(s)
        np.testing.assert_array_equal(c.numpy(), L.rand(2).numpy())


def _outcome(T, fn):
    try:
        r = fn(T)
    except Exception as e:  # noqa: BLE001  (the exception is the value compared)
        return type(e).__name__, str(e)
    return r


SEEDS_AND_SMOOTHING = {
    "negative_seed": lambda T: T.Generator().manual_seed(-1).initial_seed(),
    "seed_too_large": lambda T: T.Generator().manual_seed(2 ** 64),
    "seed_too_small": lambda T: T.Generator().manual_seed(-2 ** 63 - 1),
    "float_seed": lambda T: T.Generator().manual_seed(1.5),
    "bool_seed": lambda T: T.Generator().manual_seed(True),
    "numpy_seed": lambda T: T.Generator().manual_seed(np.int64(3)),
    "global_float_seed": lambda T: T.manual_seed(2.7).initial_seed(),
    "global_negative_seed": lambda T: T.manual_seed(-5).initial_seed(),
    "smoothing_negative": lambda T: round(T.nn.functional.cross_entropy(
        T.tensor([[1., 2., 0.5]]), T.tensor([1]), label_smoothing=-0.5).item(), 6),
    "smoothing_two": lambda T: T.nn.functional.cross_entropy(
        T.tensor([[1., 2.]]), T.tensor([1]), label_smoothing=2.0),
    "smoothing_fraction": lambda T: T.nn.functional.cross_entropy(
        T.tensor([[1., 2.]]), T.tensor([1]), label_smoothing=1.25),
}


@pytest.mark.parametrize("name", sorted(SEEDS_AND_SMOOTHING))
def test_seeds_and_label_smoothing_as_torch(name):
    """Generator seeds as torch's (a negative one wraps modulo 2**64, errors torch's), and
    cross_entropy's label_smoothing check (a negative one is no smoothing)."""
    fn = SEEDS_AND_SMOOTHING[name]
    assert _outcome(wgrad, fn) == _outcome(torch, fn)
