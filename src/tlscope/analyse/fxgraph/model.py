"""The typed form of a printed FX graph (see parse.py for how each field is read)."""

from __future__ import annotations

import msgspec

from tlscope.format.graph_file import FxSource, TensorMeta

__all__ = ["FxGraph", "FxGraphFailure", "FxInput", "FxNode", "FxSource", "TensorMeta"]


class _Annotated:
    """dtype, shape and stride read through `meta`, the node's or input's printed annotation."""

    __slots__ = ()
    meta: TensorMeta | None

    @property
    def dtype(self) -> str:
        return self.meta.dtype if self.meta is not None else ""

    @property
    def shape(self) -> list[str] | None:
        return self.meta.shape if self.meta is not None else None

    @property
    def stride(self) -> list[str] | None:
        return self.meta.stride if self.meta is not None else None


class FxInput(_Annotated, msgspec.Struct, frozen=True):
    name: str
    meta: TensorMeta | None = None
    #: The nn.Module path of the parameter or buffer this input is (`layers.0.linear`; "" for the
    #: compiled module's own), read from dynamo's input name; None for any other input.
    module: str | None = None


class FxNode(_Annotated, msgspec.Struct):
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
    #: The nn.Module whose parameters or buffers the node reads directly, when exactly one (see
    #: parse.py's `_fill_modules`: torch prints no module stack in logged graphs).
    module: str | None = None


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
