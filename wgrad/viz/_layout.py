"""A layered (Sugiyama-style) layout of a backward graph, drawn as SVG or with matplotlib.

Used when Graphviz's ``dot`` is not installed. Steps: layers by longest path from the
outputs (outputs at the bottom), a dummy node per layer an edge crosses, barycentre
ordering sweeps keeping the order with fewest crossings, x positions by repeated
isotonic least squares toward the neighbours' mean (boxes never overlap), then each edge
as cubic Bezier pieces through its dummies.
"""
from xml.sax.saxutils import escape

from ._mpl import require_matplotlib

__all__ = ["layout", "to_svg", "save_matplotlib"]

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
FONT_PX = 12
CHAR_W = 7.3          # advance of a 12 px monospace glyph
LINE_H = 15
PAD_X, PAD_Y = 10, 7
GAP_X, GAP_Y = 24, 42
DUMMY_W = 8
MARGIN = 16
ARROW = 8
_SWEEPS = 12
_WORK = 20000         # sweeps x points a layout may spend before it sweeps less


class _Box:
    __slots__ = ("x", "y", "w", "h", "node")

    def __init__(self, x, y, w, h, node):
        self.x, self.y, self.w, self.h, self.node = x, y, w, h, node


def _size(node):
    width = max(len(t) for t, _ in node.lines) * CHAR_W + 2 * PAD_X
    return width, len(node.lines) * LINE_H + 2 * PAD_Y


def _layers(n, edges):
    """Longest path from the sinks (the outputs): a source of an edge sits above its
    destination."""
    # reverse topological order: a node is placed once all its destinations are
    remaining = [0] * n
    preds = [[] for _ in range(n)]
    for s, d in edges:
        remaining[s] += 1
        preds[d].append(s)
    layer = [0] * n
    stack = [v for v in range(n) if remaining[v] == 0]
    done = 0
    while stack:
        v = stack.pop()
        done += 1
        for p in preds[v]:
            layer[p] = max(layer[p], layer[v] + 1)
            remaining[p] -= 1
            if remaining[p] == 0:
                stack.append(p)
    if done < n:   # a cycle cannot come from autograd; put such nodes on top all the same
        top = max(layer) + 1
        for v in range(n):
            if remaining[v]:
                layer[v] = top
    return layer


def _crossings(order, up, pos):
    """Edge crossings between each layer and the one above it."""
    total = 0
    for row in order:
        segs = []
        for v in row:
            for u in up[v]:
                segs.append((pos[v], pos[u]))
        segs.sort()
        for i in range(len(segs)):
            a = segs[i][1]
            for j in range(i + 1, len(segs)):
                if segs[j][0] != segs[i][0] and segs[j][1] < a:
                    total += 1
    return total


