"""The typed form of a printed FX graph (see parse.py for how each field is read)."""

from __future__ import annotations

import msgspec


class TensorMeta(msgspec.Struct, frozen=True):
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


class FxInput(msgspec.Struct, frozen=True):
    name: str
    meta: TensorMeta | None = None


class FxNode(msgspec.Struct):
    """One assignment line of the graph's forward."""

    #: The first name assigned (a tuple unpack assigns several: see `names`).
    name: str
    #: placeholder_alias (`l_x_ = L_x_`), call_function, call_method, call_module, get_attr,
    #: unpack (`a, b, = ...`) or expression (an operator or subscript written inline).
    op: str
    #: The dotted callee (`torch.ops.aten.mm.default`, `submod_0`, `view`, `getitem`, `>=`...).
    target: str
    #: Names of inputs and earlier nodes this node reads, in order of appearance (repeats kept).
    args: list[str]
    names: list[str]
    meta: TensorMeta | None = None
    source: FxSource | None = None
    #: Nodes that read this one, filled once the whole graph is read.
    users: list[str] = msgspec.field(default_factory=list)
    #: 1-based line of the node in the payload.
    line: int = 0


class FxGraph(msgspec.Struct):
    #: The class printed (GraphModule, or a submodule's name for nested graphs).
    name: str
    inputs: list[FxInput]
    nodes: list[FxNode]
    #: Names the `return` reads, in order.
    outputs: list[str]
    #: Graphs printed as nested classes (DDP split submodules, higher-order-op bodies), by name.
    subgraphs: dict[str, FxGraph] = msgspec.field(default_factory=dict)


class FxGraphFailure(msgspec.Struct, frozen=True):
    """A payload that is not a printed FX graph (or that this parser cannot read), and why."""

    reason: str
