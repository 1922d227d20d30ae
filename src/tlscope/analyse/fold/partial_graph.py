"""Where a torch.export call's tracing stopped, read from its partial graph (`make_fx_fail_partial`).

Without TORCH_DTRACE, torch logs none of export's own events (`export`, the data-dependent error,
`exported_program`): a failed call shows only through the graph traced until the error. That graph
still says where tracing stopped: its last node's `# File:` line is the last user line traced,
and when that node is a comparison on a value read from tensor data (`gt: "Sym(u0 > 2)" = item > 2`)
that nothing used, the error is the branch on it, which export could not decide. The graph prints
a bare `def forward(...)`, read by the graph parser inside a class of its own.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

import msgspec

from tlscope.analyse.fxgraph.graph_parser import parse_graph
from tlscope.analyse.fxgraph.model import FxGraph
from tlscope.format.compiles import SourceLocation

#: Partial graphs larger than this are not read (a hostile log's artifacts: a page of text each is
#: usual, a model's whole forward a few hundred KB).
MAX_BYTES = 4 << 20
#: A relation sympy prints: `u0 > 2`, `Eq(u0, 3)`, `u1 <= s0`.
_RELATION = re.compile(r"(?:[<>]=?|[!=]=)|^(?:Eq|Ne|Lt|Le|Gt|Ge)\(")
_UNBACKED = re.compile(r"\bu\d+\b")


class Stopped(msgspec.Struct, frozen=True):
    """The last user line traced, and the undecided comparison when the graph ends in one."""

    at: SourceLocation | None
    #: The last node's expression (`u0 > 2`) when it is a comparison on an unbacked symbol that no
    #: node uses: the branch whose bool export needed and could not decide.
    undecided: str | None


def stopped_at(payload: bytes | None, is_user: Callable[[str], bool]) -> Stopped | None:
    """Where the graph in `payload` stops (its last node from a file `is_user` accepts); None
    when it is no graph the parser reads."""
    if payload is None or len(payload) > MAX_BYTES:
        return None
    text = payload.decode("utf-8", "replace")
    graph = parse_graph("class PartialGraph(torch.nn.Module):\n" + textwrap.indent(text, "    "))
    if not isinstance(graph, FxGraph) or not graph.nodes:
        return None
    last = graph.nodes[-1]
    source = next((n.source for n in reversed(graph.nodes) if n.source is not None and is_user(n.source.file)), None)
    at = (
        None
        if source is None
        else SourceLocation(file=source.file, line=source.line, name=source.function, code=source.code)
    )
    sym = last.meta.sym if last.meta is not None else None
    decided = not sym or last.users or not _RELATION.search(sym) or not _UNBACKED.search(sym)
    return Stopped(at=at, undecided=None if decided else sym)
