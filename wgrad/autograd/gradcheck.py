"""gradcheck / gradgradcheck: analytical gradients against finite differences.

Complex numbers are checked as torch does: a complex input is perturbed along its real
and its imaginary direction; a complex output is checked through its real and its
imaginary part. Both come from one identity. For a direction ``u`` in input space and a
weight ``v`` in output space, ``L_v(x) = Re(sum(conj(v) * f(x)))`` is real, and

    d/dt L_v(x + t u) = Re(sum(conj(vjp(v)) * u))

where ``vjp(v)`` is what wgrad's backward returns for grad_output ``v``
(NOTE [Conjugate Wirtinger convention]). Slow mode checks this for every unit ``u``
(real and imaginary) and every unit ``v`` (real, and imaginary for complex outputs),
i.e. the whole real Jacobian; fast mode checks it for one random ``u`` and ``v`` per input.
"""
import warnings

import jax.numpy as jnp
import numpy as np

from .._creation import tensor, zeros_like
from ..ops import _lazy, stack
from .._tensor import Tensor
from . import forward_ad as _fwad
from . import _input_edges, _root_edges, grad
from .._autograd.engine import get_default_engine
from ..ops._views import _write


__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails."""


_ERR_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output "
    "multiple times gives different values, although analytical gradient matches numerical "
    "gradient.The tolerance for nondeterminism was {}.\n\nNOTE: If your op relies on "
    "non-deterministic operations, this failure might be expected: call "
    "gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.\n")


def _as_tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _random_like(rng, shape, dtype):
    """Standard normal draws of ``shape`` (float64, or complex128 with the imaginary
    parts drawn after the real ones when ``dtype`` is complex)."""
    g = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        g = g + 1j * rng.standard_normal(shape)
    return g


def _is_tensor(x):
    return isinstance(x, Tensor)


def _to_np(t):
    return np.asarray(t._data).astype(np.complex128 if t.is_complex() else np.float64)


def _eval(func, inputs, i, new_data):
    args = list(inputs)
    x = Tensor._make(jnp.asarray(new_data, inputs[i]._data.dtype))
    args[i] = x.requires_grad_(inputs[i].requires_grad)
    outs = _as_tuple(func(*args))  # grad mode stays on: gradgradcheck's func needs it
    return [o.detach() for o in outs if _is_tensor(o)]


def _directional(func, inputs, i, u, eps, where=""):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for every tensor output; both sides must
    have the same shapes and dtypes (``where`` names the perturbed index)."""
    x = np.asarray(inputs[i]._data)
    plus = _eval(func, inputs, i, x + eps * u)
    minus = _eval(func, inputs, i, x - eps * u)
    for p, m in zip(plus, minus):
        for attr, name in (("shape", "shapes"), ("dtype", "dtypes")):
            if getattr(p, attr) != getattr(m, attr):
                raise AssertionError(
                    f"Expected `func` to return outputs with the same {attr} when inputs are "
                    f"perturbed{where} by {eps}, but got: {name} {getattr(m, attr)!r} and "
                    f"{getattr(p, attr)!r}.")
    return [(_to_np(p) - _to_np(m)) / (2 * eps) for p, m in zip(plus, minus)]


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _diff_outputs(outputs):
    return [k for k, o in enumerate(outputs) if _is_tensor(o) and o.requires_grad]


