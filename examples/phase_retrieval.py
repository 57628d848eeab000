"""Phase retrieval: recover a complex image from the magnitudes of its Fourier transform.

The measurements are coded diffraction patterns: the magnitudes |FFT2(m_k * x)| of the
unknown complex image x seen through K known random phase masks m_k. The loss compares
the magnitudes of the current estimate with the measured ones; it is real, the unknown
complex, and ``torch.optim`` runs on it unchanged with ``import wgrad as torch``: Adam
first (each complex entry is two real ones for its second moments, as in PyTorch), then
L-BFGS with a strong-Wolfe line search to finish. A third run takes the same Adam steps
with the whole step (zero_grad, forward, backward, optimizer.step) compiled into one XLA
computation by ``wgrad.compile``.

The error is reported up to the global phase (|<x, x_true>| / (|x| |x_true|)), which no
magnitude measurement can see.

Run:  python examples/phase_retrieval.py [--quick]
"""
import argparse
import math

import wgrad as torch

try:
    from tqdm import tqdm
except ImportError:  # tqdm is optional: plain prints
    tqdm = None


def problem(n, k):
    torch.manual_seed(0)
    yy = torch.arange(n, dtype=torch.float32).reshape(n, 1).expand(n, n)
    xx = torch.arange(n, dtype=torch.float32).reshape(1, n).expand(n, n)
    r2 = ((yy - n / 2) ** 2 + (xx - n / 2) ** 2) / (n / 3) ** 2
    amplitude = torch.exp(-r2) * (1 + 0.5 * torch.cos(2 * math.pi * xx / n * 3))
    phase = 2 * math.pi * torch.sin(2 * math.pi * yy / n) * torch.exp(-r2)
    x_true = torch.polar(amplitude, phase).to(torch.complex64)
    masks = torch.polar(torch.ones(k, n, n), 2 * math.pi * torch.rand(k, n, n)).to(
        torch.complex64)
    b = torch.fft.fft2(masks * x_true).abs()
    return x_true, masks, b


def loss_fn(x, masks, b):
    return ((torch.fft.fft2(masks * x).abs() - b) ** 2).mean()


def fidelity(x, x_true):
    """|<x, x_true>| / (|x| |x_true|): 1 when x equals x_true up to a global phase."""
    inner = (x.conj() * x_true).sum().abs()
    return (inner / (x.abs().pow(2).sum().sqrt() * x_true.abs().pow(2).sum().sqrt())).item()


def progress(n, desc):
    if tqdm is not None:
        return tqdm(range(n), desc=desc)
    return range(n)


def report(bar, i, n, loss, every):
    if tqdm is not None:
        bar.set_postfix(loss=f"{loss:.3e}")
    elif i % every == 0 or i == n - 1:
        print(f"  step {i:4d}  loss {loss:.4e}")


def run_adam(x_true, masks, b, steps, compiled):
    n = x_true.shape[-1]
    torch.manual_seed(1)
    x = torch.randn(n, n, dtype=torch.complex64).mul(0.1).requires_grad_()
    # lr as a tensor: the scheduler fills it in place, and a compiled step reads it as
    # an input instead of baking a number into the computation
    opt = torch.optim.Adam([x], lr=torch.tensor(0.05))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=0.005)

    def step():
        opt.zero_grad()
        loss = loss_fn(x, masks, b)
        loss.backward()
        opt.step()
        return loss
    if compiled:
        step = torch.compile(step)
    bar = progress(steps, "Adam" + (" (compiled)" if compiled else ""))
    for i in bar:
        loss = step()
        sched.step()
        report(bar, i, steps, loss.item(), max(1, steps // 5))
    return x


def run_lbfgs(x, masks, b, iters):
    x = x.detach().requires_grad_()
    opt = torch.optim.LBFGS([x], lr=1, max_iter=20, history_size=20,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = loss_fn(x, masks, b)
        loss.backward()
        return loss
    bar = progress(iters, "L-BFGS")
    for i in bar:
        opt.step(closure)
        report(bar, i, iters, loss_fn(x, masks, b).item(), 1)
    return x


def main():
    ap = argparse.ArgumentParser(description="phase retrieval with Adam then L-BFGS")
    ap.add_argument("--quick", action="store_true", help="a small image and few steps")
    args = ap.parse_args()
    n, k, steps, iters = (16, 3, 60, 3) if args.quick else (64, 4, 400, 10)
    x_true, masks, b = problem(n, k)
    print(f"image {n}x{n}, {k} coded diffraction patterns")
    print(f"initial loss {loss_fn(torch.zeros_like(x_true), masks, b).item():.4e}")
    x = run_adam(x_true, masks, b, steps, compiled=False)
    print(f"Adam: loss {loss_fn(x, masks, b).item():.4e}, fidelity {fidelity(x, x_true):.4f}")
    xc = run_adam(x_true, masks, b, steps, compiled=True)
    print(f"Adam, wgrad.compile: loss {loss_fn(xc, masks, b).item():.4e}, "
          f"|x - x_eager| {float((xc - x).abs().max()):.2e}")
    x = run_lbfgs(x, masks, b, iters)
    print(f"L-BFGS: loss {loss_fn(x, masks, b).item():.4e}, fidelity {fidelity(x, x_true):.4f}")


if __name__ == "__main__":
    main()
