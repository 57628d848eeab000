"""Fused recurrent kernels: RNN (tanh/relu), LSTM (with projections) and GRU layers and cells.

# NOTE [One scan per layer and direction]
# A recurrent layer's whole time loop is ONE differentiable wgrad op: a JAX function that
# projects every time step's input at once (one matmul), then runs ``jax.lax.scan`` over
# time for the recurrent part, lifted with ``wgrad.jax_function`` (NOTE [Crossing the
# convention boundary] makes its backward PyTorch's conjugate-Wirtinger gradient, also for
# complex weights). Forward is one XLA dispatch per layer and direction, backward one more:
# never one per gate per step. Variable lengths (packed sequences) ride along as a (T, B)
# mask: a finished sequence keeps its state and emits zeros, as torch's packed kernels do;
# the reverse direction reads each sequence back to front within its own length through a
# constant (T, B) time permutation. Gate order and formulas are torch's:
#   LSTM  i, f, g, o:  c' = s(f) c + s(i) tanh(g),  h' = s(o) tanh(c')  [h' = h' W_hr^T]
#   GRU   r, z, n:     n = tanh(x_n + b_in + r (W_hn h + b_hn)),  h' = (1 - z) n + z h
#   RNN:               h' = act(W_ih x + b_ih + W_hh h + b_hh)
"""
import jax
import jax.numpy as jnp
import numpy as np

from ..jax.interop import jax_function

__all__ = ["rnn_layer", "rnn_cell", "lengths_mask"]

def _sigmoid(x):
    if jnp.iscomplexobj(x):
        return 1 / (1 + jnp.exp(-x))
    return jax.nn.sigmoid(x)


def _act(mode):
    if mode == "RNN_RELU":
        return lambda x: jnp.maximum(x, 0)
    return jnp.tanh


def _mm(x, w):
    return jnp.matmul(x, jnp.swapaxes(w, -1, -2))  # NOTE [Float32 precision]


def _step(mode, xw, h, c, w_hh, b_hh, w_hr):
    """One step from the projected input ``xw`` (bias b_ih included)."""
    gh = _mm(h, w_hh)
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "LSTM":
        i, f, g, o = jnp.split(xw + gh, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * jnp.tanh(g)
        h = _sigmoid(o) * jnp.tanh(c)
        if w_hr is not None:
            h = _mm(h, w_hr)
        return h, c
    if mode == "GRU":
        xr, xz, xn = jnp.split(xw, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = _sigmoid(xr + hr)
        z = _sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    return _act(mode)(xw + gh), None


def _project(x, w_ih, b_ih):
    xw = _mm(x, w_ih)
    return xw if b_ih is None else xw + b_ih


def _layer_jax(x, h0, c0, weights, mask, perm, cfg):
    mode, reverse = cfg
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    if reverse:
        x = jnp.flip(x, 0) if perm is None else jnp.take_along_axis(x, perm[..., None], 0)
    xw = _project(x, w_ih, b_ih)

    def body(carry, inp):
        h, c = carry
        xw_t, m_t = inp
        h2, c2 = _step(mode, xw_t, h, c, w_hh, b_hh, w_hr)
        if m_t is not None:
            m = m_t[:, None]
            out = jnp.where(m, h2, jnp.zeros_like(h2))
            h2 = jnp.where(m, h2, h)
            if c2 is not None:
                c2 = jnp.where(m, c2, c)
        else:
            out = h2
        return (h2, c2), out

    (h, c), out = jax.lax.scan(body, (h0, c0), (xw, mask))
    if reverse:
        out = jnp.flip(out, 0) if perm is None else jnp.take_along_axis(out, perm[..., None], 0)
    return (out, h, c) if mode == "LSTM" else (out, h)


def _cell_jax(x, h, c, weights, cfg):
    mode, = cfg
    w_ih, w_hh, b_ih, b_hh = weights
    h2, c2 = _step(mode, _project(x, w_ih, b_ih), h, c, w_hh, b_hh, None)
    return (h2, c2) if mode == "LSTM" else h2


_layer_op = jax_function(_layer_jax, static_argnums=(6,), name="rnn_layer")
_cell_op = jax_function(_cell_jax, static_argnums=(4,), name="rnn_cell")


def lengths_mask(lengths, total):
    """``(mask, reverse_perm)`` as numpy arrays for per-sequence ``lengths`` (sorted or not)
    over ``total`` time steps: ``mask[t, b] = t < len[b]``; ``perm[t, b]`` reads sequence
    ``b`` back to front within its length (and leaves its padding in place)."""
    lengths = np.asarray(lengths, np.int64)
    t = np.arange(total)[:, None]
    mask = t < lengths[None, :]
    perm = np.where(mask, lengths[None, :] - 1 - t, t)
    return mask, perm


def rnn_layer(mode, x, h0, c0, weights, reverse=False, mask=None, perm=None):
    """One recurrent layer in one direction over time-major ``x`` ``(T, B, I)``: returns
    ``(output (T, B, H_out), h_n[, c_n])`` (NOTE [One scan per layer and direction]).
    ``weights`` is ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` with None for absent ones; ``mask``
    and ``perm`` come from :func:`lengths_mask` for variable lengths."""
    return _layer_op(x, h0, c0, tuple(weights), mask, perm, (mode, bool(reverse)))


def rnn_cell(mode, x, h, c, weights):
    """One step of a cell: ``h'`` (``(h', c')`` for LSTM); ``weights`` is
    ``(w_ih, w_hh, b_ih, b_hh)``."""
    return _cell_op(x, h, c, tuple(weights), (mode,))
