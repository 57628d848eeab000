"""Higher-order autograd API (torch.autograd.functional): jacobian, hessian, vjp, jvp,
hvp, vhp, and the batched vector-Jacobian products of ``grad(..., is_grads_batched=True)``.

Results follow torch on complex numbers (NOTE [Conjugate Wirtinger convention]): row ``i``
of a reverse-mode ``jacobian`` is what backward returns for the unit grad_output ``e_i``,
i.e. the conjugate-Wirtinger gradient of ``Re(f_i)``; ``jvp`` uses the double-backward trick and the forward-mode
jacobian dual tensors (NOTE [Forward-mode jacobian]), giving the ordinary (holomorphic) derivative
applied to ``v``; ``hessian`` is the reverse-mode jacobian of the gradient.

# NOTE [Batched gradients]
# ``grad(..., is_grads_batched=True)`` runs the engine once under ``jax.vmap`` over the
# leading dimension of the grad_outputs: every node's jitted backward kernel is traced
# with batched gradients (its saved values stay unbatched), so a batch of B
# vector-Jacobian products costs one pass. With create_graph the results must be
# recorded wgrad tensors, which vmap cannot produce, so that case loops over the batch
# and stacks (recorded, hence differentiable).
"""
import jax
import numpy as np

from .._autograd.grad_mode import _state as _grad_state
from .._autograd.grad_mode import enable_grad, set_grad_enabled
from .._creation import tensor, zeros_like
from .._tensor import Tensor
from ..ops import reshape, stack
from . import _make_grads, grad
from . import forward_ad as _fwad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# -- helpers (torch's semantics and messages) -------------------------------------------

def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}" if is_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # always new tensor objects, so inputs captured by func are told apart from arguments
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                f"independent of the input. This is not allowed in strict mode. You should "
                f"ensure that your function is thrice differentiable and that the hessian "
                f"depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                f"While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                f"allowed in strict mode. You should ensure that your function is twice "
                f"differentiable and that the jacobian depends on the inputs (this would be "
                f"violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                f"user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            f"outputs must be computed in a differentiable manner from the input when running "
            f"in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False,
                   retain_graph=None, is_grads_batched=False):
    """``grad`` that skips outputs not requiring grad and allows unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_out, new_go = [], []
    for out, go in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_out.append(out)
            new_go.append(go)
    if not new_out:
        return (None,) * len(inputs)
    return grad(new_out, inputs, new_go, allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_FILL_MSGS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MSGS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _basis(refs, numels):
    """Per ref, a (sum(numels), numel) block of the identity (torch's standard basis)."""
    total = sum(numels)
    out, start = [], 0
    for r, n in zip(refs, numels):
        e = np.zeros((total, n), dtype=np.asarray(r._data).dtype if r._data.size
                     else np.dtype(r._data.dtype))
        e[start + np.arange(n), np.arange(n)] = 1
        out.append(tensor(e, dtype=r.dtype))
        start += n
    return tuple(out)


# -- public API --------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``.

    For complex numbers this is what backward returns for grad_output ``v``: the
    conjugate-Wirtinger gradient of ``Re(sum(conj(v) * func(inputs)))``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import vjp
    >>> vjp(lambda x: x ** 2, wgrad.tensor([1.0, 2.0]), wgrad.ones(2))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else _grad_state.grad):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    For a holomorphic ``func`` this is ``f'(z) * v``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import jvp
    >>> jvp(lambda z: z * z, wgrad.tensor([1 + 1j]), wgrad.tensor([1 + 0j]))[1]
    tensor([2.+2.j])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # backward is linear in grad_outputs: their value never enters the result
        grad_outputs = tuple(zeros_like(out).requires_grad_(True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else _grad_state.grad):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple))


def _jacfwd(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). '
                           'Please either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(x.detach() for x in inputs)
    numels = tuple(x.numel() for x in inputs)
    cols = None  # per output, per input: the columns J e_j (NOTE [Forward-mode jacobian])
    for p, (x, k) in enumerate(zip(inputs, numels)):
        for j in range(k):
            e = np.zeros(k, dtype=np.dtype(x._data.dtype))
            e[j] = 1
            with _fwad.dual_level():
                duals = tuple(_fwad.make_dual(y, tensor(e.reshape(tuple(y.shape)),
                                                        dtype=y.dtype)) if q == p else y
                              for q, y in enumerate(inputs))
                outputs = func(*duals)
                is_outputs_tuple, outputs = _as_tuple(
                    outputs, "outputs of the user-provided function", "jacobian")
                tans = []
                for o in outputs:
                    t = _fwad.unpack_dual(o).tangent
                    tans.append(zeros_like(o) if t is None else t.to(o.dtype))
                primals = tuple(_fwad.unpack_dual(o).primal for o in outputs)
            if cols is None:
                cols = [[[] for _ in inputs] for _ in outputs]
            for oi, t in enumerate(tans):
                cols[oi][p].append(t.detach())
    if cols is None:  # no input elements: one call gives the output shapes
        is_outputs_tuple, primals = _as_tuple(func(*inputs),
                                              "outputs of the user-provided function",
                                              "jacobian")
        cols = [[[] for _ in inputs] for _ in primals]
    jac = []
    for oi, o in enumerate(primals):
        row = []
        for p, x in enumerate(inputs):
            c = cols[oi][p]
            if c:
                blk = stack(c, -1)
            else:
                blk = zeros_like(o).reshape(tuple(o.shape) + (0,))
            row.append(reshape(blk, tuple(o.shape) + tuple(x.shape)))
        jac.append(tuple(row))
    res = _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))
    if is_inputs_tuple:  # torch's forward mode returns lists here
        res = [list(r) for r in res] if is_outputs_tuple else list(res)
    return res


