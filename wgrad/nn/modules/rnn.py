"""Recurrent layers: RNN, LSTM, GRU and their cells (torch.nn's names, parameters and
initialisation); each layer/direction runs as one fused scan (NOTE [One scan per layer and
direction] in wgrad/nn/_rnn.py)."""
import math
import warnings

import numpy as np

from ... import _creation
from ...ops.shape import cat, stack
from .. import _rnn
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _packed_lengths, _pack_index, _long
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """The stacked, optionally bidirectional recurrent layer behind RNN, LSTM and GRU.

    Parameters per layer ``k`` and direction (suffix ``_reverse`` for the backward one):
    ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` and, for an
    LSTM with ``proj_size > 0``, ``weight_hr_l{k}``; all start as
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if (not isinstance(dropout, (int, float)) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for d in range(dirs):
                in_size = input_size if layer == 0 else real_hidden * dirs
                sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate, in_size)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    setattr(self, base + sfx,
                            Parameter(_creation.empty(*shape, device=device, dtype=dtype)))
                    names.append(base + sfx)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (cuDNN's weight layout does not exist here)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ------------------------------------------------------------------------
    def _layer_weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def _check_input(self, input, batch_sizes):
        if not (input.is_floating_point() or input.is_complex()):
            raise ValueError(f"input must have the type float, or complex, got "
                             f"{input.dtype}")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        w = self.weight_ih_l0
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _run(self, x, hx, cx, lengths):
        """Time-major ``x`` ``(T, B, I)``; ``hx``/``cx`` ``(L*D, B, H)``; returns
        ``(output, h_n, c_n or None)``."""
        dirs = 2 if self.bidirectional else 1
        mask = perm = None
        if lengths is not None:
            mask, perm = _rnn.lengths_mask(lengths, x.shape[0])
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                res = _rnn.rnn_layer(self.mode, x, hx[k], None if cx is None else cx[k],
                                     self._layer_weights(layer, d), reverse=d == 1,
                                     mask=mask, perm=perm if d == 1 else None)
                outs.append(res[0])
                hs.append(res[1])
                if cx is not None:
                    cs.append(res[2])
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, stack(hs), (stack(cs) if cx is not None else None)

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        dirs = 2 if self.bidirectional else 1
        out_h = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            data, batch_sizes, sorted_idx, unsorted_idx = input
            self._check_input(data, batch_sizes)
            lengths = _packed_lengths(batch_sizes)
            t_max, batch = len(batch_sizes.tolist()), len(lengths)
            src = _rnn_pad_index(lengths, batch, t_max, data.shape[0])
            zero = _creation.zeros((1, data.shape[1]), dtype=data.dtype)
            x = cat([data, zero]).index_select(0, src).reshape((t_max, batch, data.shape[1]))
            unbatched = False
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D instead")
            unbatched = input.ndim == 2
            x = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)
            self._check_input(x, None)
            batch = x.shape[1]
            sorted_idx = unsorted_idx = None
        h_shape = (self.num_layers * dirs, batch, out_h)
        c_shape = (self.num_layers * dirs, batch, self.hidden_size)
        if hx is None:
            h0 = _creation.zeros(h_shape, dtype=x.dtype)
            c0 = _creation.zeros(c_shape, dtype=x.dtype) if lstm else None
        else:
            if lstm:
                h0, c0 = hx
            else:
                h0, c0 = hx, None
            if unbatched:
                if h0.ndim != 2 or (lstm and c0.ndim != 2):
                    if lstm:
                        raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be "
                                           f"2-D but got ({h0.ndim}-D, {c0.ndim}-D) tensors")
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{h0.ndim}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if lstm else None
            elif h0.ndim != 3 or (lstm and c0.ndim != 3):
                if lstm:
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({h0.ndim}-D, {c0.ndim}-D) tensors")
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{h0.ndim}-D tensor")
            if sorted_idx is not None:
                h0 = h0.index_select(1, sorted_idx)
                c0 = c0.index_select(1, sorted_idx) if lstm else None
            if lstm:
                self._check_hidden(h0, h_shape, "Expected hidden[0] size {}, got {}")
                self._check_hidden(c0, c_shape, "Expected hidden[1] size {}, got {}")
            else:
                self._check_hidden(h0, h_shape)
        out, hn, cn = self._run(x, h0, c0, lengths)
        if unsorted_idx is not None:
            hn = hn.index_select(1, unsorted_idx)
            cn = cn.index_select(1, unsorted_idx) if lstm else None
        if packed:
            flat = out.reshape((out.shape[0] * out.shape[1], out.shape[2]))
            out = PackedSequence(flat.index_select(0, _long(_pack_index(lengths, batch))),
                                 batch_sizes, sorted_idx, unsorted_idx)
        elif unbatched:
            out, hn = out.squeeze(1), hn.squeeze(1)
            cn = cn.squeeze(1) if lstm else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return (out, (hn, cn)) if lstm else (out, hn)


def _rnn_pad_index(lengths, batch, t_max, n):
    src = np.full(t_max * batch, n, np.int64)
    src[_pack_index(lengths, batch)] = np.arange(n)
    return _long(src)


class RNN(RNNBase):
    """Elman RNN, ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (or relu).

    Example
    -------
    >>> import wgrad
    >>> rnn = wgrad.nn.RNN(3, 4, num_layers=2)
    >>> out, h = rnn(wgrad.randn(5, 2, 3))
    >>> out.shape, h.shape
    (wgrad.Size([5, 2, 4]), wgrad.Size([2, 2, 4]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory layer (gates i, f, g, o as torch), optional projections
    (``proj_size``); returns ``(output, (h_n, c_n))``.

    Example
    -------
    >>> import wgrad
    >>> lstm = wgrad.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    >>> out, (h, c) = lstm(wgrad.randn(2, 5, 3))
    >>> out.shape, h.shape
    (wgrad.Size([2, 5, 8]), wgrad.Size([2, 2, 4]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit layer (gates r, z, n as torch).

    Example
    -------
    >>> import wgrad
    >>> gru = wgrad.nn.GRU(3, 4)
    >>> out, h = gru(wgrad.randn(5, 3))
    >>> out.shape, h.shape
    (wgrad.Size([5, 4]), wgrad.Size([1, 4]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# -- cells ------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` of one recurrent
    step, initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size,
                                                   device=device, dtype=dtype))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size,
                                                   device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, device=device,
                                                     dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, device=device,
                                                     dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, states):
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             f"instead")
        for h in states:
            if h is not None and h.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.ndim}D "
                                 f"instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if x.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{x.dtype.scalar_name} and {self.weight_ih.dtype.scalar_name}")
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        out = []
        for i, h in enumerate(states):
            if h is None:
                h = _creation.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
            elif not batched:
                h = h.unsqueeze(0)
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} batch "
                                   f"size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                                   f"expected {self.hidden_size}")
            out.append(h)
        return batched, x, out

    def _weights(self):
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class RNNCell(RNNCellBase):
    """One Elman RNN step, ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu).

    Example
    -------
    >>> import wgrad
    >>> cell = wgrad.nn.RNNCell(3, 4)
    >>> cell(wgrad.randn(2, 3)).shape
    wgrad.Size([2, 4])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        batched, x, (h,) = self._prepare(input, (hx,))
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        out = _rnn.rnn_cell(mode, x, h, None, self._weights())
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``.

    Example
    -------
    >>> import wgrad
    >>> h, c = wgrad.nn.LSTMCell(3, 4)(wgrad.randn(3))
    >>> h.shape, c.shape
    (wgrad.Size([4]), wgrad.Size([4]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        states = (None, None) if hx is None else tuple(hx)
        batched, x, (h, c) = self._prepare(input, states)
        h2, c2 = _rnn.rnn_cell("LSTM", x, h, c, self._weights())
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.GRUCell(3, 4)(wgrad.randn(2, 3)).shape
    wgrad.Size([2, 4])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        batched, x, (h,) = self._prepare(input, (hx,))
        out = _rnn.rnn_cell("GRU", x, h, None, self._weights())
        return out if batched else out.squeeze(0)
