"""wgrad quickstart: fit complex weights by gradient descent on a |.|^2 loss.

A complex linear model y = X @ w is fitted to noisy measurements. The loss is real,
the weights complex; ``w.grad`` is PyTorch's conjugate-Wirtinger gradient, so plain
gradient descent ``w -= lr * w.grad`` works exactly as it would in PyTorch.
Run:  python examples/quickstart.py
"""
import wgrad as torch

torch.manual_seed(0)
n, d = 64, 4
X = torch.randn(n, d, dtype=torch.complex128)
w_true = torch.randn(d, dtype=torch.complex128)
y = X @ w_true + 0.01 * torch.randn(n, dtype=torch.complex128)

w = torch.zeros(d, dtype=torch.complex128, requires_grad=True)
lr = 0.05
for step in range(61):
    loss = ((X @ w - y).abs() ** 2).mean()
    w.grad = None
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    if step % 10 == 0:
        print(f"step {step:3d}  loss {loss.item():.6f}")

err = (w - w_true).abs().max().item()
print(f"max |w - w_true| = {err:.4f}")

# The gradient wgrad computed is checked against finite differences (Wirtinger calculus).
w0 = w.detach().requires_grad_()
ok = torch.autograd.gradcheck(lambda w: ((X @ w - y).abs() ** 2).mean(), (w0,))
print("gradcheck of the loss gradient:", ok)
