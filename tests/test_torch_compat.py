"""``import wgrad as torch``: typical autograd snippets run unchanged and give PyTorch's
gradients (complex ones included). Skipped when PyTorch is not installed."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

SNIPPETS = {
    "holomorphic_chain": """
z = torch.tensor([0.3 + 0.4j, -1.0 + 0.5j], dtype=torch.complex128, requires_grad=True)
loss = ((z.sin() * z.exp() + z ** 2).abs() ** 2).sum()
loss.backward()
out = [z.grad]
""",
    "non_holomorphic": """
z = torch.tensor([0.3 + 0.4j, -1.0 + 0.5j, 2 - 1j], dtype=torch.complex128, requires_grad=True)
w = torch.tensor([1.0 - 1j, 0.5j, 2.0], dtype=torch.complex128)
loss = (z.conj() * w).real.sum() + (z.angle() * z.abs()).sum() + z.imag.pow(2).sum()
loss.backward()
out = [z.grad]
""",
    "real_to_complex": """
x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
c = torch.complex(x, x * 2) * torch.tensor(1 - 2j, dtype=torch.complex128)
loss = (c * c.conj()).real.sum() + torch.polar(x.abs() + 1, x).imag.sum()
loss.backward()
out = [x.grad]
""",
    "matmul_broadcast_mean": """
a = torch.tensor([[1.0 + 1j, 2.0], [0.5j, -1.0]], dtype=torch.complex128, requires_grad=True)
b = torch.tensor([[[0.2, 1j], [1.0, -0.5]]] * 3, dtype=torch.complex128, requires_grad=True)
loss = ((a @ b).abs() ** 2).mean()
loss.backward()
out = [a.grad, b.grad]
""",
    "grad_create_graph": """
x = torch.tensor([0.7, -0.3], dtype=torch.float64, requires_grad=True)
y = (x.tanh() * x.exp()).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
h, = torch.autograd.grad((g * g).sum(), x)
out = [g, h]
""",
    "hooks_and_retain": """
x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
y = x.sigmoid()
y.retain_grad()
y.register_hook(lambda g: g * 2)
z = (y * x).sum()
z.backward()
out = [x.grad, y.grad]
""",
    "indexing_and_shapes": """
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
y = x[:, [0, 2]].T.reshape(-1) * torch.arange(4, dtype=torch.float64)
z = torch.cat([y, x.flatten().flip(0)]).roll(2)
loss = (z.unsqueeze(0).expand(3, -1) ** 2).sum()
loss.backward()
out = [x.grad]
""",
    "clamp_where_max": """
x = torch.tensor([-2.0, -0.5, 0.3, 1.7], dtype=torch.float64, requires_grad=True)
y = torch.where(x > 0, x.clamp(max=1.0), x.relu() + x.exp().log1p())
loss = torch.maximum(y, x * 0.1).sum()
loss.backward()
out = [x.grad]
""",
}


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_matches_pytorch(name):
    results = {}
    for mod in (wgrad, torch):
        ns = {"torch": mod}
        exec(SNIPPETS[name], ns)
        results[mod.__name__] = [np.asarray(t.detach().numpy()) for t in ns["out"]]
    for w, t in zip(results["wgrad"], results["torch"]):
        np.testing.assert_allclose(w, t, rtol=1e-10, atol=1e-12)


def test_promote_types_table_matches_pytorch():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            w = wgrad.promote_types(getattr(wgrad, a), getattr(wgrad, b)).name
            t = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            assert "torch." + w == t, (a, b)
