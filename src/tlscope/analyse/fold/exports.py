"""Each torch.export call of a log and how it ended: compiles.json's `exports` (format 1.18).

torch.export logs no failure record of its own. What a user needs is spread over events:
`export` starts a call (newer torch, under TORCH_DTRACE), `exported_program` ends a good one,
and between them the reasons a call failed or gave an unsound program:

- `guard_on_data_dependent_error`: export could not decide an expression on a value read from
  tensor data (`if k > 2` after `k = n.item()`), and raised;
- `propagate_real_tensors_provenance`: draft_export decided it from the example's real tensors
  and asserted the answer in the program;
- `guard_added` with prefix `eval` outside a compile: a guard export evaluated, which narrows a
  dimension (a constraint violation when the user declared it dynamic);
- `missing_fake_kernel` / `mismatched_fake_kernel`: a custom operator export cannot trace;
- the `make_fx_fail_partial` artifact: the graph traced until an error.

The fold cuts the log into calls, keeps each call's issues (one per kind, expression and line,
counted), says where each expression's symbols come from in the user's names, and decides the
call's status, sentence and each issue's fix here, once, for every reader. tlparse shows the
same events only in its -e report's HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import (
    ExportCall,
    ExportFix,
    ExportIssue,
    ExportSymbol,
    PayloadRef,
    SourceLocation,
)
from tlscope.model.compile_id import CompileId
from tlscope.model.events import (
    Artifact,
    CreateSymbol,
    CreateUnbackedSymbol,
    Frame,
    FrameLocals,
    GuardAdded,
    GuardOnDataDependentError,
    MismatchedFakeKernel,
    MissingFakeKernel,
    PropagateRealTensorsProvenance,
    SymbolicShapeSpecialization,
)
from tlscope.model.record import Record

#: Event keys this fold reads (with `artifact`, read for `make_fx_fail_partial` only).
EXPORT_KEYS = frozenset(
    {
        "export",
        "exported_program",
        "guard_on_data_dependent_error",
        "propagate_real_tensors_provenance",
        "guard_added",
        "missing_fake_kernel",
        "mismatched_fake_kernel",
        "create_unbacked_symbol",
        "create_symbol",
        "symbolic_shape_specialization",
    }
)
PARTIAL_GRAPH = "make_fx_fail_partial"
#: tlparse's failure types (its -e report's table), and ours for the kinds it does not show.
TITLES = {
    "data_dependent_error": "Data Dependent Error (export failed)",
    "data_dependent": "Data Dependent Error",
    "guard_evaluated": "Guard Evaluated",
    "missing_fake_kernel": "Missing Fake Kernel",
    "mismatched_fake_kernel": "Mismatched Fake Kernel",
    "partial_graph": "Tracing Failed",
}
FAKE_KERNEL_DOCS = "https://docs.pytorch.org/docs/stable/library.html#torch.library.register_fake"
COND_DOCS = "https://docs.pytorch.org/docs/stable/cond.html"
#: Issues kept per call (a long draft_export can log thousands; `count` counts repeats of one).
MAX_ISSUES = 200
#: Calls kept (the log is untrusted: a million `export` lines must not make a million objects).
MAX_CALLS = 10_000
_SYMBOL = re.compile(r"\b[su]\d+\b")
#: `k = n.item()`, `k: int = t.tolist()[0]`: the name a data-dependent value is given.
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
_DIM = re.compile(r"^(?:L\['(?P<input>[^']+)'\]|(?P<plain>[A-Za-z_]\w*))\.size\(\)\[(?P<dim>\d+)\]$")


def outside_compiles(cid: CompileId | None) -> bool:
    """Whether a record was logged outside torch.compile's compiles (export's are, `[-/-]`)."""
    return cid is None or (cid.frame_id is None and cid.compiled_autograd_id is None)


class _Origin:
    """Where a symbol was last made: its user name, its kind and its user line."""

    __slots__ = ("at", "kind", "name")

    def __init__(self, name: str | None, kind: str, at: SourceLocation | None) -> None:
        self.name = name
        self.kind = kind
        self.at = at


class _Call:
    """A call being folded."""

    def __init__(self, index: int, log_line: int, started: bool) -> None:
        self.index = index
        self.log_line = log_line
        #: Opened by an `export` event (else by its first export-only event, older torch).
        self.started = started
        self.called_at: SourceLocation | None = None
        self.program: PayloadRef | None = None
        self.issues: dict[tuple[str, str, str], ExportIssue] = {}
        #: Symbols specialised to a constant in this call: name -> (value, source).
        self.specialised: dict[str, tuple[str | None, str | None]] = {}


class ExportFold:
    """Cuts a log's export events into calls (see the module docstring); `result()` gives them."""

    def __init__(self, user: UserCode) -> None:
        self.user = user
        self.calls: list[ExportCall] = []
        self._open: _Call | None = None
        #: The export call's line, from an input's size symbol made while no call was open
        #: (older torch logs no `export` event: the call opens at its first issue).
        self._called_at: SourceLocation | None = None
        #: Each symbol name's latest origin (names are reused by every call: the latest is its own).
        self._origins: dict[str, _Origin] = {}

    def feed(self, record: Record, raw_line: int | None) -> None:
        key, event = record.key, record.event
        if key == "export":
            self._close()
            self._open = _Call(len(self.calls), record.line, started=True)
        elif isinstance(event, CreateUnbackedSymbol) and event.symbol:
            at = self._frame(record, event.user_stack)
            self._origins[event.symbol] = _Origin(_assigned(at), "unbacked", at)
        elif isinstance(event, CreateSymbol) and event.symbol:
            self._backed(record, event)
        elif isinstance(event, SymbolicShapeSpecialization) and event.symbol and self._open is not None:
            source = event.sources[0] if event.sources else None
            self._open.specialised[event.symbol] = (None if event.value is None else str(event.value), source)
        elif key == "exported_program":
            call = self._call(record)
            call.program = _ref(record, key, raw_line)
            self._close()
        elif outside_compiles(record.compile_id) or self._open is not None:
            # torch.compile under TORCH_DTRACE logs guard_added too: those belong to a compile.
            self._issue(record, raw_line)

    def artifact(self, record: Record, raw_line: int | None) -> None:
        """An artifact logged outside a compile: the graph traced until an export's error."""
        event = record.event
        if isinstance(event, Artifact) and event.name == PARTIAL_GRAPH:
            call = self._call(record)
            self._add(
                call,
                ExportIssue(
                    kind="partial_graph",
                    title=TITLES["partial_graph"],
                    sentence="Tracing raised an error; the graph traced until then is logged "
                    "(the error itself is not: it reached the caller).",
                    payload=_ref(record, PARTIAL_GRAPH, raw_line),
                    log_line=record.line,
                    raw_line=raw_line,
                ),
                ("partial_graph", "", ""),
            )
            self._close()  # the call is over: its error reached the caller

    def result(self) -> list[ExportCall]:
        self._close()
        return self.calls

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, record: Record) -> _Call:
        if self._open is None:
            self._open = _Call(len(self.calls), record.line, started=False)
            self._open.called_at, self._called_at = self._called_at, None
        return self._open

    def _close(self) -> None:
        call, self._open = self._open, None
        self._called_at = None
        if call is None:
            return
        issues = list(call.issues.values())
        for issue in issues:
            if issue.kind == "guard_evaluated":
                _specialised_fix(issue, call.specialised, self._origins)
        status = "failed" if call.program is None else "exported_with_issues" if issues else "exported"
        if len(self.calls) >= MAX_CALLS:
            return
        self.calls.append(
            ExportCall(
                index=call.index,
                status=status,
                sentence=_call_sentence(status, issues),
                log_line=call.log_line,
                called_at=call.called_at,
                program=call.program,
                issues=issues,
            )
        )

    def _backed(self, record: Record, event: CreateSymbol) -> None:
        assert event.symbol is not None
        name = _dim_name(event.source)
        self._origins[event.symbol] = _Origin(name, "backed", None)
        # An input's size symbol is made before tracing: its stack ends at the export call.
        if self._open is None:
            if outside_compiles(record.compile_id):
                self._called_at = self._called_at or self._frame(record, event.stack)
        elif self._open.called_at is None:
            self._open.called_at = self._frame(record, event.stack)

    # -- issues --------------------------------------------------------------------------------

    def _issue(self, record: Record, raw_line: int | None) -> None:
        event = record.event
        if isinstance(event, GuardOnDataDependentError) and event.expr:
            at = self._frame(record, event.stack)
            self._expr_issue(record, raw_line, "data_dependent_error", event.expr, None, at, None)
        elif isinstance(event, PropagateRealTensorsProvenance) and event.expr:
            at = self._frame(record, event.user_stack) or self._frame(record, event.stack)
            self._expr_issue(record, raw_line, "data_dependent", event.expr, event.result, at, event)
        elif isinstance(event, GuardAdded) and event.expr and event.prefix == "eval":
            at = self._frame(record, event.user_stack) or self._frame(record, event.stack)
            self._expr_issue(record, raw_line, "guard_evaluated", event.expr, None, at, event)
        elif isinstance(event, (MissingFakeKernel, MismatchedFakeKernel)) and event.op:
            self._kernel_issue(record, raw_line, event)

    def _expr_issue(
        self,
        record: Record,
        raw_line: int | None,
        kind: str,
        expr: str,
        result: str | None,
        at: SourceLocation | None,
        event: GuardAdded | PropagateRealTensorsProvenance | None,
    ) -> None:
        call = self._call(record)
        key = (kind, expr, _place(at))
        if key in call.issues:
            call.issues[key].count += 1
            return
        symbols = self._symbols(expr, event)
        code = _code_expr(expr, symbols)
        issue = ExportIssue(
            kind=kind,
            title=TITLES[kind],
            sentence=_expr_sentence(kind, code, result, at, symbols),
            expr=expr,
            code_expr=code,
            result=result,
            user_frame=at,
            symbols=symbols,
            fix=_expr_fix(kind, code, result, at, symbols),
            log_line=record.line,
            raw_line=raw_line,
        )
        self._add(call, issue, key)

    def _kernel_issue(
        self, record: Record, raw_line: int | None, event: MissingFakeKernel | MismatchedFakeKernel
    ) -> None:
        assert event.op is not None
        call = self._call(record)
        kind = "missing_fake_kernel" if isinstance(event, MissingFakeKernel) else "mismatched_fake_kernel"
        key = (kind, event.op, "")
        if key in call.issues:
            call.issues[key].count += 1
            return
        reason = (event.reason or "").strip() or None
        name = _op_name(event.op)
        if kind == "missing_fake_kernel":
            sentence = (
                f"torch.ops.{event.op} has no fake kernel, so export cannot tell its output's shape without running it."
            )
            why = (
                "export traces with fake tensors (shapes, no data); a custom operator needs a fake kernel that "
                "computes its output's size and dtype from its inputs'. draft_export ran the real kernel instead, "
                "which torch.export.export cannot do."
            )
        else:
            sentence = f"torch.ops.{event.op}'s fake kernel disagrees with its real kernel" + (
                f": {reason}." if reason else "."
            )
            why = (
                "the fake kernel registered for it returns a different size (or dtype, or stride) than the real "
                "kernel on the example inputs, so the exported program's shapes are wrong; fix that function."
            )
        self._add(
            call,
            ExportIssue(
                kind=kind,
                title=TITLES[kind],
                sentence=sentence,
                op=event.op,
                reason=reason,
                fix=ExportFix(code=f'@torch.library.register_fake("{name}")', why=why, docs_url=FAKE_KERNEL_DOCS),
                log_line=record.line,
                raw_line=raw_line,
            ),
            key,
        )

    @staticmethod
    def _add(call: _Call, issue: ExportIssue, key: tuple[str, str, str]) -> None:
        if key in call.issues:
            call.issues[key].count += 1
        elif len(call.issues) < MAX_ISSUES:
            call.issues[key] = issue

    def _symbols(self, expr: str, event: GuardAdded | PropagateRealTensorsProvenance | None) -> list[ExportSymbol]:
        local_names = _locals_by_symbol(event.frame_locals if event is not None else None)
        sources = event.symbol_to_sources or {} if event is not None else {}
        found: list[ExportSymbol] = []
        for name in dict.fromkeys(_SYMBOL.findall(expr)):
            origin = self._origins.get(name)
            source = sources.get(name)
            found.append(
                ExportSymbol(
                    symbol=name,
                    name=local_names.get(name)
                    or (_dim_name(source) if isinstance(source, str) else None)
                    or (origin.name if origin is not None else None),
                    kind=origin.kind if origin is not None else ("unbacked" if name.startswith("u") else "backed"),
                    created_at=origin.at if origin is not None else None,
                )
            )
        return found

    def _frame(self, record: Record, stack: Iterable[Frame] | None) -> SourceLocation | None:
        frames = [
            SourceLocation(file=record.frame_filename(f), line=f.line, name=f.name, code=f.loc) for f in stack or ()
        ]
        return self.user.innermost(frames)