def _order(layer_of, nlayers, up, down, initial):
    order = [[] for _ in range(nlayers)]
    for v in initial:
        order[layer_of[v]].append(v)
    pos = {}

    def index():
        for row in order:
            for i, v in enumerate(row):
                pos[v] = i

    index()
    best = [list(r) for r in order]
    big = sum(len(u) for u in up.values()) > 3000
    best_c = None if big else _crossings(order, up, pos)
    for sweep in range(max(2, min(_SWEEPS, _WORK // max(1, len(pos))))):
        # downward (top = highest layer): order each layer by its upper neighbours
        rng = range(nlayers - 2, -1, -1) if sweep % 2 == 0 else range(1, nlayers)
        for L in rng:
            nb = up if sweep % 2 == 0 else down
            row = order[L]
            keys = {}
            for i, v in enumerate(row):
                ps = [pos[u] for u in nb[v]]
                keys[v] = sum(ps) / len(ps) if ps else i
            row.sort(key=lambda v: keys[v])
            for i, v in enumerate(row):
                pos[v] = i
        if not big:
            c = _crossings(order, up, pos)
            if c < best_c:
                best_c, best = c, [list(r) for r in order]
    if big:
        best = order
    return best


def _isotonic(target, sep):
    """x minimising sum (x - target)^2 with x[i+1] - x[i] >= sep[i] (pool adjacent
    violators on x minus the cumulative separation)."""
    off = [0.0]
    for s in sep:
        off.append(off[-1] + s)
    ys = [t - o for t, o in zip(target, off)]
    blocks = []      # [mean, count]
    for y in ys:
        blocks.append([y, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks[-1]
            blocks[-1] = [(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2]
    out = []
    for m, c in blocks:
        out.extend([m] * c)
    return [y + o for y, o in zip(out, off)]


def _gap(wa, wb):
    # two dummy points (arrows passing a layer) may run close together
    return 4.0 if wa == wb == DUMMY_W else GAP_X


def _xpos(order, width, up, down):
    x = {}
    for row in order:
        cur = 0.0
        for v in row:
            x[v] = cur + width[v] / 2
            cur += width[v] + _gap(width[v], DUMMY_W)
    nl = len(order)

    def place(L, nb):
        row = order[L]
        target = []
        for v in row:
            ps = [x[u] for u in nb[v]]
            target.append(sum(ps) / len(ps) if ps else x[v])
        sep = [(width[a] + width[b]) / 2 + _gap(width[a], width[b])
               for a, b in zip(row, row[1:])]
        for v, nx in zip(row, _isotonic(target, sep)):
            x[v] = nx

    # alternate sweeps: down (each layer toward its upper neighbours), up (toward the
    # lower ones); the last sweep goes down, so chains hang straight below their inputs
    for _ in range(max(1, min(8, _WORK // max(1, len(x))))):
        for L in range(nl - 2, -1, -1):
            place(L, up)
        for L in range(1, nl):
            place(L, down)
    for L in range(nl - 2, -1, -1):
        place(L, up)
    return x


def layout(spec, legend=()):
    """Positions for ``spec``'s nodes (``_Box``es), edges as Bezier paths, and the legend."""
    n = len(spec.nodes)
    sizes = [_size(node) for node in spec.nodes]
    plain = [(s, d) for s, d, _, _ in spec.edges]
    layer = _layers(n, plain)
    nlayers = max(layer) + 1 if n else 1
    width = [w for w, _ in sizes]
    layer_of = list(layer)
    up = {v: [] for v in range(n)}
    down = {v: [] for v in range(n)}
    chains = []
    for s, d in plain:
        chain = [s]
        for L in range(layer[s] - 1, layer[d], -1):
            v = len(layer_of)
            layer_of.append(L)
            width.append(DUMMY_W)
            up[v], down[v] = [], []
            chain.append(v)
        chain.append(d)
        for a, b in zip(chain, chain[1:]):
            up[b].append(a)
            down[a].append(b)
        chains.append(chain)
    # first order: the order nodes were found from the outputs, dummies after
    order = _order(layer_of, nlayers, up, down, range(len(layer_of)))
    x = _xpos(order, width, up, down)
    # rows: highest layer on top
    row_h = [0.0] * nlayers
    for v in range(n):
        row_h[layer[v]] = max(row_h[layer[v]], sizes[v][1])
    row_y = [0.0] * nlayers
    y = MARGIN
    for L in range(nlayers - 1, -1, -1):
        row_h[L] = row_h[L] or LINE_H
        row_y[L] = y + row_h[L] / 2
        y += row_h[L] + GAP_Y
    height = y - GAP_Y + MARGIN
    xs = [x[v] - width[v] / 2 for v in range(len(width))]
    shift = MARGIN - min(xs) if xs else MARGIN
    right = max((x[v] + width[v] / 2 for v in range(len(width))), default=0) + shift
    boxes = [_Box(x[v] + shift, row_y[layer[v]], sizes[v][0], sizes[v][1], spec.nodes[v])
             for v in range(n)]
    # ports: edges leave a box's bottom and enter its top, spread in the order of the
    # other end's x so they do not cross at the box
    outs = {v: [] for v in range(n)}
    ins = {v: [] for v in range(n)}
    for k, ch in enumerate(chains):
        outs[ch[0]].append((x[ch[1]], k))
        ins[ch[-1]].append((x[ch[-2]], k))
    port_out, port_in = {}, {}
    for v in range(n):
        for ports, table in ((outs[v], port_out), (ins[v], port_in)):
            ports.sort()
            step = min(14.0, sizes[v][0] / (len(ports) + 1))
            for i, (_, k) in enumerate(ports):
                table[k] = boxes[v].x + (i - (len(ports) - 1) / 2) * step
    edges = []
    for k, (ch, (_, _, label, dashed)) in enumerate(zip(chains, spec.edges)):
        s, d = ch[0], ch[-1]
        pts = [(port_out[k], boxes[s].y + boxes[s].h / 2)]
        for v in ch[1:-1]:
            L = layer_of[v]
            pts.append((x[v] + shift, row_y[L] - row_h[L] / 2))
            pts.append((x[v] + shift, row_y[L] + row_h[L] / 2))
        end = (port_in[k], boxes[d].y - boxes[d].h / 2)
        pts.append((end[0], end[1] - ARROW))
        segs = []   # ("C", c1, c2, p) or ("L", p)
        for i in range(len(pts) - 1):
            (x0, y0), (x1, y1) = pts[i], pts[i + 1]
            if abs(x0 - x1) < 0.05:          # straight down (through dummies, mostly)
                if segs and segs[-1][0] == "L" and abs(segs[-1][1][0] - x1) < 0.05:
                    segs[-1] = ("L", (x1, y1))       # one line for a vertical run
                else:
                    segs.append(("L", (x1, y1)))
            else:
                my = (y0 + y1) / 2
                segs.append(("C", (x0, my), (x1, my), (x1, y1)))
        head = [(end[0], end[1]), (end[0] - 4, end[1] - ARROW), (end[0] + 4, end[1] - ARROW)]
        lx, ly = pts[-2] if len(pts) > 2 else pts[0]
        mid = ((lx + pts[-1][0]) / 2 + 4, (ly + pts[-1][1]) / 2)
        edges.append({"start": pts[0], "segs": segs, "head": head, "dashed": dashed,
                      "label": label, "label_at": mid})
    leg = []
    if legend:
        lx = right + 2 * GAP_X
        ly = MARGIN + LINE_H + 4
        lw = max(_size(node)[0] for node in legend)
        for node in legend:
            w, h = lw, _size(node)[1]
            leg.append(_Box(lx + w / 2, ly + h / 2, w, h, node))
            ly += h + 6
        right = lx + lw
        height = max(height, ly + MARGIN)
    return {"width": right + MARGIN, "height": height, "boxes": boxes, "edges": edges,
            "legend": leg}


def _f(v):
    return f"{v:.1f}"


def _svg_box(b, cls="node"):
    node = b.node
    colour, sw = node.stroke
    dash = ' stroke-dasharray="5,3"' if node.hooks else ""
    parts = [f'<g class="{cls}">']
    if node.title:
        parts.append(f"<title>{escape(node.title)}</title>")
    parts.append(f'<rect x="{_f(b.x - b.w / 2)}" y="{_f(b.y - b.h / 2)}" width="{_f(b.w)}" '
                 f'height="{_f(b.h)}" rx="5" fill="{node.fill}" stroke="{colour}" '
                 f'stroke-width="{sw:g}"{dash}/>')
    top = b.y - len(node.lines) * LINE_H / 2
    for i, (text, tc) in enumerate(node.lines):
        fill = f' fill="{tc}"' if tc else ""
        parts.append(f'<text x="{_f(b.x)}" y="{_f(top + (i + 0.5) * LINE_H + 4)}" '
                     f'text-anchor="middle"{fill}>{escape(text)}</text>')
    parts.append("</g>")
    return "".join(parts)


def to_svg(scene):
    """The scene as a standalone SVG document (no ids, so several can share a page)."""
    w, h = scene["width"], scene["height"]
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}pt" height="{h:.0f}pt" '
           f'viewBox="0 0 {_f(w)} {_f(h)}" font-family="{FONT}" font-size="{FONT_PX}">',
           f'<rect x="0" y="0" width="{_f(w)}" height="{_f(h)}" fill="white"/>']
    for e in scene["edges"]:
        d = [f"M{_f(e['start'][0])},{_f(e['start'][1])}"]
        for seg in e["segs"]:
            if seg[0] == "L":
                d.append(f"L{_f(seg[1][0])},{_f(seg[1][1])}")
            else:
                d.append("C" + " ".join(f"{_f(px)},{_f(py)}" for px, py in seg[1:]))
        dash = ' stroke-dasharray="5,3"' if e["dashed"] else ""
        pts = " ".join(f"{_f(px)},{_f(py)}" for px, py in e["head"])
        out.append(f'<g class="edge"><path d="{" ".join(d)}" fill="none" stroke="#444444" '
                   f'stroke-width="1.2"{dash}/><polygon points="{pts}" fill="#444444"/>')
        if e["label"]:
            lx, ly = e["label_at"]
            out.append(f'<text x="{_f(lx)}" y="{_f(ly)}" font-size="10" '
                       f'fill="#555555">{escape(e["label"])}</text>')
        out.append("</g>")
    for b in scene["boxes"]:
        out.append(_svg_box(b))
    if scene["legend"]:
        first = scene["legend"][0]
        out.append(f'<g class="legend"><text x="{_f(first.x - first.w / 2)}" '
                   f'y="{_f(first.y - first.h / 2 - 6)}" font-weight="bold">legend</text>')
        out.extend(_svg_box(b, "legend-key") for b in scene["legend"])
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def save_matplotlib(scene, path, fmt, dpi):
    """Draw the scene with matplotlib (PNG, PDF, ... without Graphviz)."""
    require_matplotlib("saving a backward graph as " + fmt.upper() + " without Graphviz")
    # optional dependency: imported when first needed
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch, PathPatch, Polygon
    from matplotlib.path import Path

    w, h = scene["width"], scene["height"]
    px = 96.0
    fig = Figure(figsize=(w / px, h / px), dpi=px)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)
    ax.axis("off")
    pt = 72.0 / px
    for e in scene["edges"]:
        verts, codes = [e["start"]], [Path.MOVETO]
        for seg in e["segs"]:
            if seg[0] == "L":
                verts.append(seg[1])
                codes.append(Path.LINETO)
            else:
                verts.extend(seg[1:])
                codes.extend([Path.CURVE4] * 3)
        ax.add_patch(PathPatch(Path(verts, codes), fill=False, edgecolor="#444444",
                               linewidth=1.2 * pt, linestyle="--" if e["dashed"] else "-"))
        ax.add_patch(Polygon(e["head"], closed=True, color="#444444"))
        if e["label"]:
            ax.text(*e["label_at"], e["label"], fontsize=10 * pt, color="#555555",
                    family="monospace", va="center")
    for b in scene["boxes"] + scene["legend"]:
        node = b.node
        colour, sw = node.stroke
        ax.add_patch(FancyBboxPatch((b.x - b.w / 2, b.y - b.h / 2), b.w, b.h,
                                    boxstyle="round,pad=0,rounding_size=5",
                                    facecolor=node.fill, edgecolor=colour, linewidth=sw * pt,
                                    linestyle="--" if node.hooks else "-"))
        top = b.y - len(node.lines) * LINE_H / 2
        for i, (text, tc) in enumerate(node.lines):
            ax.text(b.x, top + (i + 0.5) * LINE_H, text, ha="center", va="center",
                    fontsize=FONT_PX * pt, family="monospace", color=tc or "black")
    if scene["legend"]:
        first = scene["legend"][0]
        ax.text(first.x - first.w / 2, first.y - first.h / 2 - 8, "legend",
                fontsize=FONT_PX * pt, family="monospace", weight="bold")
    fig.savefig(path, format=fmt, dpi=dpi, facecolor="white")
