"""Data-parallel training on N devices: a complex MLP whose batch is split over a mesh.

On a CPU, ``--devices N`` makes JAX show N virtual devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=N``, set here before JAX starts); on a
machine with N GPUs the same code uses them. The parameters are replicated
(``distribute_module``), the batch is split by rows (``distribute_tensor(..., [Shard(0)])``)
and ``wgrad.compile`` turns the whole step (forward, backward, Adam) into one SPMD program:
XLA inserts the all-reduce of the gradients. The script trains the same model on one device
and prints the largest difference and both step times.

    python examples/data_parallel.py --devices 4
    python examples/data_parallel.py --devices 4 --per-device-batch 256 --width 512
"""
import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--devices", type=int, default=4)
parser.add_argument("--per-device-batch", type=int, default=64,
                    help="rows per device (weak scaling: the global batch grows with N)")
parser.add_argument("--width", type=int, default=128)
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--quick", action="store_true", help="2 devices, tiny sizes (CI)")
args = parser.parse_args()
if args.quick:
    args.devices, args.per_device_batch, args.width, args.steps = 2, 4, 8, 3
if "jax" in sys.modules:
    raise SystemExit("data_parallel.py sets XLA_FLAGS before JAX starts: run it as a script")
if args.devices > 1 and os.environ.get("JAX_PLATFORMS", "cpu") == "cpu":
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={args.devices}")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import wgrad  # noqa: E402
from wgrad import nn  # noqa: E402
from wgrad.distributed import init_device_mesh  # noqa: E402
from wgrad.distributed.tensor import Shard, distribute_module, distribute_tensor  # noqa: E402


def make_model():
    wgrad.manual_seed(0)
    w, dt = args.width, wgrad.complex128
    return nn.Sequential(nn.Linear(16, w, dtype=dt), nn.Tanh(), nn.Linear(w, w, dtype=dt),
                         nn.Tanh(), nn.Linear(w, 4, dtype=dt))


def train(model, x, y):
    """Three compiled Adam steps (the first two trace: .grad and Adam's state appear after
    the first), a copy of the parameters, then ``args.steps`` timed steps. The losses, the
    copy and the time per timed step."""
    opt = wgrad.optim.Adam(model.parameters(), lr=1e-3)

    @wgrad.compile
    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y).abs() ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    losses = [step(x, y) for _ in range(3)]
    # numpy copies of the arrays: a tensor still referencing a parameter's array (even a
    # detach()ed one) stops wgrad.compile from donating it, and the step would retrace
    early = [np.array(p.jax(), copy=True) for p in model.parameters()]
    losses[-1].jax().block_until_ready()
    t0 = time.perf_counter()
    losses += [step(x, y) for _ in range(args.steps)]
    losses[-1].jax().block_until_ready()
    return [v.item() for v in losses], early, (time.perf_counter() - t0) / args.steps


def _largest(a, b):
    return max(float(np.abs(np.asarray(p) - np.asarray(q)).max()) for p, q in zip(a, b))


def main():
    n = args.devices
    devices = jax.devices()
    if len(devices) < n:
        raise SystemExit(f"JAX sees {len(devices)} device(s), {n} asked for")
    wgrad.manual_seed(1)
    batch = args.per_device_batch * n
    x = wgrad.randn(batch, 16, dtype=wgrad.complex128)
    y = wgrad.randn(batch, 4, dtype=wgrad.complex128)

    one = make_model()
    losses1, early1, t1 = train(one, x, y)

    mesh = init_device_mesh(devices[0].platform, (n,), mesh_dim_names=("batch",))
    spread = distribute_module(make_model(), mesh)           # parameters replicated
    xs = distribute_tensor(x, mesh, [Shard(0)])              # the batch split by rows
    ys = distribute_tensor(y, mesh, [Shard(0)])
    lossesn, earlyn, tn = train(spread, xs, ys)

    loss_diff = max(abs(a - b) for a, b in zip(losses1, lossesn))
    early = max(_largest(early1, earlyn),
                max(abs(a - b) for a, b in zip(losses1[:3], lossesn[:3])))
    late = max(_largest([p.detach() for p in one.parameters()],
                        [p.detach() for p in spread.parameters()]), loss_diff)
    print(f"devices: {n} ({devices[0].platform}), global batch {batch} "
          f"({args.per_device_batch} per device), width {args.width}")
    print(f"batch sharding: {xs.jax().sharding.spec}, parameters: "
          f"{next(spread.parameters()).jax().sharding.spec}")
    print(f"loss {lossesn[0]:.6f} -> {lossesn[-1]:.6f} after {len(lossesn)} steps")
    print(f"largest difference from one device: {early:.3e} after 3 steps, {late:.3e} after "
          f"{len(lossesn)} (training amplifies the rounding differences of the reduction "
          f"order)")
    print(f"step time: one device {t1 * 1e3:.3f} ms, {n} devices {tn * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
