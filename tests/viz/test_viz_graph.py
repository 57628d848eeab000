"""wgrad.viz.backward_graph: the nodes PyTorch has, valid SVG without Graphviz, PNG."""
import os
import stat
import xml.etree.ElementTree as ET

import pytest

import wgrad
from wgrad.viz import _graph, _mpl, backward_graph

SVG = "{http://www.w3.org/2000/svg}"
PURPLE = _graph._COMPLEX_STROKE


def nodes_of(svg):
    """``[(lines, stroke, dashed, (x, y, w, h))]`` of the node boxes of our SVG."""
    out = []
    for g in ET.fromstring(svg.encode()).iter(SVG + "g"):
        if g.get("class") != "node":
            continue
        r = g.find(SVG + "rect")
        lines = [t.text for t in g.findall(SVG + "text")]
        box = tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
        out.append((lines, r.get("stroke"), r.get("stroke-dasharray") is not None, box))
    return out


def names(svg):
    return sorted(lines[0] for lines, *_ in nodes_of(svg))


def complex_names(svg):
    return sorted(lines[0] for lines, stroke, *_ in nodes_of(svg) if stroke == PURPLE)


def _program(t):
    """One computation on either library: complex leaf, real leaf, shared subgraph
    (``e`` feeds two branches), two outputs."""
    a = t.tensor([1 + 2j, -0.5j, 3.0], dtype=t.complex128, requires_grad=True)
    b = t.tensor([0.5, -1.0, 2.0], dtype=t.float64, requires_grad=True)
    e = (a * b).exp()
    return a, b, e.abs().sum(), (e * b).abs().mean()


