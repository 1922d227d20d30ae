"""Where a dynamic dimension comes from (issue 23, point 4): compiles.json's `symbols`.

When Dynamo makes a size (or an int) dynamic it logs `create_symbol`: the symbol (`s77`), its
value and range, Dynamo's source (`L['x'].size()[0]`) and two stacks: `stack`, the Python stack
of the process (which holds the user's line that called the compiled function with `x`), and
`user_stack`, the line of the compiled function being traced. Later events constrain it:
`symbolic_shape_specialization` (replaced by a constant), `guard_added_fast` / `guard_added`
(a shape guard naming it), `propagate_real_tensors_provenance` (draft export's guesses). This
fold keeps, per (compile id, symbol), those facts, and nothing of the stacks but two frames.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from tlscope.analyse.fold.guards import input_name
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import SourceLocation, Specialization, Symbol
from tlscope.model.events import (
    CreateSymbol,
    CreateUnbackedSymbol,
    Frame,
    GuardAdded,
    GuardAddedFast,
    PropagateRealTensorsProvenance,
    SymbolicShapeSpecialization,
)
from tlscope.model.record import Record

#: Event keys this fold reads.
SYMBOL_KEYS = frozenset(
    {
        "create_symbol",
        "create_unbacked_symbol",
        "symbolic_shape_specialization",
        "guard_added_fast",
        "guard_added",
        "propagate_real_tensors_provenance",
    }
)
#: Guards kept per symbol (a long job guards one symbol many times; `guard_count` counts all).
MAX_GUARDS = 20
_NAME = re.compile(r"\b[su]\d+\b")
#: Symbols of an input's memory layout, not of its sizes.
_LAYOUT = frozenset({"stride", "storage_offset"})
#: `L['x'].size()[0]`, `L['x'].stride()[1]`, `L['x'].storage_offset()`: the input and dimension.
_DIM_SOURCE = re.compile(r"^(?P<input>.+)\.(?P<what>size|stride)\(\)\[(?P<dim>\d+)\]$")
_OFFSET_SOURCE = re.compile(r"^(?P<input>.+)\.storage_offset\(\)$")
#: Where torch's fake kernels live, which make an unbacked symbol for an output that depends on the
#: data: the innermost frame of `create_unbacked_symbol`'s stack is the kernel that asked for it.
_KERNEL_FILES = ("/_subclasses/fake_impls.py", "/_library/fake_impl.py")
#: Kernels under the name a user calls (`symbols[].op`); a kernel not listed keeps its own name.
#: `.item()` (and `.tolist()`, `int(t)`) is `_local_scalar_dense`; `allocate_size` is what a custom
#: op's fake kernel calls through `ctx.new_dynamic_size()`.
_OPS = {
    "local_scalar_dense": "item",
    "nonzero_numpy": "nonzero",
    "_unique": "unique",
    "repeat_interleave_tensor": "repeat_interleave",
    "meta_select": "select",
    "slice_forward": "slice",
    "_spdiags_dynamic_size": "spdiags",
    "allocate_size": "new_dynamic_size",
}
#: `symbols[].why` of an unbacked symbol a data-dependent operator made (since 1.39).
DATA_DEPENDENT = "data_dependent"


def split_source(source: str | None) -> tuple[str | None, int | None, str | None]:
    """(input source, dimension, what) of a symbol's source: `L['x'].size()[0]` -> (`L['x']`, 0, `size`)."""
    if not source:
        return None, None, None
    match = _DIM_SOURCE.match(source)
    if match is not None:
        return match["input"], int(match["dim"]), match["what"]
    offset = _OFFSET_SOURCE.match(source)
    if offset is not None:
        return offset["input"], None, "storage_offset"
    return source, None, "value"


#: Characters of an input expression before `.size()[N]` in a guard (`x`, `L['x']`, `self.w`).
_EXPR_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]'")
_SIZE_CALL = ".size()["


