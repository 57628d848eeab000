"""wgrad's public namespace: internal modules never show up as ``wgrad.<name>``."""
import importlib
import types

import pytest

import wgrad

INTERNAL = ("shape", "elementwise", "indexing", "reduction", "inplace", "conv",
            "builtins_bool", "spectral", "linear_algebra", "interop", "_builtins",
            "_importlib", "_m")


@pytest.mark.parametrize("name", INTERNAL)
def test_internal_name_is_not_bound(name):
    assert not hasattr(wgrad, name)


@pytest.mark.parametrize("name", ["fft", "linalg", "nn", "autograd", "jax", "func", "special",
                                  "accelerator", "cpu", "jit", "compiler", "profiler"])
def test_namespace_is_the_public_module(name):
    mod = getattr(wgrad, name)
    assert isinstance(mod, types.ModuleType)
    assert mod is importlib.import_module(f"wgrad.{name}")
    assert mod.__name__ == f"wgrad.{name}"


def test_ops_all_lists_functions_only():
    from wgrad import ops
    for name in ops.__all__:
        assert not isinstance(getattr(ops, name), types.ModuleType), name
        assert getattr(wgrad, name) is getattr(ops, name), name


def test_public_functions_are_not_shadowed_by_modules():
    assert callable(wgrad.compile) and not isinstance(wgrad.compile, types.ModuleType)
    assert wgrad.fft.fft is not None and wgrad.linalg.solve is not None


def test_jax_bridges_are_reexported():
    for name in ("from_jax", "to_jax", "jax_function", "from_dlpack", "compile"):
        assert getattr(wgrad, name) is getattr(wgrad.jax, name)