class Twice(wgrad.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def _check_layout(svg):
    """Valid XML and no two boxes overlap."""
    boxes = [b for *_, b in nodes_of(svg)]
    for i, (x, y, w, h) in enumerate(boxes):
        for (x2, y2, w2, h2) in boxes[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y


def test_nodes_and_complex_marks_match_torch():
    torch = pytest.importorskip("torch")
    graphs = []
    for lib in (wgrad, torch):
        a, b, l1, l2 = _program(lib)
        graphs.append(backward_graph([l1, l2], params={"a": a, "b": b}, engine="python").svg())
    ours, theirs = graphs
    assert names(ours) == names(theirs)
    assert complex_names(ours) == complex_names(theirs)
    # each node once: the shared ExpBackward0 and the two outputs
    assert names(ours).count("ExpBackward0") == 1
    assert names(ours).count("output") == 2
    assert complex_names(ours) == ["AccumulateGrad", "ExpBackward0", "MulBackward0",
                                   "MulBackward0"]
    leaves = {tuple(lines) for lines, *_ in nodes_of(ours) if lines[0] == "AccumulateGrad"}
    assert leaves == {("AccumulateGrad", "a", "(3,) complex128"),
                      ("AccumulateGrad", "b", "(3,) float64")}
    _check_layout(ours)


def test_saved_tensors_match_torch():
    torch = pytest.importorskip("torch")
    saved = []
    for lib in (wgrad, torch):
        a = lib.tensor([1 + 2j, 3j], requires_grad=True)
        y = (a * a.conj()).exp()
        svg = backward_graph(y, show_saved=True, engine="python").svg()
        saved.append(sorted(tuple(lines) for lines, *_ in nodes_of(svg)
                            if lines[0] in ("self", "other", "result")))
    assert saved[0] == saved[1]
    assert ("result", "(2,) complex64") in saved[0]


def test_saved_after_backward_is_marked_freed():
    a = wgrad.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward()
    svg = backward_graph(y, show_saved=True, engine="python").svg()
    lines = [t for ls, *_ in nodes_of(svg) for t in ls]
    assert "self: (freed)" in lines and "other: (freed)" in lines


def test_multi_output_node_once_with_output_numbers():
    x = wgrad.randn(3, 3, dtype=wgrad.float64, requires_grad=True)
    q, r = wgrad.linalg.qr(x)
    g = backward_graph({"q": q, "r": r}, params={"x": x}, engine="python")
    svg = g.svg()
    assert names(svg).count("LinalgQrBackward0") == 1
    assert ["q", "(3, 3) float64"] in [ls for ls, *_ in nodes_of(svg)]
    assert "out 0" in svg and "out 1" in svg
    assert g.source.count('label="out 1"') == 1
    _check_layout(svg)


def test_custom_function_and_hooks():
    z = wgrad.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    z.register_hook(lambda g: g)
    y = Twice.apply(z)
    y.register_hook(lambda g: g)
    w = y.exp()
    w.grad_fn.register_prehook(lambda go: None)
    w.grad_fn.register_hook(lambda gi, go: None)
    svg = backward_graph(w, show_saved=True, engine="python").svg()
    nodes = {ls[0]: (ls, stroke, dashed) for ls, stroke, dashed, _ in nodes_of(svg)}
    assert nodes["TwiceBackward"][1] == PURPLE
    assert nodes["TwiceBackward"][0][-1] == "hooks: tensor 1"
    assert nodes["ExpBackward0"][0][-1] == "hooks: pre 1, post 1"
    assert nodes["AccumulateGrad"][0][-1] == "hooks: tensor 1" and nodes["AccumulateGrad"][2]
    assert nodes["saved_tensors[0]"][0] == ["saved_tensors[0]", "(2,) complex64"]
    assert not backward_graph(w, engine="python").svg().count("hooks:")   # off by default


def test_leaf_output_and_long_chain():
    x = wgrad.tensor([1.0], requires_grad=True)
    assert names(backward_graph(x, engine="python").svg()) == ["(1,) float32", "output"]
    y = x
    for _ in range(400):          # iterative traversal and layout: no recursion limit
        y = y * 1.0
    assert names(backward_graph(y, engine="python").svg()).count("MulBackward0") == 400


def test_no_graphviz_means_own_layout(monkeypatch):
    monkeypatch.setattr(_graph.shutil, "which", lambda name: None)
    a = wgrad.tensor([1j], requires_grad=True)
    g = backward_graph(a.abs(), params={"a": a})
    assert 'class="node"' in g._repr_svg_()
    assert g.source.startswith("digraph")
    with pytest.raises(FileNotFoundError, match="dot"):
        backward_graph(a.abs(), engine="dot").svg()


def _fake_dot(tmp_path, monkeypatch, body):
    exe = tmp_path / "dot"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_graphviz_used_when_present_and_broken_one_falls_back(tmp_path, monkeypatch):
    a = wgrad.tensor([1j], requires_grad=True)
    _fake_dot(tmp_path, monkeypatch, "cat > /dev/null; echo '<svg xmlns=\"x\">from dot</svg>'\n")
    assert "from dot" in backward_graph(a.abs()).svg()
    _fake_dot(tmp_path, monkeypatch, "exit 3\n")
    assert 'class="node"' in backward_graph(a.abs()).svg()


def test_save_formats(tmp_path, monkeypatch):
    monkeypatch.setattr(_graph.shutil, "which", lambda name: None)
    a = wgrad.tensor([1j, 2.0], requires_grad=True)
    g = backward_graph((a * a).sum(), params={"a": a})
    ET.parse(g.save(tmp_path / "g.svg"))
    assert (tmp_path / "g.dot").name == os.path.basename(g.save(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").read_text() == g.source
    if _mpl.have_matplotlib():
        g.save(tmp_path / "g.png")
        assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setattr(_mpl, "have_matplotlib", lambda: False)
    with pytest.raises(ImportError, match=r"pip install wgrad\[viz\]"):
        g.save(tmp_path / "h.png")


def test_dir_lists_saved_values_as_torch():
    torch = pytest.importorskip("torch")
    listed = []
    for lib in (wgrad, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        listed.append([[n for n in dir(y.grad_fn) if n.startswith("_raw_saved_")
                        or n.startswith("_saved_") and lib.is_tensor(getattr(y.grad_fn, n))]
                       for y in (a * a, a.exp())])
    assert listed[0] == listed[1]


def test_params_as_pairs():
    a = wgrad.tensor([1.0, 2.0], requires_grad=True)
    svg = backward_graph((a * 2).sum(), params=iter([("alpha", a)]), engine="python").svg()
    assert ["AccumulateGrad", "alpha", "(2,) float32"] in [ls for ls, *_ in nodes_of(svg)]
