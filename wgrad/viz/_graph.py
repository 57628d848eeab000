"""The backward graph of some outputs as a picture: extraction, DOT text, rendering.

The graph is read through the public autograd surface only (``grad_fn``, ``output_nr``,
``next_functions``, ``name()``, ``AccumulateGrad.variable``, ``_saved_<name>`` as
``dir(node)`` lists them, a custom Function's ``saved_tensors``), so the same code draws
a PyTorch graph; the two places that read more are ``_forward_input_dtypes`` and
``_hook_counts`` (NOTE [What viz reads from a node]).
"""
import os
import shutil
import subprocess

from . import _layout

__all__ = ["backward_graph", "BackwardGraph"]

_FILL = {"op": "#d9d9d9", "leaf": "#add8e6", "output": "#caff70", "saved": "#ffa500"}
_COMPLEX_FILL = "#e2cdf6"     # op nodes whose values are complex
_COMPLEX_STROKE = "#7b2cbf"
_STROKE = "#333333"
_HOOK_TEXT = "#c0392b"
_LEGEND = (("op", "backward node"), ("leaf", "leaf (AccumulateGrad)"),
           ("output", "output tensor"), ("saved", "saved tensor"),
           ("complex", "complex-valued"), ("hooks", "has hooks"))
_MAX_ATTR = 32


class _VNode:
    __slots__ = ("kind", "lines", "is_complex", "hooks", "title")

    def __init__(self, kind, lines, is_complex=False, hooks=False, title=""):
        self.kind = kind
        self.lines = lines          # [(text, colour or None)]
        self.is_complex = is_complex
        self.hooks = hooks
        self.title = title

    @property
    def fill(self):
        if self.kind == "op" and self.is_complex:
            return _COMPLEX_FILL
        return _FILL[self.kind]

    @property
    def stroke(self):
        return (_COMPLEX_STROKE, 3.0) if self.is_complex else (_STROKE, 1.0)


class _Spec:
    """Nodes and edges of the picture: ``edges`` are ``(src, dst, label, dashed)`` with
    ``src`` feeding ``dst`` (the forward direction, as torchviz draws it)."""

    def __init__(self):
        self.nodes = []
        self.edges = []

    def add(self, node):
        self.nodes.append(node)
        return len(self.nodes) - 1


def _dtype_str(dt):
    s = str(dt)
    return s.rsplit(".", 1)[-1]


def _is_complex(dt):
    return dt is not None and "complex" in str(dt)


def _shape_str(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _tensor_line(t):
    return f"{_shape_str(tuple(t.shape))} {_dtype_str(t.dtype)}"


def _is_tensor(v):
    return hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "requires_grad")


# NOTE [What viz reads from a node]
# Everything public except two facts no public attribute carries in wgrad: the dtype of a
# node's outputs (torch has ``_input_metadata``; a wgrad node keeps the shape and dtype of
# its forward inputs, one per ``next_functions`` slot, which is the dtype of the child's
# output on that edge), and which hooks a node holds. Both are read with getattr defaults:
# a node without them is drawn unmarked, never an error.
def _forward_input_dtypes(fn):
    for attr in ("in_meta", "_in_meta"):
        meta = getattr(fn, attr, None)
        if isinstance(meta, tuple) and len(meta) == len(fn.next_functions):
            return [m[1] if m is not None else None for m in meta]
    return None


def _own_output_dtypes(fn):
    meta = getattr(fn, "_input_metadata", None)    # PyTorch's nodes
    if meta is None:
        return {}
    try:
        return {k: m.dtype for k, m in enumerate(meta)}
    except Exception:
        return {}


def _hook_counts(fn):
    counts = {}
    for label, attr in (("pre", "_pre_hooks"), ("post", "_post_hooks")):
        d = getattr(fn, attr, None)
        if d:
            counts[label] = len(d)
    d = getattr(fn, "_tensor_pre_hooks", None)
    if d:
        n = sum(len(h) for h in d.values())
        if n:
            counts["tensor"] = n
    if getattr(fn, "_retains_grad_hooks", None):
        counts["retain_grad"] = len(fn._retains_grad_hooks)
    var = getattr(fn, "variable", None)
    if var is not None:
        for label, attrs in (("tensor", ("_hooks", "_backward_hooks")),
                             ("post_acc", ("_post_acc_hooks", "_post_accumulate_grad_hooks"))):
            seen = set()  # torch's name and wgrad's may be one dict (_backward_hooks)
            for attr in attrs:
                d = getattr(var, attr, None)
                if d and id(d) not in seen:
                    seen.add(id(d))
                    counts[label] = counts.get(label, 0) + len(d)
    return counts


