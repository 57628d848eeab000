"""Pictures for notebooks: backward graphs and complex fields.

``backward_graph`` draws the graph behind some outputs (torchviz's ``make_dot``, with
complex-valued nodes marked) and needs nothing beyond wgrad: Graphviz's ``dot`` is used
when installed, wgrad's own layered layout otherwise. ``complex_image`` (domain
colouring) and ``LivePlot`` (a loss curve updated in place) draw with matplotlib, an
optional dependency: ``pip install wgrad[viz]``.
"""
from ._fields import LivePlot, complex_image, domain_colours
from ._graph import BackwardGraph, backward_graph

__all__ = ["backward_graph", "BackwardGraph", "complex_image", "domain_colours", "LivePlot"]