def size_refs(text: str) -> list[tuple[str, int]]:
    """Each `<input>.size()[<dim>]` of a guard's text, as (input, dim), in order.

    What `re.finditer(r"([A-Za-z_][\\w.\\[\\]']*)\\.size\\(\\)\\[(\\d+)\\]", text)` finds (ASCII
    names), in linear time: that pattern retried its name from every start of a long name (a
    guard is log text). Each `.size()[` is found by `str.find`; the name is the run of name
    characters before it (not crossing the previous match), cut to start at a letter or `_`.
    """
    found: list[tuple[str, int]] = []
    floor = 0
    at = text.find(_SIZE_CALL)
    while at != -1:
        end = at + len(_SIZE_CALL)
        digits = end
        while digits < len(text) and text[digits] in "0123456789":
            digits += 1
        start = at
        while start > floor and text[start - 1] in _EXPR_CHARS:
            start -= 1
        while start < at and not (text[start].isascii() and (text[start].isalpha() or text[start] == "_")):
            start += 1
        if digits > end and digits < len(text) and text[digits] == "]" and start < at:
            found.append((text[start:at], int(text[end:digits])))
            floor = digits + 1
        at = text.find(_SIZE_CALL, max(end, floor))
    return found


def _kernel_op(record: Record, stack: Sequence[Frame] | None) -> str | None:
    """The operator whose output an unbacked symbol is, when torch's fake kernel made it: the
    stack's innermost frame is then in the kernels' file (else, e.g. `mark_unbacked` on an input
    or a loop's carried value, the log does not say, and None)."""
    if not stack or stack[-1].name is None:
        return None
    file = record.frame_filename(stack[-1]).replace("\\", "/")
    if not file.endswith(_KERNEL_FILES):
        return None
    return _OPS.get(stack[-1].name, stack[-1].name)