def _vjp(outputs, inputs, diff_in, vs):
    # Each backward starts from concrete values: under lazy mode a segment cut at a
    # different op fuses differently (XLA contracts a*b+c into one rounding), and the
    # reentrancy check compares two backward passes bit for bit (NOTE [Lazy segments]).
    _lazy.flush()
    outs = [outputs[k] for k in vs]
    gouts = [vs[k] for k in vs]
    gs = grad(outs, [inputs[i] for i in diff_in], gouts, retain_graph=True, allow_unused=True)
    return [zeros_like(inputs[i]) if g is None else g for i, g in zip(diff_in, gs)]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Returns True, or raises GradcheckError (returns False with
    ``raise_exception=False``). Use float64/complex128 inputs.

    Example
    -------
    >>> import wgrad
    >>> z = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    >>> wgrad.autograd.gradcheck(lambda z: (z * z.conj()).real.sum(), (z,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    inputs = _as_tuple(inputs)
    diff_in = _differentiable_inputs(inputs)
    outputs = _as_tuple(func(*inputs))
    diff_out = _diff_outputs(outputs)
    if not diff_out:  # torch: then every numerical derivative must be zero
        return _check_no_differentiable_outputs(func, inputs, diff_in, eps, atol, rtol,
                                                raise_exception)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    try:
        if check_backward_ad:
            check(func, inputs, outputs, diff_in, diff_out, eps=eps, atol=atol, rtol=rtol,
                  nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes)
        if check_backward_ad and check_batched_grad:
            _batched_gradcheck(inputs, outputs, diff_in, diff_out, atol=atol, rtol=rtol)
        if check_forward_ad:
            _forward_gradcheck(func, inputs, diff_in, eps=eps, atol=atol, rtol=rtol,
                               fast_mode=fast_mode)
            if check_undefined_grad:
                _check_undefined_forward(func, inputs, diff_in)
        if check_backward_ad:
            _check_mul_by_grad_output(outputs, inputs, diff_in)
        if check_backward_ad and check_undefined_grad:
            _check_undefined_grad(outputs, inputs, diff_in)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _differentiable_inputs(inputs):
    """Indices of the inputs that require grad; warns for single precision ones."""
    diff_in = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if not diff_in:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in diff_in:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          f"floating point or complex. This check will likely fail if all "
                          f"the inputs are not of double precision floating point or complex. ")
    return diff_in


def _check_no_differentiable_outputs(func, inputs, diff_in, eps, atol, rtol, raise_exception):
    rng = np.random.default_rng(0)
    for i in diff_in:
        x = inputs[i]
        u = _random_like(rng, tuple(x.shape), x._data.dtype)
        for d in _directional(func, inputs, i, u, eps):
            if not np.allclose(d, 0, rtol=rtol, atol=atol):
                return _fail("Numerical gradient for function expected to be zero",
                             raise_exception)
    return True


_UNDEFINED_NOTE = ("Please look at \"Notes about undefined output gradients\" in "
                   "\"tools/autograd/derivatives.yaml\"")


def _zero_grad_backward(outputs, inputs, diff_in, undefined=None):
    """The input gradients for zero output gradients (None where ``undefined``), through
    the engine over the retained graph of ``outputs`` (host-made zeros: no kernel to
    compile per shape)."""
    outs = [o for o in outputs if _is_tensor(o) and o.requires_grad]
    zeros = [tensor(np.zeros(tuple(o.shape)), dtype=o.dtype) for o in outs]
    roots, grads = _root_edges(outs, zeros)
    if undefined is not None:
        grads = [None if u else g for u, g in zip(undefined, grads)]
    _lazy.flush()
    return get_default_engine().execute(roots, grads, True, False,
                                        _input_edges([inputs[i] for i in diff_in]),
                                        accumulate_grad=False)


def _check_mul_by_grad_output(outputs, inputs, diff_in):
    """torch's check that backward is multiplied by grad_output: zero output gradients
    give zero input gradients, of the input's dtype and size."""
    if not diff_in:
        return
    gs = _zero_grad_backward(outputs, inputs, diff_in)
    for g, i in zip(gs, diff_in):
        if g is None:
            continue
        if np.any(_to_np(g) != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype is not inputs[i].dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(g.shape) != tuple(inputs[i].shape):
            raise GradcheckError("grad is incorrect size")


def _check_undefined_grad(outputs, inputs, diff_in):
    """torch's check that backward handles undefined output gradients: with every
    output's gradient undefined (then, for several outputs, one at a time and zeros for
    the others), backward must run and give undefined or zero input gradients. The
    outputs gradcheck computed are reused (their graph is retained), and the undefined
    gradients enter the engine as None: what torch's UndefinedGrad node passes on."""
    def warn():
        warnings.warn("Backwards compatibility: New undefined gradient support checking "
                      "feature is enabled by default, but it may break existing callers of "
                      "this function. If this is true for you, you can call this function "
                      "with \"check_undefined_grad=False\" to disable the feature",
                      stacklevel=4)

    n = len([o for o in outputs if _is_tensor(o) and o.requires_grad])
    cases = [[True] * n]
    if n > 1:
        cases += [[j == k for j in range(n)] for k in range(n)]
    for undefined in cases:
        try:
            gs = _zero_grad_backward(outputs, inputs, diff_in, undefined)
        except RuntimeError as e:
            warn()
            raise GradcheckError("Expected backward function to handle undefined output "
                                 f"grads. {_UNDEFINED_NOTE}") from e
        for g in gs:
            if g is not None and np.any(_to_np(g) != 0):
                warn()
                raise GradcheckError("Expected all input grads to be undefined or zero when "
                                     "all output grads are undefined or zero. "
                                     + _UNDEFINED_NOTE)


def _check_grad_dtype(g, x, check_grad_dtypes):
    if check_grad_dtypes and g.dtype is not x.dtype:
        raise GradcheckError("Gradient has dtype mismatch")


# -- batched backward: grad(is_grads_batched=True) against one grad per batch element ----

def _batched_gradcheck(inputs, outputs, diff_in, diff_out, *, atol, rtol):
    rng = np.random.default_rng(1)
    ins = [inputs[i] for i in diff_in]
    for k in diff_out:
        o = outputs[k]
        vs = [tensor(_random_like(rng, tuple(o.shape), o._data.dtype), dtype=o.dtype)
              for _ in range(2)]
        batched = grad(o, ins, stack(vs), retain_graph=True, allow_unused=True,
                       is_grads_batched=True)
        for v_idx, v in enumerate(vs):
            one = grad(o, ins, v, retain_graph=True, allow_unused=True)
            for i, b, g in zip(diff_in, batched, one):
                exp = np.zeros(tuple(inputs[i].shape)) if g is None else _to_np(g)
                res = np.zeros(tuple(inputs[i].shape)) if b is None else _to_np(b[v_idx])
                if not np.allclose(res, exp, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        f"For output {k} and input {i}:\n\ngradcheck or gradgradcheck "
                        f"failed while testing batched gradient computation.\n\nGot:\n"
                        f"{res}\n\nExpected:\n{exp}")


# -- forward mode: J u from dual tensors against (f(x + eps u) - f(x - eps u)) / (2 eps) --
# Slow mode takes every real and imaginary unit direction u of every input (the whole
# Jacobian, one column per JVP); fast mode one random u per input. JVPs follow torch's
# forward-mode convention (the R-linear pushforward, NOTE [Tangents of primitives]), so
# the finite difference along u is their value, for complex inputs and outputs alike.

def _jvp_outputs(func, inputs, diff_in, i, u):
    """Every differentiable input is dual (inputs detached, as torch's check does); the
    tangent is ``u`` for input ``i``, zero for the others."""
    with _fwad.dual_level():
        args = [a.detach() if _is_tensor(a) else a for a in inputs]
        for q in diff_in:
            x = inputs[q]
            t = tensor(u, dtype=x.dtype) if q == i else zeros_like(args[q])
            args[q] = _fwad.make_dual(args[q], t)
        outs = _as_tuple(func(*args))
        res = []
        for o in outs:
            if not _is_tensor(o) or not (o.is_floating_point() or o.is_complex()):
                continue
            t = _fwad.unpack_dual(o).tangent
            res.append(np.zeros(tuple(o.shape)) if t is None else _to_np(t))
    return res


def _forward_gradcheck(func, inputs, diff_in, *, eps, atol, rtol, fast_mode):
    rng = np.random.default_rng(0)
    for i in diff_in:
        x = inputs[i]
        if fast_mode:
            dirs = [_random_like(rng, tuple(x.shape), x._data.dtype)]
        else:
            dirs = [_unit(x.numel(), j, dr, x.is_complex()).reshape(tuple(x.shape))
                    for dr in _parts(x) for j in range(x.numel())]
        for u in dirs:
            num = _directional(func, inputs, i, u, eps)
            ana = _jvp_outputs(func, inputs, diff_in, i, u)
            for oi, (n, a) in enumerate(zip(num, ana)):
                if not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)):
                    raise GradcheckError(
                        f"Jacobian computed with forward mode mismatch for output {oi} with "
                        f"respect to input {i},\nnumerical:{n!r}\nanalytical:{a!r}\n")


