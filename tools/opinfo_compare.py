"""Compare wgrad with torch over torch's own OpInfo samples: values, dtypes, errors and
vjp gradients of every OpInfo op that wgrad has (a measuring instrument, not a test: it
reads torch's op database at run time; nothing of it is copied here).

    pip install expecttest        # torch.testing._internal needs it
    python tools/opinfo_compare.py [ops,comma,separated] [samples per dtype] [dtypes]
    python tools/opinfo_compare.py "" 3 float64,complex128      # the default

Prints one line per difference (VAL, GRAD, ERR, GRADERR, NOUT) and a total. Random ops
(randn, dropout, ...), uninitialized ones (empty) and eigenvector phases differ by
nature; ops whose OpInfo calls a wrapper are skipped, and so are samples whose inputs are
views into a larger storage (as_strided's partial views). The fixes of 2026-11-27 came
from it (tests/ops/test_opinfo_findings.py).
"""
import signal
import sys
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import wgrad

RTOL, ATOL = 1e-5, 1e-6


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout


def to_wgrad(x):
    """A sample argument as wgrad takes it."""
    if isinstance(x, torch.Tensor):
        t = wgrad.tensor(x.detach().resolve_conj().resolve_neg().numpy())
        return t.requires_grad_() if x.requires_grad else t
    if isinstance(x, torch.dtype):
        return getattr(wgrad, str(x).split(".")[1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        return type(x)(to_wgrad(v) for v in x)
    if isinstance(x, dict):
        return {k: to_wgrad(v) for k, v in x.items()}
    if isinstance(x, torch.device):
        return "cpu"
    return x


def lookup(module, name):
    for part in name.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def leaves(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in leaves(v)]
    return [r]


def as_numpy(x):
    x = x.detach()
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():
            x = torch.zeros(x.shape, dtype=x.dtype)
        return x.resolve_conj().resolve_neg().numpy()
    return x.resolve_conj().numpy()


def differs(a, b):
    """Why torch's tensor ``a`` and wgrad's ``b`` differ, or None."""
    if not isinstance(b, wgrad.Tensor):
        return f"type {type(b).__name__}"
    if str(a.dtype)[6:] != str(b.dtype).split(".")[-1]:
        return f"dtype {a.dtype} vs {b.dtype}"
    if tuple(a.shape) != tuple(b.shape):
        return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    x, y = as_numpy(a), as_numpy(b)
    if np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
        return None
    return f"maxdiff {np.nanmax(np.abs(x.astype(complex) - y.astype(complex)))}"


def call(fn, *args, **kwargs):
    """``(result, None)`` or ``(None, "Type: message")``."""
    try:
        return fn(*args, **kwargs), None
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return None, f"{type(e).__name__}: {str(e)[:100]}"


def weighted_loss(module, outs, weights):
    """sum(Re(out * conj(w))) over the differentiable outputs."""
    loss = 0
    for o, w in zip(outs, weights):
        if w is not None:
            loss = loss + (o * module.tensor(w).conj()).real.sum()
    return loss


def compare_grads(key, sample, wargs, touts, wouts, report):
    tin = [t for t in leaves([sample.input, list(sample.args), list(sample.kwargs.values())])
           if isinstance(t, torch.Tensor) and t.requires_grad]
    win = [t for t in leaves(list(wargs)) if isinstance(t, wgrad.Tensor) and t.requires_grad]
    if not tin or len(tin) != len(win):
        return False
    rng = np.random.default_rng(0)
    weights = []
    for a in touts:
        if isinstance(a, torch.Tensor) and a.requires_grad and (a.is_floating_point()
                                                                or a.is_complex()):
            w = rng.standard_normal(tuple(a.shape))
            if a.is_complex():
                w = w + 1j * rng.standard_normal(tuple(a.shape))
            weights.append(np.asarray(w).astype(as_numpy(a).dtype))
        else:
            weights.append(None)
    if all(w is None for w in weights):
        return False
    tg, terr = call(torch.autograd.grad, weighted_loss(torch, touts, weights), tin,
                    allow_unused=True)
    wg, werr = call(wgrad.autograd.grad, weighted_loss(wgrad, wouts, weights), win,
                    allow_unused=True)
    if terr or werr:
        if (terr is None) != (werr is None):
            report.append((key, "GRADERR", terr, werr))
        return True
    for i, (a, b) in enumerate(zip(tg, wg)):
        if a is None or b is None:  # unused on one side: fine if the other is zero
            other = a if b is None else b
            if other is not None and not bool((other == 0).all()):
                report.append((key, "GRADNONE", i))
                break
            continue
        why = differs(a, b)
        if why:
            report.append((key, "GRAD", i, why))
            break
    return True


def compare(op, name, dtype, samples, report):
    tf, wf = lookup(torch, op.name), lookup(wgrad, op.name)
    counts = [0, 0]
    for si, s in enumerate(samples):
        key = f"{name}[{str(dtype)[6:]}#{si}]"
        if isinstance(s.input, torch.Tensor) and s.input._base is not None:
            continue  # a view into a larger storage: not what wgrad.tensor() gives
        signal.alarm(20)
        try:
            tr, terr = call(tf, s.input, *s.args, **s.kwargs)
            wargs = (to_wgrad(s.input), to_wgrad(s.args), to_wgrad(s.kwargs))
            wr, werr = call(wf, wargs[0], *wargs[1], **wargs[2])
            if terr or werr:
                if (terr is None) != (werr is None) or \
                        werr.split(":")[0] != terr.split(":")[0]:
                    report.append((key, "ERR", terr, werr))
                continue
            touts, wouts = leaves(tr), leaves(wr)
            if len(touts) != len(wouts):
                report.append((key, "NOUT", len(touts), len(wouts)))
                continue
            why = next((w for w in (differs(a, b) for a, b in zip(touts, wouts)
                                    if isinstance(a, torch.Tensor)) if w), None)
            if why:
                report.append((key, "VAL", why))
                continue
            counts[0] += 1
            if op.supports_autograd:
                counts[1] += compare_grads(key, s, (wargs[0], *wargs[1], *wargs[2].values()),
                                           touts, wouts, report)
        except _Timeout:
            report.append((key, "TIMEOUT"))
        finally:
            signal.alarm(0)
    return counts


def main():
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    only = set(sys.argv[1].split(",")) if len(sys.argv) > 1 and sys.argv[1] else None
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    names = sys.argv[3] if len(sys.argv) > 3 else "float64,complex128"
    dtypes = [getattr(torch, d) for d in names.split(",")]
    report, values, grads = [], 0, 0
    for op in op_db:
        if only and op.name not in only:
            continue
        tf, wf = lookup(torch, op.name), lookup(wgrad, op.name)
        if tf is None or wf is None or (op.op is not tf and getattr(op.op, "__name__", "")
                                        != getattr(tf, "__name__", "?")):
            continue  # not in wgrad, or torch's test calls a wrapper
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        for dt in dtypes:
            if dt not in op.supported_dtypes("cpu"):
                continue
            try:
                samples = list(op.sample_inputs("cpu", dt,
                                                requires_grad=op.supports_autograd))[:per]
            except Exception:  # noqa: BLE001  (a sample generator torch cannot run here)
                continue
            v, g = compare(op, name, dt, samples, report)
            values, grads = values + v, grads + g
    for r in report:
        print(*r)
    print("TOTAL", len(report), "values compared", values, "grads compared", grads)


if __name__ == "__main__":
    main()
