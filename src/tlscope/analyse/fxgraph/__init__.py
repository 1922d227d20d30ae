"""FX graphs as data (issue 23): a graph payload as torch prints it -> a typed FxGraph.

`parse_graph(text)` is pure: text in, a `FxGraph` or a `FxGraphFailure` out, never an exception.
"""

from tlscope.analyse.fxgraph.graph_parser import parse_graph
from tlscope.analyse.fxgraph.model import FxGraph, FxGraphFailure, FxInput, FxNode, FxSource, TensorMeta

__all__ = ["FxGraph", "FxGraphFailure", "FxInput", "FxNode", "FxSource", "TensorMeta", "parse_graph"]