def _normalise_outputs(outputs):
    if isinstance(outputs, dict):
        return list(outputs.items())
    if _is_tensor(outputs):
        return [(None, outputs)]
    return [(None, t) for t in outputs]


def _saved_values(fn):
    """``[(name, value)]`` of a node's saved values; a freed one has value ``_FREED``."""
    out = []
    names = [a for a in dir(fn) if a.startswith("_saved_")]
    if not names and hasattr(fn, "saved_tensors"):   # a custom Function's ctx
        try:
            vals = fn.saved_tensors
        except Exception:
            return [("saved_tensors", _FREED)]
        return [(f"saved_tensors[{i}]", v) for i, v in enumerate(vals)]
    for a in names:
        try:
            out.append((a[len("_saved_"):], getattr(fn, a)))
        except Exception:
            out.append((a[len("_saved_"):], _FREED))
    return out


_FREED = object()


def _extract(outputs, params, show_saved, show_hooks):
    spec = _Spec()
    if params is None:
        params = {}
    elif hasattr(params, "named_parameters"):      # a Module
        params = dict(params.named_parameters())
    elif not isinstance(params, dict):              # e.g. model.named_parameters()
        params = dict(params)
    names = {id(t): n for n, t in params.items()}
    vid = {}            # id(fn) -> index in spec.nodes
    fns = []            # keeps every visited fn alive, so ids stay unique
    out_dtypes = {}     # id(fn) -> {output_nr: dtype}
    used_nr = {}        # id(fn) -> output numbers seen on edges
    leaf_vid = {}       # id(leaf tensor without grad_fn) -> index

    def leaf_node(t):
        if id(t) not in leaf_vid:
            lines = [(names[id(t)], None)] if id(t) in names else []
            lines.append((_tensor_line(t), None))
            leaf_vid[id(t)] = spec.add(_VNode("leaf", lines, _is_complex(t.dtype)))
            fns.append(t)
        return leaf_vid[id(t)]

    def visit(root):
        stack = [root]
        while stack:
            fn = stack.pop()
            if id(fn) in vid:
                continue
            vid[id(fn)] = spec.add(None)     # filled in below, once dtypes are known
            fns.append(fn)
            for child, _ in reversed(fn.next_functions):
                if child is not None and id(child) not in vid:
                    stack.append(child)

    roots = []
    for i, (name, t) in enumerate(_normalise_outputs(outputs)):
        label = name if name is not None else "output"
        o = spec.add(_VNode("output", [(label, None), (_tensor_line(t), None)],
                            _is_complex(t.dtype)))
        fn = t.grad_fn
        if fn is None:
            if t.requires_grad:
                spec.edges.append((leaf_node(t), o, "", False))
            continue
        visit(fn)
        out_dtypes.setdefault(id(fn), {})[t.output_nr] = t.dtype
        used_nr.setdefault(id(fn), set()).add(t.output_nr)
        roots.append((fn, t.output_nr, o))

    for fn in list(fns):
        if not hasattr(fn, "next_functions"):
            continue
        dts = _forward_input_dtypes(fn)
        for j, (child, k) in enumerate(fn.next_functions):
            if child is None:
                continue
            used_nr.setdefault(id(child), set()).add(k)
            if dts is not None and dts[j] is not None:
                out_dtypes.setdefault(id(child), {}).setdefault(k, dts[j])

    def edge_label(fn, k):
        return f"out {k}" if used_nr.get(id(fn), {0}) != {0} else ""

    saved_vid = {}
    for fn in fns:
        if not hasattr(fn, "next_functions"):
            continue
        name = fn.name().rsplit("::", 1)[-1]    # torch's C++ nodes: torch::autograd::X
        lines = [(name, None)]
        dts = {**out_dtypes.get(id(fn), {}), **_own_output_dtypes(fn)}
        is_c = any(_is_complex(d) for d in dts.values())
        kind = "op"
        var = getattr(fn, "variable", None)
        if var is not None and _is_tensor(var):
            kind = "leaf"
            is_c = _is_complex(var.dtype)
            if id(var) in names:
                lines.append((names[id(var)], None))
            lines.append((_tensor_line(var), None))
        saved_edges = []
        if show_saved:
            for sname, v in _saved_values(fn):
                if v is _FREED:
                    lines.append((f"{sname}: (freed)", None))
                elif _is_tensor(v):
                    if id(v) not in saved_vid:
                        saved_vid[id(v)] = spec.add(_VNode(
                            "saved", [(sname, None), (_tensor_line(v), None)],
                            _is_complex(v.dtype)))
                        fns.append(v)
                    saved_edges.append(saved_vid[id(v)])
                elif isinstance(v, (tuple, list)) and v and all(_is_tensor(x) for x in v):
                    for i, x in enumerate(v):
                        s = spec.add(_VNode("saved", [(f"{sname}[{i}]", None),
                                                      (_tensor_line(x), None)],
                                            _is_complex(x.dtype)))
                        saved_edges.append(s)
                elif v is not None:
                    text = f"{sname}: {_value_str(v)}"
                    if len(text) > _MAX_ATTR:
                        text = text[:_MAX_ATTR - 3] + "..."
                    lines.append((text, None))
        hooks = _hook_counts(fn) if show_hooks else {}
        if hooks:
            lines.append(("hooks: " + ", ".join(f"{k} {n}" for k, n in hooks.items()),
                          _HOOK_TEXT))
        me = vid[id(fn)]
        title = name + "".join(f"\noutput {k}: {_dtype_str(d)}" for k, d in sorted(dts.items()))
        spec.nodes[me] = _VNode(kind, lines, is_c, bool(hooks), title)
        for s in saved_edges:
            spec.edges.append((s, me, "", True))
        for child, k in fn.next_functions:
            if child is not None:
                spec.edges.append((vid[id(child)], me, edge_label(child, k), False))
    for fn, k, o in roots:
        spec.edges.append((vid[id(fn)], o, edge_label(fn, k), False))
    return spec