# -- plain functions: names, sentences and fixes ------------------------------------------------


def _ref(record: Record, kind: str, raw_line: int | None) -> PayloadRef:
    has = record.payload is not None and record.payload_md5 is not None
    return PayloadRef(
        kind=kind,
        payload_filename=f"payloads/{record.payload_md5}.txt" if has else None,
        payload_size=len(record.payload) if has and record.payload is not None else None,
        raw_line=raw_line,
        log_line=record.line,
    )


def _place(at: SourceLocation | None) -> str:
    return "" if at is None else f"{at.file}:{at.line}"


def _assigned(at: SourceLocation | None) -> str | None:
    """The name the user's line gives its value (`k` of `k = n.item()`), if it is an assignment."""
    if at is None or not at.code:
        return None
    match = _ASSIGNED.match(at.code)
    return match[1] if match else None


def _dim_name(source: str | None) -> str | None:
    """`x.size()[0]` for Dynamo's `L['x'].size()[0]`; null for other sources."""
    match = _DIM.match(source or "")
    if match is None:
        return None
    return f"{match['input'] or match['plain']}.size()[{match['dim']}]"


def _locals_by_symbol(frame_locals: FrameLocals | None) -> dict[str, str]:
    """A symbol's name among the frame's locals: the local whose value is that symbol alone
    (`{"k": ["u0"]}` in torch 2.13, `{"k": "u0"}` before)."""
    found: dict[str, str] = {}
    for local, value in ((frame_locals.locals or {}) if frame_locals is not None else {}).items():
        values: Sequence[Any] = value if isinstance(value, list) else [value]
        if len(values) == 1 and isinstance(values[0], str) and _SYMBOL.fullmatch(values[0].strip()):
            found.setdefault(values[0].strip(), local)
    return found