def _check_undefined_forward(func, inputs, diff_in):
    """torch's check of undefined tangents: with random tangents on the other inputs,
    an input whose tangent is zero and an input with no tangent at all must give the same
    output tangents."""
    rng = np.random.default_rng(1)
    with _fwad.dual_level():
        duals = [a.detach() if _is_tensor(a) else a for a in inputs]
        for q in diff_in:
            u = _random_like(rng, tuple(inputs[q].shape), inputs[q]._data.dtype)
            duals[q] = _fwad.make_dual(duals[q], tensor(u, dtype=inputs[q].dtype))
        for q in diff_in:
            keep = duals[q]
            plain = inputs[q].detach()
            tangents = []
            for arg in (_fwad.make_dual(plain, zeros_like(plain)), plain):
                duals[q] = arg
                outs = [o for o in _as_tuple(func(*duals))
                        if _is_tensor(o) and (o.is_floating_point() or o.is_complex())]
                tangents.append([_fwad.unpack_dual(o).tangent for o in outs])
            duals[q] = keep
            for oi, (t1, t2) in enumerate(zip(*tangents)):
                if t1 is not None and t2 is not None and \
                        not np.allclose(_to_np(t1), _to_np(t2)):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {oi} when input: "
                        f"{inputs[q]} has an undefined tangent value. Got: {t1} but "
                        f"expected: {t2}")


