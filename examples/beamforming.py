"""Beamforming: complex weights of a uniform linear array steer a beam and null an interferer.

A uniform linear array of M antennas, half a wavelength apart, receives a plane wave from
angle theta with the steering vector ``a(theta)_m = exp(i pi m sin theta)``; weights ``w``
combine the antennas into ``y = w^H a(theta)``. The normalised gain

    G(theta) = |w^H a(theta)|^2 / (M ||w||^2)        (1 = 0 dB: the best any w can do)

is what the array hears from theta. The weights are fitted with Adam on a complex
``nn.Parameter`` (PyTorch's complex convention, as in torch): keep the signal from the
target (``w^H a_t = 1``), cancel the interferer (``w^H a_i = 0``), and keep ``||w||`` small
(white-noise gain). The result is compared with the closed-form optimum of the same loss.

Run:  python examples/beamforming.py [--quick]
(--quick: fewer steps, no figure; otherwise beamforming.png, the beam pattern)
"""
import argparse
import math

import numpy as np

import wgrad as torch
from wgrad import nn

try:
    from tqdm import trange
except ImportError:     # tqdm is optional
    trange = range

M = 16
TARGET_DEG, INTERFERER_DEG = 20.0, -35.0
NULL_WEIGHT, NORM_WEIGHT = 100.0, 1e-2


def steering(deg):
    """Steering vectors, shape (len(deg), M)."""
    s = torch.sin(torch.as_tensor(deg, dtype=torch.float64) * math.pi / 180)
    m = torch.arange(M, dtype=torch.float64)
    return torch.exp(1j * math.pi * s[..., None] * m)


def gain_db(w, deg):
    a = steering(deg)
    resp = a @ w.conj()                      # w^H a for each angle
    g = resp.abs() ** 2 / (M * (w.abs() ** 2).sum())
    return 10 * torch.log10(g)


class Beamformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(M, dtype=torch.complex128))

    def forward(self, a):
        return a @ self.w.conj()


def loss_fn(model, a_t, a_i):
    return ((model(a_t) - 1).abs() ** 2 + NULL_WEIGHT * model(a_i).abs() ** 2
            + NORM_WEIGHT * (model.w.abs() ** 2).sum())


def closed_form(a_t, a_i):
    """The minimiser of loss_fn: a ridge regression, solved directly."""
    A = np.stack([a_t.numpy(), math.sqrt(NULL_WEIGHT) * a_i.numpy()])     # rows: a^T
    b = np.array([1.0, 0.0])
    # loss = ||A conj(w) - b||^2 + lam ||w||^2  ->  conj(w) = (A^H A + lam)^-1 A^H b
    cw = np.linalg.solve(A.conj().T @ A + NORM_WEIGHT * np.eye(M), A.conj().T @ b)
    return np.conj(cw)


def main(quick):
    torch.manual_seed(0)
    a_t, a_i = steering(TARGET_DEG), steering(INTERFERER_DEG)
    model = Beamformer()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    steps = 400 if quick else 2000
    for step in trange(steps):
        opt.zero_grad()
        loss = loss_fn(model, a_t, a_i)
        loss.backward()
        opt.step()
    # Adam gets close; a few L-BFGS steps settle the deep null
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=200, tolerance_grad=1e-12,
                              tolerance_change=1e-16, history_size=20,
                              line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss = loss_fn(model, a_t, a_i)
        loss.backward()
        return loss

    lbfgs.step(closure)
    w = model.w.detach()
    best = torch.tensor(closed_form(a_t, a_i))
    print(f"loss {loss_fn(model, a_t, a_i).item():.6e} "
          f"(closed-form optimum {loss_fn_at(best, a_t, a_i):.6e})")
    print(f"gain toward target     ({TARGET_DEG:+.0f} deg): "
          f"{gain_db(w, [TARGET_DEG]).item():.2f} dB")
    print(f"gain toward interferer ({INTERFERER_DEG:+.0f} deg): "
          f"{gain_db(w, [INTERFERER_DEG]).item():.1f} dB")
    print(f"max |w - w_closed_form| = {(w - best).abs().max().item():.2e}")

    if not quick:
        import matplotlib.pyplot as plt      # pip install wgrad[viz]
        deg = np.linspace(-90, 90, 721)
        fig, ax = plt.subplots(figsize=(7, 3.6))
        ax.plot(deg, gain_db(w, deg).numpy(), label="fitted weights")
        ax.plot(deg, gain_db(a_t / M, deg).numpy(), "--", alpha=0.6,
                label="conventional (steered) beam")
        for d, name in ((TARGET_DEG, "target"), (INTERFERER_DEG, "interferer")):
            ax.axvline(d, color="k", lw=0.8, ls=":")
            ax.text(d + 1, 2, name)
        ax.set_ylim(-80, 5)
        ax.set_xlabel("angle (degrees)")
        ax.set_ylabel("gain (dB)")
        ax.legend(loc="lower left")
        fig.tight_layout()
        fig.savefig("beamforming.png", dpi=100)
        print("saved beamforming.png")


def loss_fn_at(w, a_t, a_i):
    resp_t, resp_i = (a_t * w.conj()).sum(), (a_i * w.conj()).sum()
    return ((resp_t - 1).abs() ** 2 + NULL_WEIGHT * resp_i.abs() ** 2
            + NORM_WEIGHT * (w.abs() ** 2).sum()).item()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps, no figure")
    main(p.parse_args().quick)