def _code_expr(expr: str, symbols: Sequence[ExportSymbol]) -> str:
    """`expr` as Python in the user's names: each symbol the user named replaced by that name
    (`u0 > 2` -> `k > 2`), and sympy's `Eq(a, b)` / `Ne(a, b)` around it as `a == b` / `a != b`."""
    names = {s.symbol: s.name for s in symbols if s.name}
    named = _SYMBOL.sub(lambda m: names.get(m[0], m[0]), expr) if names else expr
    return _python(named)


def _python(expr: str) -> str:
    """`Eq(a, b)` -> `a == b`, `Ne(a, b)` -> `a != b` when the call is the whole expression."""
    text = expr.strip()
    for head, op in (("Eq(", "=="), ("Ne(", "!=")):
        if text.startswith(head) and text.endswith(")"):
            args = _top_level_split(text[len(head) : -1])
            if len(args) == 2:
                return f"{args[0].strip()} {op} {args[1].strip()}"
    return text


def _top_level_split(text: str) -> list[str]:
    """`text` split at its commas outside brackets; [] when its brackets do not balance."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return []
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts if depth == 0 else []


#: A comparison's negation, for a `torch._check` of what draft_export took to be False.
_NEGATED = {" == ": " != ", " != ": " == ", " >= ": " < ", " <= ": " > ", " > ": " <= ", " < ": " >= "}


def _negated(code: str) -> str:
    """`a != b` for `a == b` when the expression is one comparison, else `torch.sym_not(...)`."""
    found = [op for op in _NEGATED if op in code]
    if len(found) == 1 and code.count(found[0]) == 1 and not any(c in code for c in "<>=!" if c not in found[0]):
        return code.replace(found[0], _NEGATED[found[0]])
    return f"torch.sym_not({code})"


def _op_name(op: str) -> str:
    """`mylib::op` for torch.ops' `mylib.op.default`: the name register_fake takes."""
    parts = op.split(".")
    if len(parts) >= 2:
        return f"{parts[0]}::{parts[1]}"
    return op


