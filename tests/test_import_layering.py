"""The import graph follows DESIGN.md section 3: arrows point down only.

Every module of the wgrad package is read with ``ast``; its ``wgrad.*`` imports, at
module level and inside functions, are resolved to module names and checked against the
layer rules below.
"""
import ast
import os

import pytest

import wgrad

ROOT = os.path.dirname(wgrad.__file__)

# layers that see no Tensor, then the Tensor, then ops; the public packages sit above
CORE = "wgrad._autograd"
BRIDGES = ("wgrad.nn", "wgrad.optim", "wgrad.jax", "wgrad.testing", "wgrad.fft",
           "wgrad.linalg")
# function-local imports that remain, each with its reason
LOCAL_IMPORTS_ALLOWED = {
    # pad and select need indexing, which imports shape at module level
    ("wgrad.ops.shape", "wgrad.ops.indexing"),
}
OPTIONAL_DEPENDENCIES = ("hypothesis", "matplotlib", "IPython")  # IPython: wgrad.viz in a notebook


def _modules():
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                name = rel[:-len(".__init__")] if rel.endswith(".__init__") else rel
                yield name, path, f == "__init__.py"


MODULES = {name: (path, is_pkg) for name, path, is_pkg in _modules()}


def _resolve(module, is_pkg, node):
    """The wgrad modules an import statement names (``from pkg import name`` names
    ``pkg.name`` when that is a module, else ``pkg``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        parts = module.split(".")
        base = parts if is_pkg else parts[:-1]
        base = base[:len(base) - (node.level - 1)]
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module
    out = []
    for a in node.names:
        sub = f"{pkg}.{a.name}"
        out.append(sub if sub in MODULES else pkg)
    return out


def _imports(module):
    """``(imported module, at module level?, line)`` for every import in ``module``."""
    path, is_pkg = MODULES[module]
    tree = ast.parse(open(path).read())
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in _resolve(module, is_pkg, node):
                out.append((name, id(node) in top, node.lineno))
    return out


def _in(name, *prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _wgrad_imports(module):
    return [(n, top, line) for n, top, line in _imports(module) if _in(n, "wgrad")]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _in(m, CORE)))
def test_core_knows_no_tensor(module):
    for name, _, line in _wgrad_imports(module):
        assert _in(name, CORE, "wgrad._dtype", "wgrad._device"), \
            f"{module}:{line} imports {name}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _in(m, "wgrad.ops")))
def test_ops_never_import_the_public_autograd_or_above(module):
    for name, _, line in _wgrad_imports(module):
        assert not _in(name, "wgrad.autograd", *BRIDGES), f"{module}:{line} imports {name}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _in(
    m, CORE, "wgrad._tensor", "wgrad._creation", "wgrad.ops", "wgrad.autograd")))
def test_nothing_below_imports_the_bridges(module):
    for name, _, line in _wgrad_imports(module):
        assert not _in(name, *BRIDGES), f"{module}:{line} imports {name}"


def test_tensor_reaches_up_only_through_its_delegates():
    """Tensor's dunders delegate to ops and ``backward`` to autograd.backward
    (DESIGN.md section 3): those imports come after the class, at module level."""
    path, _ = MODULES["wgrad._tensor"]
    class_line = next(n.lineno for n in ast.parse(open(path).read()).body
                      if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    for name, top, line in _wgrad_imports("wgrad._tensor"):
        if _in(name, CORE, "wgrad._dtype", "wgrad._device", "wgrad._tensor_str",
               "wgrad._tensor_storage"):  # beside _tensor: its mixin of storage methods
            continue
        assert _in(name, "wgrad.ops", "wgrad._creation", "wgrad.autograd"), name
        assert top and line > class_line, f"wgrad._tensor:{line} imports {name}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_function_local_imports(module):
    for name, top, line in _imports(module):
        if top or _in(name, *OPTIONAL_DEPENDENCIES):
            continue
        assert (module, name) in LOCAL_IMPORTS_ALLOWED, \
            f"{module}:{line} imports {name} inside a function"