# -- fast mode: v^T J u for one random u per input and one random v per output ----------

def _fast_gradcheck(func, inputs, outputs, diff_in, diff_out, *, eps, atol, rtol,
                    nondet_tol, check_grad_dtypes):
    rng = np.random.default_rng(0)
    vs = {k: tensor(_random_like(rng, tuple(outputs[k].shape), outputs[k]._data.dtype),
                    dtype=outputs[k].dtype) for k in diff_out}
    grads = _vjp(outputs, inputs, diff_in, vs)
    again = _vjp(outputs, inputs, diff_in, vs)
    for g, g2 in zip(grads, again):
        if np.max(np.abs(_to_np(g2) - _to_np(g)), initial=0.0) > nondet_tol:
            raise GradcheckError(_ERR_REENTRANT.format(nondet_tol))
    for i, g in zip(diff_in, grads):
        x = inputs[i]
        u = _random_like(rng, tuple(x.shape), x._data.dtype)
        d = _directional(func, inputs, i, u, eps)
        num = sum(float(np.real(np.sum(np.conj(np.asarray(vs[k]._data)) * d[k])))
                  for k in diff_out)
        ana = float(np.real(np.sum(np.conj(_to_np(g)) * u)))
        _check_grad_dtype(g, x, check_grad_dtypes)
        if not abs(ana - num) <= atol + rtol * abs(num):
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{num!r}\nanalytical:{ana!r}\n\n"
                f"The above quantities relating the numerical and analytical jacobians "
                f"are computed in fast mode (v^T J u with random u, v).")


# -- slow mode: the whole real Jacobian, per (output, input) pair ---------------------
# Both Jacobians are laid out as [input direction (real, imag), input element,
# output part (real, imag), output element].

def _slow_gradcheck(func, inputs, outputs, diff_in, diff_out, *, eps, atol, rtol,
                    nondet_tol, check_grad_dtypes):
    for oi, k in enumerate(diff_out):
        for i in diff_in:
            num = _numerical_jacobian(func, inputs, i, oi, outputs[k], eps)
            ana = _analytical_jacobian(outputs, inputs, i, k, nondet_tol, check_grad_dtypes)
            bad = ~(np.abs(ana - num) <= atol + rtol * np.abs(num))
            if bad.any():
                # torch checks the imaginary part of a complex output first
                where = max(np.argwhere(bad), key=lambda r: r[2])
                raise GradcheckError(_mismatch_message(
                    num, ana, where, outputs[k], inputs[i], oi, i))


