"""Fit a quantum gate: a unitary U = exp(H), H skew-Hermitian, trained to match a target gate.

The model is an ``nn.Module`` whose one complex parameter A gives H = A - A^H, so U =
matrix_exp(H) is unitary for every A. The loss is the gate infidelity
1 - |tr(V^H U)|^2 / d^2 against the target V (a Toffoli gate, d = 8), minimised with
Adam. The gradient through matrix_exp of a complex matrix is PyTorch's
conjugate-Wirtinger gradient, so the same script runs under real PyTorch by changing
the import.

Run:  python examples/unitary_fit.py [--quick] [--compile] [--steps N]
"""
import argparse

import wgrad as torch
from wgrad import nn

try:
    from tqdm import trange
except ImportError:  # tqdm is optional
    trange = None


def toffoli():
    v = torch.eye(8, dtype=torch.complex128)
    return v[[0, 1, 2, 3, 4, 5, 7, 6]]


class Gate(nn.Module):
    """U = exp(A - A^H): unitary by construction."""

    def __init__(self, d):
        super().__init__()
        self.a = nn.Parameter(0.1 * torch.randn(d, d, dtype=torch.complex128))

    def forward(self):
        return torch.linalg.matrix_exp(self.a - self.a.mH)


def infidelity(u, v):
    d = u.shape[0]
    return 1 - (torch.trace(v.mH @ u).abs() / d) ** 2


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a short run (CI)")
    p.add_argument("--compile", action="store_true", help="the step under wgrad.compile")
    p.add_argument("--steps", type=int, default=None)
    args = p.parse_args(argv)
    steps = args.steps or (60 if args.quick else 400)

    torch.manual_seed(0)
    target = toffoli()
    model = Gate(8)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    def step():
        opt.zero_grad()
        loss = infidelity(model(), target)
        loss.backward()
        opt.step()
        return loss

    if args.compile:
        step = torch.compile(step)
    first = None
    bar = trange is not None and not args.quick
    for i in (trange(steps, desc="fit") if bar else range(steps)):
        loss = step()
        if first is None:
            first = loss.item()
        if not bar and i % max(1, steps // 6) == 0:
            print(f"step {i:4d}  infidelity {loss.item():.3e}")
    with torch.no_grad():
        u = model()
        fid = 1 - infidelity(u, target).item()
        unitarity = (u.mH @ u - torch.eye(8, dtype=u.dtype)).abs().max().item()
    print(f"infidelity {first:.3e} -> {1 - fid:.3e}")
    print(f"gate fidelity {fid:.6f}; max |U^H U - I| = {unitarity:.1e}")
    return fid, unitarity, first


if __name__ == "__main__":
    main()
