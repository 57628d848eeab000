"""Doctests (``--doctest-modules`` over wgrad/, see pyproject.toml) see ``wgrad`` as a
global, as a reader of a docstring example would assume."""
import pytest

import wgrad


@pytest.fixture(autouse=True)
def _wgrad_in_doctests(doctest_namespace):
    doctest_namespace["wgrad"] = wgrad