# -- DOT ----------------------------------------------------------------------------------
def _dot_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _value_str(v):
    if isinstance(v, (bool, int, float, complex, str, tuple, list)):
        return repr(v)
    return str(v)     # a dtype prints as float64, not dtype('float64')


def _dot_attrs(node):
    colour, width = node.stroke
    style = "filled,rounded" + (",dashed" if node.hooks else "")
    label = "\\n".join(t.replace("\\", "\\\\").replace('"', '\\"') for t, _ in node.lines)
    return (f'label="{label}" fillcolor="{node.fill}" color="{colour}" '
            f'penwidth={width:g} style="{style}"')


def _legend_entries(spec):
    kinds = {n.kind for n in spec.nodes}
    out = [(k, text) for k, text in _LEGEND if k in kinds]
    if any(n.is_complex for n in spec.nodes):
        out.append(("complex", "complex-valued"))
    if any(n.hooks for n in spec.nodes):
        out.append(("hooks", "has hooks"))
    return out


def _legend_node(key, text):
    if key == "complex":
        return _VNode("op", [(text, None)], is_complex=True)
    if key == "hooks":
        return _VNode("op", [(text, None)], hooks=True)
    return _VNode(key, [(text, None)])


def _dot_source(spec):
    out = ["digraph backward {",
           '  graph [rankdir=TB, fontname="monospace", fontsize=12];',
           '  node [shape=box, fontname="monospace", fontsize=12, margin="0.15,0.06"];',
           '  edge [fontname="monospace", fontsize=10, arrowsize=0.7];']
    for i, n in enumerate(spec.nodes):
        out.append(f"  n{i} [{_dot_attrs(n)} tooltip={_dot_quote(n.title or n.lines[0][0])}];")
    for s, d, label, dashed in spec.edges:
        attrs = []
        if label:
            attrs.append(f"label={_dot_quote(label)}")
        if dashed:
            attrs.append("style=dashed")
        out.append(f"  n{s} -> n{d}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    entries = _legend_entries(spec)
    if entries:
        out.append('  subgraph cluster_legend {')
        out.append('    label="legend"; style=rounded; color="#999999";')
        for i, (key, text) in enumerate(entries):
            out.append(f"    legend{i} [{_dot_attrs(_legend_node(key, text))}];")
        for i in range(len(entries) - 1):
            out.append(f"    legend{i} -> legend{i + 1} [style=invis];")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


# -- the public object ------------------------------------------------------------------
class BackwardGraph:
    """A picture of a backward graph (returned by :func:`backward_graph`).

    Jupyter shows it through ``_repr_svg_``; ``source`` is its DOT text, ``svg()`` its SVG
    and ``save(path)`` writes ``.svg``, ``.png``, ``.pdf`` or ``.dot``/``.gv``. The picture
    is laid out by Graphviz's ``dot`` when that program is on PATH (``engine="auto"``) and
    otherwise by wgrad's own layered layout, so it never needs a system program.
    """

    def __init__(self, spec, engine="auto"):
        if engine not in ("auto", "dot", "python"):
            raise ValueError(f"engine must be 'auto', 'dot' or 'python', got {engine!r}")
        self._spec = spec
        self._engine = engine
        self._source = None
        self._svg = None
        self._scene = None

    def __repr__(self):
        return (f"<BackwardGraph: {len(self._spec.nodes)} nodes, "
                f"{len(self._spec.edges)} edges>")

    @property
    def source(self):
        """The graph in Graphviz's DOT language."""
        if self._source is None:
            self._source = _dot_source(self._spec)
        return self._source

    def _dot(self):
        if self._engine == "python":
            return None
        exe = shutil.which("dot")
        if exe is None and self._engine == "dot":
            raise FileNotFoundError("engine='dot' needs Graphviz's 'dot' program on PATH; "
                                    "engine='auto' lays the graph out without it")
        return exe

    def _run_dot(self, exe, fmt):
        try:
            r = subprocess.run([exe, f"-T{fmt}"], input=self.source.encode(),
                               capture_output=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError):
            if self._engine == "dot":
                raise
            return None
        return r.stdout

    def _layout(self):
        if self._scene is None:
            legend = [_legend_node(k, t) for k, t in _legend_entries(self._spec)]
            self._scene = _layout.layout(self._spec, legend)
        return self._scene

    def svg(self):
        """The picture as SVG text."""
        if self._svg is None:
            exe = self._dot()
            data = self._run_dot(exe, "svg") if exe else None
            self._svg = data.decode() if data else _layout.to_svg(self._layout())
        return self._svg

    def _repr_svg_(self):
        return self.svg()

    def save(self, path, format=None, dpi=150):
        """Write the picture to ``path``; the format comes from the suffix unless given.

        ``svg`` and ``dot``/``gv`` always work; ``png`` and ``pdf`` use Graphviz's ``dot``
        when installed and otherwise draw the same layout with matplotlib
        (``pip install wgrad[viz]``). Returns ``path``.
        """
        fmt = (format or os.path.splitext(str(path))[1].lstrip(".") or "svg").lower()
        if fmt in ("dot", "gv"):
            data = self.source.encode()
        elif fmt == "svg":
            data = self.svg().encode()
        else:
            exe = self._dot()
            data = self._run_dot(exe, fmt) if exe else None
            if data is None:
                _layout.save_matplotlib(self._layout(), path, fmt, dpi)
                return path
        with open(path, "wb") as f:
            f.write(data)
        return path


def backward_graph(outputs, params=None, show_saved=False, show_hooks=None, engine="auto"):
    """Draw the backward graph that produced ``outputs``, as torchviz's ``make_dot`` does.

    Parameters
    ----------
    outputs : Tensor, sequence of Tensors, or dict of name -> Tensor
        The tensors whose graph is drawn (each node once, however many outputs share it).
    params : dict of name -> Tensor, optional
        Names for leaves, e.g. ``dict(model.named_parameters())`` (an iterable of pairs or
        a Module work too); leaves show their name, shape and dtype.
    show_saved : bool
        Also draw the tensors each node saved for backward (orange, dashed edges, named
        and sized as torchviz shows them) and its other saved values in its label.
    show_hooks : bool, optional
        Mark nodes that hold hooks (dashed outline, a red line counting them); defaults
        to ``show_saved``.
    engine : {"auto", "dot", "python"}
        Who lays the picture out: Graphviz's ``dot`` if on PATH ("auto"), always it
        ("dot") or always wgrad's own layered layout ("python").

    Returns
    -------
    BackwardGraph
        Shown inline by Jupyter; ``.source`` (DOT), ``.svg()``, ``.save("g.svg")``,
        ``.save("g.png")``.

    Complex-valued nodes have a purple outline (op nodes also a lavender fill); the
    legend names every colour used.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.viz import backward_graph
    >>> w = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    >>> loss = (w.abs() ** 2).sum()
    >>> g = backward_graph(loss, params={"w": w}, engine="python")
    >>> "AbsBackward0" in g.svg() and "AccumulateGrad" in g.source
    True
    """
    if show_hooks is None:
        show_hooks = show_saved
    return BackwardGraph(_extract(outputs, params, show_saved, show_hooks), engine)