def _where(at: SourceLocation) -> str:
    """`file.py:12` (the file's name: `user_frame` has its path), or `line 12` when the log's
    string table lacks the file (draft_export's own log)."""
    return f"line {at.line}" if at.file in (None, "(unknown)") else f"{at.file.rsplit('/', 1)[-1]}:{at.line}"


def _at(at: SourceLocation | None) -> str:
    if at is None:
        return ""
    code = f" `{at.code.strip()}`" if at.code else ""
    return f" at {at.name or '?'} ({_where(at)}){code}"


def _origin_text(symbols: Sequence[ExportSymbol]) -> str:
    """`k is read from tensor data by `k = n.item()` (main.py:4)`, for the data-dependent symbols."""
    parts = []
    for s in symbols:
        if s.kind != "unbacked":
            continue
        made = s.created_at
        where = f" by `{made.code.strip()}` ({_where(made)})" if made is not None and made.code else ""
        parts.append(f"{s.name or s.symbol} is read from tensor data{where}")
    return "; ".join(parts)


def _expr_sentence(
    kind: str, code: str, result: str | None, at: SourceLocation | None, symbols: Sequence[ExportSymbol]
) -> str:
    origin = _origin_text(symbols)
    if kind == "data_dependent_error":
        return f"export could not decide `{code}`{_at(at)}: {origin or 'it depends on tensor data'}."
    if kind == "data_dependent":
        return (
            f"draft_export could not decide `{code}`{_at(at)} and took the example's answer, {result}, "
            f"asserting it in the program" + (f"; {origin}." if origin else ".")
        )
    return f"export evaluated the guard `{code}`{_at(at)}, which narrows the sizes it names."