class SymbolFold:
    """Symbols per (compile id, name), in the order they were created."""

    def __init__(self, user: UserCode) -> None:
        self.user = user
        self.symbols: dict[tuple[str | None, str], Symbol] = {}
        self._guards: dict[tuple[str | None, str], set[str]] = {}
        #: Per (compile id, symbol): its first guard logged with a user line, and that line.
        self.guard_frames: dict[tuple[str | None, str], tuple[str, SourceLocation]] = {}
        #: Per (compile id, name prefix `u`/`zuf`, operator): the unbacked symbols it made with a
        #: user line, and how many retraces of them followed.
        self._originals: dict[tuple[str | None, str, str | None], list[str]] = {}
        self._retraces: dict[tuple[str | None, str, str | None], int] = {}

    def feed(self, record: Record) -> None:
        event = record.event
        cid = record.compile_id.normalised().display if record.compile_id is not None else None
        if isinstance(event, CreateSymbol) and event.symbol:
            self._create(record, cid, event)
        elif isinstance(event, CreateUnbackedSymbol) and event.symbol:
            self._unbacked(record, cid, event)
        elif isinstance(event, SymbolicShapeSpecialization) and event.symbol:
            self._specialised(record, cid, event)
        elif isinstance(event, (GuardAddedFast, GuardAdded, PropagateRealTensorsProvenance)) and event.expr:
            self._guard(record, cid, event)

    def _unbacked(self, record: Record, cid: str | None, event: CreateUnbackedSymbol) -> None:
        """An unbacked symbol; one without a user line made by the operator that made an earlier
        one with a line (`.item()`'s `local_scalar_dense`, `nonzero`) is that one, retraced by
        AOTAutograd or Inductor: the k-th such retrace of an operator stands for its k-th
        original, in turn (each pass makes them again in the same order)."""
        assert event.symbol is not None
        name = event.symbol
        if (cid, name) in self.symbols:
            return  # a symbol created twice in one compile keeps its first record
        traced = self._frame(record, event.user_stack)
        symbol = Symbol(compile_id=cid, symbol=name, kind="unbacked", range=event.vr, traced_at=traced)
        symbol.op = _kernel_op(record, event.stack)
        if symbol.op is not None:
            symbol.why = DATA_DEPENDENT
        op = (cid, name.rstrip("0123456789"), event.stack[-1].name if event.stack else None)
        originals = self._originals.setdefault(op, [])
        if traced is not None:
            originals.append(name)
        elif originals:
            seen = self._retraces.get(op, 0)
            symbol.retrace_of = originals[seen % len(originals)]
            self._retraces[op] = seen + 1
        self.symbols[(cid, name)] = symbol

    def _add(self, cid: str | None, name: str, symbol: Symbol) -> None:
        # A symbol created twice in one compile (a restarted analysis) keeps its first record.
        self.symbols.setdefault((cid, name), symbol)

    def _create(self, record: Record, cid: str | None, event: CreateSymbol) -> None:
        assert event.symbol is not None
        source, dim, what = split_source(event.source)
        self._add(
            cid,
            event.symbol,
            Symbol(
                compile_id=cid,
                symbol=event.symbol,
                source=event.source,
                input_source=source,
                input=input_name(source) if source is not None else None,
                dim=dim,
                what=what,
                value=event.val,
                range=event.vr,
                entered_at=self._frame(record, event.stack),
                traced_at=self._frame(record, event.user_stack),
            ),
        )

    def _specialised(self, record: Record, cid: str | None, event: SymbolicShapeSpecialization) -> None:
        assert event.symbol is not None
        sources = event.sources or []
        if (cid, event.symbol) not in self.symbols:
            source, dim, what = split_source(sources[0] if sources else None)
            self._add(
                cid,
                event.symbol,
                Symbol(
                    compile_id=cid,
                    symbol=event.symbol,
                    source=sources[0] if sources else None,
                    input_source=source,
                    input=input_name(source) if source is not None else None,
                    dim=dim,
                    what=what,
                ),
            )
        self.symbols[(cid, event.symbol)].specializations.append(
            Specialization(
                value=None if event.value is None else str(event.value),
                reason=event.reason,
                user_frame=self._frame(record, event.user_stack) or self._frame(record, event.stack),
            )
        )

    def _guard(
        self, record: Record, cid: str | None, event: GuardAddedFast | GuardAdded | PropagateRealTensorsProvenance
    ) -> None:
        expr = event.expr
        assert expr is not None
        names = dict.fromkeys(_NAME.findall(expr))
        # A guard naming a stride or a storage offset is about the input's memory layout (a view's
        # bounds in its base: `20*s7 + 20*s89 + 4 <= 24*s64`), not about code that depends on a
        # size: the line traced then is no line to change, so it gives no `size_guard` fix.
        # Nor is an equality of two sizes (`Eq(s77, s31)`, of a broadcast or a matmul of two
        # inputs): a call breaking it fails in eager too, or passes a size 1, specialised anyway.
        no_line = _equates_sizes(expr) or any(
            (s := self.symbols.get((cid, n))) is not None and s.what in _LAYOUT for n in names
        )
        for name in names:
            symbol = self.symbols.get((cid, name))
            if symbol is None:
                continue
            seen = self._guards.setdefault((cid, name), set())
            if expr in seen:
                continue
            seen.add(expr)
            symbol.guard_count += 1
            if len(symbol.guards) < MAX_GUARDS:
                symbol.guards.append(expr)
            if not no_line and (cid, name) not in self.guard_frames:
                # The line traced when a guard was added: where a symbol's `size_guard` fix points.
                frame = self._frame(record, event.user_stack)
                if frame is not None:
                    self.guard_frames[(cid, name)] = (expr, frame)

    def _frame(self, record: Record, stack: Iterable[Frame] | None) -> SourceLocation | None:
        return self.user.innermost_of(record, stack)

    def result(self) -> list[Symbol]:
        return list(self.symbols.values())


def _equates_sizes(expr: str) -> bool:
    """`Eq(A, B)` whose two sides each name a symbol (`Eq(s77, s31)`, `Eq(2*s0, s1)`)."""
    if not (expr.startswith("Eq(") and expr.endswith(")")):
        return False
    depth = 0
    for i, char in enumerate(expr[3:-1], start=3):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            return _NAME.search(expr, 3, i) is not None and _NAME.search(expr, i, len(expr) - 1) is not None
    return False
