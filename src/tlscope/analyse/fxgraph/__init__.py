"""FX graphs as data (issue 23): a graph payload as torch prints it -> a typed FxGraph.

`parse_graph(text)` is pure: text in, a `FxGraph` or a `FxGraphFailure` out, never an exception.
"""

from tlscope.analyse.fxgraph.graph_parser import looks_like_graph, parse_graph, stored_graph
from tlscope.analyse.fxgraph.model import FxGraph, FxGraphFailure, FxInput, FxNode, FxSource, TensorMeta
from tlscope.analyse.fxgraph.stored import from_stored, to_stored

__all__ = [
    "FxGraph",
    "FxGraphFailure",
    "FxInput",
    "FxNode",
    "FxSource",
    "TensorMeta",
    "from_stored",
    "looks_like_graph",
    "parse_graph",
    "stored_graph",
    "to_stored",
]