def _parts(t):
    return [1.0, 1j] if t.is_complex() else [1.0]


def _unit(n, index, value, complex_):
    e = np.zeros(n, dtype=np.complex128 if complex_ else np.float64)
    e[index] = value
    return e


def _numerical_jacobian(func, inputs, i, oi, o, eps):
    """Central differences along every real and imaginary unit direction of input ``i``,
    seen through the real and imaginary part of output ``oi``."""
    x = inputs[i]
    dirs, parts = _parts(x), _parts(o)
    n_in, n_out = x.numel(), o.numel()
    num = np.zeros((len(dirs), n_in, len(parts), n_out))
    for a, dr in enumerate(dirs):
        for j in range(n_in):
            u = _unit(n_in, j, dr, x.is_complex()).reshape(tuple(x.shape))
            where = f" on index {tuple(int(c) for c in np.unravel_index(j, x.shape))}"
            d = _directional(func, inputs, i, u, eps, where)[oi].reshape(-1)
            for b, v in enumerate(parts):
                num[a, j, b] = np.real(np.conj(v) * d)
    return num


def _analytical_jacobian(outputs, inputs, i, k, nondet_tol, check_grad_dtypes):
    """One backward per real and imaginary unit grad_output of output ``k``; the first is
    run twice to check that backward is reentrant (deterministic)."""
    o, x = outputs[k], inputs[i]
    dirs, parts = _parts(x), _parts(o)
    n_out = o.numel()
    ana = np.zeros((len(dirs), x.numel(), len(parts), n_out))
    for b, v in enumerate(parts):
        for m in range(n_out):
            vt = tensor(_unit(n_out, m, v, o.is_complex()).reshape(tuple(o.shape)),
                        dtype=o.dtype)
            g = _vjp(outputs, inputs, [i], {k: vt})[0]
            _check_grad_dtype(g, x, check_grad_dtypes)
            gn = _to_np(g).reshape(-1)
            if m == 0 and b == 0:
                g2 = _to_np(_vjp(outputs, inputs, [i], {k: vt})[0]).reshape(-1)
                if np.max(np.abs(g2 - gn), initial=0.0) > nondet_tol:
                    raise GradcheckError(_ERR_REENTRANT.format(nondet_tol))
            for a, dr in enumerate(dirs):
                ana[a, :, b, m] = np.real(np.conj(gn) * dr)
    return ana


def _mismatch_message(num, ana, where, o, x, oi, i):
    a, _, b, _ = where
    prefix = ""
    if o.is_complex():
        prefix += ("While considering the imaginary part of complex outputs only, "
                   if b == 1 else "While considering the real part of complex outputs only, ")
    return (f"{prefix}Jacobian mismatch for output {oi} with respect to input {i},\n"
            f"numerical:{num[a, :, b, :]!r}\nanalytical:{ana[a, :, b, :]!r}\n")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of ``grad(func(inputs), inputs, grad_outputs,
    create_graph=True)`` with respect to both the inputs and ``grad_outputs``."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        outs = _as_tuple(func(*inputs))
        gos = []
        for k in _diff_outputs(outs):
            o = outs[k]
            gos.append(tensor(_random_like(rng, tuple(o.shape), o._data.dtype), dtype=o.dtype,
                              requires_grad=True))
        grad_outputs = tuple(gos)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)

    def new_func(*args):
        ins, gos = args[:-n], args[-n:]
        outs = _as_tuple(func(*ins))
        outs = [outs[k] for k in _diff_outputs(outs)]
        diff = [x for x in ins if _is_tensor(x) and x.requires_grad]
        gs = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)


# -- torch's deprecated Jacobian helpers ---------------------------------------------------

