"""Conv3d / ConvTranspose3d and F.conv3d / F.conv_transpose3d against torch: outputs and
gradients (input, weight, bias) for strides, padding (numbers, 'same', padding modes),
dilation, groups, output_padding, complex weights; unbatched input; gradcheck."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

CASES = {
    "plain": ("Conv3d", dict(in_channels=2, out_channels=3, kernel_size=2), (1, 2, 3, 4, 4)),
    "stride-pad-dil": ("Conv3d", dict(in_channels=2, out_channels=2, kernel_size=(1, 3, 2),
                                      stride=(1, 2, 1), padding=(0, 1, 1), dilation=(1, 1, 2)),
                       (2, 2, 2, 5, 5)),
    "same-groups": ("Conv3d", dict(in_channels=4, out_channels=2, kernel_size=3, padding="same",
                                   groups=2, bias=False), (1, 4, 3, 3, 3)),
    "reflect": ("Conv3d", dict(in_channels=1, out_channels=1, kernel_size=3, padding=1,
                               padding_mode="reflect"), (1, 1, 3, 4, 4)),
    "circular-unbatched": ("Conv3d", dict(in_channels=1, out_channels=2, kernel_size=2,
                                          padding=1, padding_mode="circular"), (1, 3, 3, 3)),
    "complex": ("Conv3d", dict(in_channels=1, out_channels=2, kernel_size=2,
                               dtype="complex128"), (1, 1, 2, 3, 3)),
    "transposed": ("ConvTranspose3d", dict(in_channels=2, out_channels=3, kernel_size=2,
                                           stride=2, output_padding=1), (1, 2, 2, 2, 3)),
    "transposed-groups-dil": ("ConvTranspose3d", dict(in_channels=2, out_channels=4,
                                                      kernel_size=(2, 1, 2), groups=2,
                                                      padding=(1, 0, 0), dilation=2),
                              (1, 2, 3, 2, 2)),
}


def _run(L, cls, kw, shape, state):
    kw = dict(kw)
    dtype = getattr(L, kw.pop("dtype", "float64"))
    m = getattr(L.nn, cls)(**kw, dtype=dtype)
    m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    if dtype.is_complex:
        x = x + 1j * rng.standard_normal(shape)
    x = L.tensor(x, dtype=dtype, requires_grad=True)
    y = m(x)
    proj = L.tensor(np.random.default_rng(4).standard_normal(tuple(y.shape)), dtype=dtype)
    (y * proj).real.sum().backward() if dtype.is_complex else (y * proj).sum().backward()
    grads = [x.grad] + [p.grad for p in m.parameters()]
    return [np.asarray(t.detach().numpy() if L is torch else t.detach().numpy())
            for t in [y] + grads]


@pytest.mark.parametrize("case", list(CASES))
def test_conv3d_equals_torch(case):
    cls, kw, shape = CASES[case]
    tkw = dict(kw)
    tdt = getattr(torch, tkw.pop("dtype", "float64"))
    state = {k: v.detach().numpy() for k, v in
             getattr(torch.nn, cls)(**tkw, dtype=tdt).state_dict().items()}
    for a, b in zip(_run(wgrad, cls, kw, shape, state), _run(torch, cls, kw, shape, state)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gradcheck():
    x = wgrad.randn(1, 1, 2, 2, 3, dtype=wgrad.complex128, requires_grad=True)
    w = wgrad.randn(2, 1, 1, 2, 2, dtype=wgrad.complex128, requires_grad=True)
    assert wgrad.autograd.gradcheck(lambda x, w: wgrad.nn.functional.conv3d(x, w, padding=1),
                                    (x, w))
    v = wgrad.randn(1, 2, 2, 1, 2, dtype=wgrad.float64, requires_grad=True)
    assert wgrad.autograd.gradcheck(
        lambda x, w: wgrad.nn.functional.conv_transpose3d(x, w, stride=2), (v, w.real.detach()
                                                                            .requires_grad_()))
