"""MRI reconstruction: undersampled k-space, an FFT forward model, total variation, L-BFGS.

An MR scanner measures the Fourier transform (k-space) of a complex image; to scan faster
it skips most phase-encoding lines. Inverting the FFT of the zero-filled data gives an
image full of aliasing. Compressed sensing instead solves

    min_x  1/2 ||M F x - y||^2 + lam * TV(x),    TV(x) = sum sqrt(|Dh x|^2 + |Dv x|^2 + eps^2)

for the complex image ``x`` (``F``: orthonormal 2-D FFT, ``M``: the sampling mask, ``y``: the
measured lines), here with ``torch.optim.LBFGS`` on a complex tensor, as one would in
PyTorch. The relative error to the ground truth is printed as it falls.

Run:  python examples/mri_reconstruction.py [--quick]
(--quick: fewer iterations, no figure; otherwise mri_reconstruction.png)
"""
import argparse

import numpy as np

import wgrad as torch

try:
    from tqdm import tqdm
except ImportError:     # tqdm is optional
    def tqdm(it, **kw):
        return it

N = 48
KEEP_CENTRE, KEEP_FRACTION = 6, 0.35
LAM, EPS, NOISE = 1e-2, 1e-2, 5e-3


def phantom(n):
    """A Shepp-Logan-like magnitude with a smooth phase (MR images are complex)."""
    y, x = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    img = np.zeros((n, n))
    for cx, cy, ax, ay, val in ((0, 0, 0.72, 0.92, 1.0), (0, -0.02, 0.62, 0.84, -0.6),
                                (0.22, 0, 0.11, 0.3, -0.25), (-0.22, 0, 0.16, 0.4, -0.25),
                                (0, 0.35, 0.21, 0.25, 0.3), (0, -0.5, 0.05, 0.05, 0.4)):
        img[((x - cx) / ax) ** 2 + ((y - cy) / ay) ** 2 <= 1] += val
    phase = np.exp(1j * np.pi / 3 * (x + 0.5 * y))
    return img * phase


def sampling_mask(n, rng):
    """Whole phase-encoding lines (rows of k-space): the centre and a random quarter."""
    keep = rng.random(n) < KEEP_FRACTION
    freqs = np.fft.fftfreq(n) * n
    keep |= np.abs(freqs) < KEEP_CENTRE / 2
    return np.repeat(keep[:, None], n, axis=1)


def total_variation(x):
    dh = x[:, 1:] - x[:, :-1]
    dv = x[1:, :] - x[:-1, :]
    mag2 = dh[:-1, :].abs() ** 2 + dv[:, :-1].abs() ** 2
    return torch.sqrt(mag2 + EPS ** 2).sum()


def main(quick):
    rng = np.random.default_rng(0)
    truth = torch.tensor(phantom(N), dtype=torch.complex128)
    mask = torch.tensor(sampling_mask(N, rng))
    noise = NOISE * (rng.standard_normal((N, N)) + 1j * rng.standard_normal((N, N)))
    y = torch.where(mask, torch.fft.fft2(truth, norm="ortho") + torch.tensor(noise), 0)

    def rel_error(x):
        return ((x - truth).abs().norm() / truth.abs().norm()).item()

    zero_filled = torch.fft.ifft2(y, norm="ortho")
    print(f"sampled {mask.double().mean().item():.0%} of k-space; zero-filled inverse FFT: "
          f"relative error {rel_error(zero_filled):.4f}")

    x = zero_filled.clone().requires_grad_()
    opt = torch.optim.LBFGS([x], lr=1, max_iter=10, history_size=10,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        resid = torch.where(mask, torch.fft.fft2(x, norm="ortho") - y, 0)
        loss = 0.5 * (resid.abs() ** 2).sum() + LAM * total_variation(x)
        loss.backward()
        return loss

    rounds = 4 if quick else 10
    for r in tqdm(range(rounds), desc="L-BFGS"):
        loss = opt.step(closure)
        print(f"round {r + 1:2d} ({(r + 1) * 10} L-BFGS iterations): loss {loss.item():.5f}, "
              f"relative error {rel_error(x.detach()):.4f}")

    if not quick:
        import matplotlib.pyplot as plt      # pip install wgrad[viz]
        from wgrad.viz import complex_image
        fig, axes = plt.subplots(1, 4, figsize=(12, 3.3))
        panels = ((np.fft.fftshift(mask.numpy()), "sampled k-space lines", "gray"),
                  (zero_filled.abs().numpy(), "zero-filled |x|", "gray"),
                  (x.detach().abs().numpy(), "TV + L-BFGS |x|", "gray"))
        for ax, (img, title, cmap) in zip(axes, panels):
            ax.imshow(img, cmap=cmap)
            ax.set_title(title)
        complex_image(x.detach(), ax=axes[3], scale="linear", title="TV + L-BFGS x (phase)")
        for ax in axes:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig("mri_reconstruction.png", dpi=80)
        print("saved mri_reconstruction.png")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer iterations, no figure")
    main(p.parse_args().quick)