def _expr_fix(
    kind: str, code: str, result: str | None, at: SourceLocation | None, symbols: Sequence[ExportSymbol]
) -> ExportFix | None:
    if kind not in ("data_dependent_error", "data_dependent") or not any(s.kind == "unbacked" for s in symbols):
        return None
    check = f"torch._check({code})" if result != "False" else f"torch._check({_negated(code)})"
    taken = f"`{code}` is False" if result == "False" else f"`{code}` holds"
    return ExportFix(
        code=check,
        where=at,
        why=(
            f"if {taken} for every input you will pass, torch._check says so: export keeps that branch and "
            "checks it at run time. If either branch can happen, write the branch with torch.cond, which "
            "exports both."
        ),
        docs_url=COND_DOCS,
    )


def _specialised_fix(
    issue: ExportIssue, specialised: dict[str, tuple[str | None, str | None]], origins: dict[str, _Origin]
) -> None:
    """A guard evaluated that specialised a dimension: say which, and the fix."""
    for symbol in issue.symbols:
        if symbol.symbol not in specialised:
            continue
        value, source = specialised[symbol.symbol]
        dim = _dim_name(source) or symbol.name or symbol.symbol
        issue.sentence = (
            f"export evaluated `{issue.code_expr}`{_at(issue.user_frame)}, which made {dim} a constant ({value}): "
            "if it was declared dynamic (a Dim in dynamic_shapes), export raised a constraint violation."
        )
        issue.fix = ExportFix(
            kind="change_code",
            code=f"make it not depend on {dim} being {value}",
            where=issue.user_frame,
            why=(
                f"the code branches on the exact size, so the program is only valid for {value}. If the size "
                "really is fixed, drop its Dim (or give Dim.AUTO, which lets export keep it static)."
            ),
        )
        return


def _call_sentence(status: str, issues: Sequence[ExportIssue]) -> str:
    if status == "exported":
        return "Exported: a program was logged, with no issue."
    if status == "exported_with_issues":
        kinds = {i.kind for i in issues}
        titles = ", ".join(sorted({i.title for i in issues}))
        why = []
        if "data_dependent" in kinds:
            why.append(
                "it asserts draft_export's guesses of data-dependent values, which torch.export.export cannot make"
            )
        if "missing_fake_kernel" in kinds:
            why.append("draft_export ran a custom operator's real kernel, having no fake one")
        if "mismatched_fake_kernel" in kinds:
            why.append("a custom operator's fake kernel gives other shapes than its real one")
        if "guard_evaluated" in kinds:
            why.append("guards export evaluated narrowed sizes, which fails if they were declared dynamic")
        count = f"{len(issues)} issue{'s' if len(issues) != 1 else ''}"
        return f"Exported with {count} ({titles}): " + "; ".join(why) + "."
    if not issues:
        return "Failed: no program was logged, and no reason either (the error reached the caller)."
    first = next((i for i in issues if i.kind in ("data_dependent_error", "guard_evaluated")), issues[0])
    return f"Failed: {first.sentence}"