_DEPRECATED = ("`{}` was part of PyTorch's private API and not meant to be exposed. We are "
               "deprecating it and it will be removed in a future version of PyTorch. If you "
               "have a specific use for this or feature request for this to be a stable API, "
               "please file us an issue at https://github.com/pytorch/pytorch/issues/new")


def _check_grad_out_and_output(name, grad_out, outputs):
    if grad_out != 1.0:
        raise ValueError(f"Expected grad_out to be 1.0. {name} no longer supports values of "
                         "grad_out != 1.0.")
    if any(_is_tensor(o) and o.is_complex() for o in outputs):
        raise ValueError(f"Expected output to be non-complex. {name} no longer supports "
                         "functions that return complex outputs.")


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated, as in torch: the central-difference Jacobian of the first output of
    ``fn(inputs)`` (``fn`` takes the tuple) with respect to each tensor of ``target``
    (default ``inputs``) that requires grad, as ``(target.numel(), output.numel())``; a
    complex target's column is ``ds/dx + 1j * ds/dy``. ``target`` is perturbed in place, so
    it need not be one of ``inputs``."""
    if grad_out != 1.0:
        _check_grad_out_and_output("get_numerical_jacobian", grad_out, ())
    warnings.warn(_DEPRECATED.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    inputs = _as_tuple(inputs)
    out = _as_tuple(fn(inputs))
    _check_grad_out_and_output("get_numerical_jacobian", grad_out, out)
    jacobians = []
    for t in (inputs if target is None else _as_tuple(target)):
        if not (_is_tensor(t) and t.requires_grad):
            continue
        x0 = t._data
        flat = np.asarray(x0).reshape(-1)
        cols = []
        for j in range(flat.size):
            col = 0
            for step in ((1.0, 1j) if t.is_complex() else (1.0,)):
                sides = []
                for s in (eps, -eps):
                    e = flat.copy()
                    e[j] += s * step
                    _write(t, jnp.asarray(e.reshape(x0.shape), x0.dtype))
                    try:
                        sides.append(_to_np(_as_tuple(fn(inputs))[0]).reshape(-1))
                    finally:
                        _write(t, x0)
                col = col + step * (sides[0] - sides[1]) / (2 * eps)
            cols.append(col)
        jac = np.stack(cols) if cols else np.zeros((0, out[0].numel()))
        jacobians.append(tensor(jac, dtype=t.dtype if t.is_complex() else out[0].dtype))
    return tuple(jacobians)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated, as in torch: ``(jacobians, reentrant, correct_grad_sizes,
    correct_grad_types)``, one ``(input.numel(), output.numel())`` Jacobian per input that
    requires grad, from one backward per output element, computed twice to check that
    backward is reentrant within ``nondet_tol``."""
    warnings.warn(_DEPRECATED.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    _check_grad_out_and_output("get_analytical_jacobian", grad_out, (output,))
    diff = [t for t in _as_tuple(inputs) if _is_tensor(t) and t.requires_grad]
    n_out = output.numel()
    sizes_ok = types_ok = True
    runs = []
    for _ in range(2):
        cols = [np.zeros((t.numel(), n_out), np.complex128 if t.is_complex() else
                         np.float64) for t in diff]
        for j in range(n_out):
            e = np.zeros(n_out)
            e[j] = 1.0
            gs = grad(output, diff, tensor(e.reshape(tuple(output.shape)), dtype=output.dtype),
                      retain_graph=True, allow_unused=True)
            for c, t, g in zip(cols, diff, gs):
                if g is None:
                    continue
                if tuple(g.shape) != tuple(t.shape):
                    sizes_ok = False
                elif g.dtype is not t.dtype:
                    types_ok = False
                if g.numel() == t.numel():
                    c[:, j] = _to_np(g).reshape(-1)
        runs.append(cols)
    reentrant = all(np.max(np.abs(a - b), initial=0.0) <= nondet_tol
                    for a, b in zip(*runs))
    jacobians = tuple(tensor(c, dtype=t.dtype) for c, t in zip(runs[0], diff))
    return jacobians, reentrant, sizes_ok, types_ok
