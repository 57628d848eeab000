"""A list holding sequences, tensors or slices indexes as a tuple (torch's legacy rule,
with its deprecation warning), for reading, writing and gradients."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _run(lib):
    x = lib.arange(1.0, 17).view(4, 4)
    y = x.clone().requires_grad_()
    y[[[1, 1, 3, 2, 1, 2], [0]]].sum().backward()
    z = lib.zeros(4, 4)
    z[[[0, 1], [2, 3]]] = 1.0
    return (y.grad.tolist(), x[[lib.tensor([0, 1]), [2, 3]]].tolist(),
            x[[slice(0, 2), 1]].tolist(), z.tolist(), x[[0, 1]].tolist())


def test_list_of_sequences_indexes_as_tuple():
    with pytest.warns(UserWarning, match="Using a non-tuple sequence for multidimensional "
                                         "indexing is deprecated"):
        got = _run(wgrad)
    with pytest.warns(UserWarning):
        want = _run(torch)
    assert got == want


def test_numpy_of_a_tensor_requiring_grad_under_no_grad():
    x = wgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                           "grad"):
        x.numpy()
    with wgrad.no_grad():
        np.testing.assert_array_equal(x.numpy(), [1.0, 1.0])