# NOTE [Forward-mode jacobian]
# ``strategy="forward-mode"`` pushes each standard basis vector e_j of the inputs through
# ``func`` as the tangent of a dual input (wgrad.autograd.forward_ad), so column j is
# J e_j in forward-mode's convention (the R-linear pushforward; the ordinary derivative
# for a holomorphic ``func``). torch demands ``vectorize=True`` here; wgrad loops over
# the columns. In ``hessian``'s forward-over-reverse use, the tangents flow through the
# recorded backward pass of the inner (reverse-mode) gradient.


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: one tensor of shape
    ``output.shape + input.shape`` per (output, input) pair, nested like torch's.

    Reverse mode builds row ``i`` from backward with grad_output ``e_i`` (for complex
    inputs the conjugate-Wirtinger gradient of ``Re(f_i)``; a complex output needs
    ``vectorize=True``, as in torch); ``vectorize=True`` computes all rows in one batched
    pass. ``strategy="forward-mode"`` (needs ``vectorize=True``) gives ``J e_j`` columns.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, wgrad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, "forward-mode" '
                         'tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please "
                                   "either set `strict=False` or `vectorize=False`.")
            jac = _jacrev_batched(outputs, inputs, create_graph)
        else:
            jac = _jacrev_by_rows(outputs, inputs, create_graph, strict)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacrev_batched(outputs, inputs, create_graph):
    """Reverse mode, vectorized: one batched backward over the basis of all outputs."""
    numels = tuple(o.numel() for o in outputs)
    n = sum(numels)
    basis = _basis(outputs, numels)
    flat = tuple(o.reshape(-1) for o in outputs)
    vj = list(_autograd_grad(flat, inputs, basis, create_graph=create_graph,
                             is_grads_batched=True))
    for k, g in enumerate(vj):
        if g is None:
            vj[k] = zeros_like(inputs[k]).expand(n, *inputs[k].shape)
    per_input = []
    for g, x in zip(vj, inputs):
        row, start = [], 0
        for o, k in zip(outputs, numels):
            row.append(g[start:start + k].reshape(tuple(o.shape) + tuple(x.shape)))
            start += k
        per_input.append(row)
    return tuple(zip(*per_input))


def _jacrev_by_rows(outputs, inputs, create_graph, strict):
    """Reverse mode, one backward per output element (a row of the Jacobian)."""
    jac = []
    for i, out in enumerate(outputs):
        rows = tuple([] for _ in inputs)
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                create_graph=create_graph)
            for k, (r, g, x) in enumerate(zip(rows, vj, inputs)):
                if g is not None:
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            f"The jacobian of the user-provided function is independent "
                            f"of input {i}. This is not allowed in strict mode when "
                            f"create_graph=True.")
                    r.append(g)
                else:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {k}. This is not allowed in strict mode.")
                    r.append(zeros_like(x))
        jac.append(tuple(
            (stack(r, 0) if r else zeros_like(x).expand(0, *x.shape)).reshape(
                tuple(out.shape) + tuple(x.shape))
            for r, x in zip(rows, inputs)))
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the jacobian of its gradient.

    For a real objective of complex inputs, row ``i`` is the conjugate-Wirtinger gradient
    of ``Re(g_i)`` where ``g`` is the gradient; torch computes it only with
    ``vectorize=True`` (the gradient is a complex output).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), wgrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_scalar_output(func, inputs, v, create_graph, strict, name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           f"contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: backward of the gradient with grad_output ``v``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), wgrad.tensor([1.0, 2.0]), wgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        is_in_t, inputs, v, is_out_t, outputs, jac = _single_scalar_output(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else _grad_state.grad):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_out_t),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_in_t))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` by the double-backward trick (equal to ``vhp`` for a real
    symmetric Hessian).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), wgrad.tensor([1.0, 2.0]), wgrad.ones(2))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        is_in_t, inputs, v, is_out_t, outputs, jac = _single_scalar_output(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(x).requires_grad_(True) for x in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else _grad_state.grad):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_out_t),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_in_t))


# -- grad(..., is_grads_batched=True) ----------------------------------------------------

def _batched_grad(outputs, inputs, gouts, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """NOTE [Batched gradients]."""
    gouts = _make_grads(outputs, gouts, is_grads_batched=True)
    batched = [g for g in gouts if g is not None]
    if not batched:
        raise RuntimeError("grad_outputs must be provided with is_grads_batched=True")
    bsize = batched[0].shape[0]
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        per = []
        for b in range(bsize):
            per.append(grad(outputs, inputs, [None if g is None else g[b] for g in gouts],
                            retain_graph=True if b < bsize - 1 else retain_graph,
                            create_graph=True, allow_unused=True))
        res = [None if per[0][k] is None else stack([p[k] for p in per], 0)
               for k in range(len(inputs))]
    else:
        def one(gs):
            ts = [None if g is None else Tensor._make(g) for g in gs]
            r = grad(outputs, inputs, ts, retain_graph=retain_graph, allow_unused=True)
            return [None if t is None else t._data for t in r]
        raw = jax.vmap(one)([None if g is None else g._data for g in gouts])
        res = [None if r is None else Tensor._make(r) for r in raw]
    out = []
    for x, r in zip(inputs, res):
        if r is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                r = zeros_like(x)
        out.append(r)
    return tuple(out)
