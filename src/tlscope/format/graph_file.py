"""graphs/<md5>.json: an FX graph payload as data (issue 23), beside `payloads/<md5>.txt`.

These Structs are the file's schema (docs/schema/graph.schema.json is generated from them);
FORMAT.md section "graphs/" documents each field. The parser's own types
(analyse/fxgraph/model.py) share `TensorMeta` and `FxSource`; the stored form differs from them in
one way only: a node's user line is an index into its graph's `sources`, so that the hundreds of
nodes of one line of user code do not repeat it.
"""

from __future__ import annotations

import msgspec


class TensorMeta(msgspec.Struct, frozen=True, omit_defaults=True):
    """An annotation such as `"f32[s0, 4][4, 1]cpu"` or `"Sym(s77)"`, split into its parts."""

    #: The annotation as printed.
    text: str
    #: "f32", "i64", "b8"... or "Sym" for a symbolic scalar; "" when the annotation has no dtype.
    dtype: str = ""
    #: Sizes as printed (a symbol such as "s0" marks a dynamic dimension); None when not a tensor.
    shape: list[str] | None = None
    #: Strides, when printed (dynamo and AOT graphs print them, export graphs do not).
    stride: list[str] | None = None
    #: "cpu", "cuda:0"... when printed.
    device: str = ""
    #: For `Sym(expr)`: the expression ("s77", "u0 >= 1").
    sym: str = ""


class FxSource(msgspec.Struct, frozen=True):
    """The user line a node came from, from the `# File: path:line in fn, code: ...` comment."""

    file: str
    line: int
    function: str
    code: str


class StoredInput(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One argument of the graph's `forward` (after `self`)."""

    name: str
    meta: TensorMeta | None = None
    #: The nn.Module path of the parameter or buffer this input is ("" for the compiled module's own).
    module: str | None = None


# Not kw_only: the line reader (analyse/fxgraph) makes one a node line, its fields in order. Not
# tracked by the garbage collector (gc=False): it holds strings, lists of them and a TensorMeta,
# never a cycle, and a graph makes thousands (each tracked one counts towards the next collection).
class StoredNode(msgspec.Struct, omit_defaults=True, gc=False):
    """One assignment line of the graph's `forward`."""

    name: str
    #: Every name the line assigns (several for a tuple unpack); `name` is the first.
    names: list[str]
    op: str
    target: str
    #: Names of inputs and earlier nodes read, in order of appearance (repeats kept).
    args: list[str]
    #: Nodes reading this one (their `name`), in graph order.
    users: list[str]
    meta: TensorMeta | None = None
    #: Index into the graph's `sources`, or None (no `# File:` comment in force).
    source: int | None = None
    module: str | None = None
    #: 1-based line of the node in the payload.
    line: int = 0


class StoredGraph(msgspec.Struct, kw_only=True):
    #: The class printed (`GraphModule`, `<lambda>` for AOT graphs, a submodule's name when nested).
    name: str
    inputs: list[StoredInput]
    nodes: list[StoredNode]
    #: Names the `return` reads, in order.
    outputs: list[str]
    #: The distinct user lines of this graph's nodes, in order of first use.
    sources: list[FxSource]
    #: Graphs printed as nested classes (DDP split submodules, higher-order-op bodies), by name.
    subgraphs: dict[str, StoredGraph] = msgspec.field(default_factory=dict)


class GraphFile(msgspec.Struct, kw_only=True):
    """Top-level object of graphs/<md5>.json."""

    format: str = "tlscope"
    format_version: int
    format_minor: int
    #: The payload it was read from: `payloads/<md5>.txt`, with the same `<md5>`.
    payload: str
    #: The graph, or None when the payload could not be read as one (see `failure`).
    graph: StoredGraph | None
    #: Why the payload is not a graph this version can read (problem `bad_graph`); None when read.
    failure: str | None = None
