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

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tlscope.analyse.fold.capture import capture_api
from tlscope.analyse.fold.export_words import (
    SYMBOL,
    assigned_name,
    call_sentence,
    code_expr,
    data_dependent_expr,
    dim_name,
    dynamo_error_text,
    equal_dims_fix,
    expr_fix,
    expr_sentence,
    kernel_text,
    locals_by_symbol,
    partial_sentence,
    specialised_fix,
)
from tlscope.analyse.fold.guards import dynamo_error_frame
from tlscope.analyse.fold.refs import payload_ref
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import (
    ExportCall,
    ExportIssue,
    ExportSymbol,
    PayloadRef,
    SourceLocation,
)
from tlscope.model.compile_id import CompileId
from tlscope.model.events import (
    Artifact,
    CompilationMetrics,
    CreateSymbol,
    CreateUnbackedSymbol,
    Frame,
    GuardAdded,
    GuardOnDataDependentError,
    MismatchedFakeKernel,
    MissingFakeKernel,
    PropagateRealTensorsProvenance,
    SymbolicShapeSpecialization,
)
from tlscope.model.lenient import frames_of
from tlscope.model.record import Record

if TYPE_CHECKING:
    from tlscope.analyse.fold.partial_graph import Stopped

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
        "compilation_metrics",
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
    "dynamo_error": "Dynamo Error (strict export)",
}
#: Issues kept per call (a long draft_export can log thousands; `count` counts repeats of one).
MAX_ISSUES = 200
#: Calls kept (the log is untrusted: a million `export` lines must not make a million objects).
MAX_CALLS = 10_000
#: compiles.json's `exports_note` for a log of torch.export without TORCH_DTRACE.
NO_DTRACE_NOTE = (
    "torch logged none of torch.export's own events (TORCH_DTRACE was not set): only failed calls show, "
    "through their partial graphs or strict export's metrics, and strict calls whose tracing worked "
    "(traced: how they ended is not logged); other successful calls and most other failures leave no "
    "trace. Trace with TORCH_DTRACE=DIR instead of TORCH_TRACE=DIR to see every call and why it ended."
)
#: Characters of a strict export's failure reason kept in its issue (torch's run to pages).
MAX_REASON = 4000
#: Partial graphs read for where tracing stopped (each is parsed: a hostile log may hold many).
MAX_PARTIAL_READ = 100


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

    def __init__(self, index: int, log_line: int) -> None:
        self.index = index
        #: Its `export` event's line, else (older torch) its first export-only event's.
        self.log_line = log_line
        self.called_at: SourceLocation | None = None
        self.program: PayloadRef | None = None
        self.issues: dict[tuple[str, str, str], ExportIssue] = {}
        #: Its strict Dynamo trace's compile id, and whether that trace ended without error.
        self.trace_id: str | None = None
        self.traced = False
        #: Symbols specialised to a constant in this call: name -> (value, source).
        self.specialised: dict[str, tuple[str | None, str | None]] = {}

    def has(self, kind: str) -> bool:
        """Whether the call has an issue of `kind` (the error's own event said it already)."""
        return any(k == kind for k, _, _ in self.issues)


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
        #: Partial graphs read so far (MAX_PARTIAL_READ).
        self._partial_read = 0
        #: Compile ids whose symbols strict export's Dynamo made (their specialisations' fixes are
        #: export's): the ids traced since the last compile ended are moved here when a strict
        #: export's trace ends (a `compilation_metrics` outside any compile).
        self.exported_ids: set[str] = set()
        self._traced: set[str] = set()
        #: Whether torch logged export's own events (TORCH_DTRACE), and whether export left any
        #: trace outside a compile (a call, a symbol): together they decide `note()`.
        self._dtraced = False
        self._exporting = False

    def feed(self, record: Record, raw_line: int | None, captured: CompileId | None = None) -> None:
        """`captured`: the compile id the last fullgraph capture traced (capture.py), the strict
        trace a `compilation_metrics` record outside any compile ends."""
        key, event = record.key, record.event
        if key in ("export", "exported_program"):
            self._dtraced = True
        if key == "export":
            self._close()
            self._open = _Call(len(self.calls), record.line)
        elif isinstance(event, CreateUnbackedSymbol) and event.symbol:
            at = self._frame(record, event.user_stack)
            self._origins[event.symbol] = _Origin(assigned_name(at), "unbacked", at)
            self._trace(record)
        elif isinstance(event, CreateSymbol) and event.symbol:
            self._backed(record, event)
            self._trace(record)
        elif key == "compilation_metrics":
            self._compile_ended(record, raw_line, captured)
        elif isinstance(event, SymbolicShapeSpecialization) and event.symbol and self._open is not None:
            source = event.sources[0] if event.sources else None
            self._open.specialised[event.symbol] = (None if event.value is None else str(event.value), source)
        elif key == "exported_program":
            call = self._call(record)
            call.program = payload_ref(record, key, raw_line)
            self._close()
        elif outside_compiles(record.compile_id) or self._open is not None:
            # torch.compile under TORCH_DTRACE logs guard_added too: those belong to a compile.
            self._issue(record, raw_line)

    def artifact(self, record: Record, raw_line: int | None) -> None:
        """An artifact logged outside a compile: the graph traced until an export's error."""
        event = record.event
        if isinstance(event, Artifact) and event.name == PARTIAL_GRAPH:
            call = self._call(record)
            stopped = self._stopped(record)
            at = stopped.at if stopped is not None else None
            if stopped is not None and stopped.undecided and not call.has("data_dependent_error"):
                # No TORCH_DTRACE: the error's own event is missing, the graph's last node says it.
                self._expr_issue(record, raw_line, "data_dependent_error", stopped.undecided, None, at, None)
            self._add(
                call,
                ExportIssue(
                    kind="partial_graph",
                    title=TITLES["partial_graph"],
                    sentence=partial_sentence(at),
                    user_frame=at,
                    payload=payload_ref(record, PARTIAL_GRAPH, raw_line),
                    log_line=record.line,
                    event_kind=event_kind(record),
                    raw_line=raw_line,
                ),
                ("partial_graph", "", ""),
            )
            self._close()  # the call is over: its error reached the caller

    def _stopped(self, record: Record) -> Stopped | None:
        """Where the partial graph says tracing stopped (the first MAX_PARTIAL_READ graphs)."""
        from tlscope.analyse.fold.partial_graph import stopped_at  # a failed export's log only

        self._partial_read += 1
        return stopped_at(record.payload, self.user.is_user) if self._partial_read <= MAX_PARTIAL_READ else None

    def result(self) -> list[ExportCall]:
        self._close()
        return self.calls

    def note(self) -> str | None:
        """What the calls cannot say: torch.export's traces without its own events (no
        TORCH_DTRACE), where only failed calls show; None otherwise."""
        return NO_DTRACE_NOTE if self._exporting and not self._dtraced else None

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, record: Record) -> _Call:
        self._exporting = True
        if self._open is None:
            self._open = _Call(len(self.calls), record.line)
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
                specialised_fix(issue, call.specialised)
                equal_dims_fix(issue, call.called_at)
        status = "failed" if call.program is None else "exported_with_issues" if issues else "exported"
        if status == "failed" and call.traced:
            status = "traced"  # its issues (guards evaluated, say) did not stop its trace
        if len(self.calls) >= MAX_CALLS:
            return
        self.calls.append(
            ExportCall(
                index=call.index,
                status=status,
                sentence=call_sentence(status, issues),
                log_line=call.log_line,
                called_at=call.called_at,
                program=call.program,
                issues=issues,
                trace_id=call.trace_id,
            )
        )

    def _backed(self, record: Record, event: CreateSymbol) -> None:
        assert event.symbol is not None
        name = dim_name(event.source)
        self._origins[event.symbol] = _Origin(name, "backed", None)
        # An input's size symbol is made before tracing: its stack ends at the export call.
        if self._open is None:
            if outside_compiles(record.compile_id):
                self._called_at = self._called_at or self._frame(record, event.stack)
        elif self._open.called_at is None:
            self._open.called_at = self._frame(record, event.stack)

    def _trace(self, record: Record) -> None:
        """A symbol made: outside a compile, export's; inside, maybe strict export's trace."""
        if record.compile_id is None or outside_compiles(record.compile_id):
            self._exporting = True
        else:
            self._traced.add(record.compile_id.normalised().display)

    def _compile_ended(self, record: Record, raw_line: int | None, captured: CompileId | None) -> None:
        """A compile's metrics: torch.compile's carry its compile id; strict export's Dynamo trace
        logs its own outside any (and its ids restart at [0/0] each call), as does torch.compile's
        aot_compile and AOT Inductor, told apart by the record's stack (no export call). A strict trace that
        failed ends its call, failed, with the failure's reason as its issue; one that did not ends
        it `traced` when torch logs no more of it (no TORCH_DTRACE: no `exported_program` follows).
        Either way the call names the trace's compile id, `captured`."""
        if not outside_compiles(record.compile_id) or not _exports_stack(record):
            # torch.compile's, its ahead-of-time capture's or AOT Inductor's (capture.py): no export.
            self._traced.clear()
            return
        self.exported_ids |= self._traced
        self._traced.clear()
        event = record.event
        if not isinstance(event, CompilationMetrics):
            return
        if not event.fail_type:
            if self._dtraced:
                # Under TORCH_DTRACE the call's `export` and `exported_program` say how it ended.
                if self._open is not None:
                    self._open.trace_id = _trace_id(captured)
                return
            # Without it, the trace is all the log will say of this call.
            call = self._call(record)
            call.trace_id, call.traced = _trace_id(captured), True
            self._close()
            return
        call = self._call(record)
        call.trace_id = _trace_id(captured)
        reason = (event.fail_reason or "").strip()
        at = dynamo_error_frame(reason, self.user)
        expr = data_dependent_expr(reason)
        if expr is not None:
            if not call.has("data_dependent_error"):
                self._expr_issue(record, raw_line, "data_dependent_error", expr, None, at, None)
        else:
            sentence, fix = dynamo_error_text(event.fail_type, reason, at)
            issue = ExportIssue(
                kind="dynamo_error",
                title=TITLES["dynamo_error"],
                sentence=sentence,
                reason=reason[:MAX_REASON] or None,
                user_frame=at,
                fix=fix,
                log_line=record.line,
                event_kind=event_kind(record),
                raw_line=raw_line,
            )
            self._add(call, issue, ("dynamo_error", event.fail_type, _place(at)))
        self._close()  # the call is over: Dynamo's error reached the caller

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
        code = code_expr(expr, symbols)
        issue = ExportIssue(
            kind=kind,
            title=TITLES[kind],
            sentence=expr_sentence(kind, code, result, at, symbols),
            expr=expr,
            code_expr=code,
            result=result,
            user_frame=at,
            symbols=symbols,
            fix=expr_fix(kind, code, result, at, symbols),
            log_line=record.line,
            event_kind=event_kind(record),
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
        sentence, fix = kernel_text(kind, event.op, reason)
        self._add(
            call,
            ExportIssue(
                kind=kind,
                title=TITLES[kind],
                sentence=sentence,
                op=event.op,
                reason=reason,
                fix=fix,
                log_line=record.line,
                event_kind=event_kind(record),
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
        local_names = locals_by_symbol(event.frame_locals if event is not None else None)
        sources = event.symbol_to_sources or {} if event is not None else {}
        found: list[ExportSymbol] = []
        for name in dict.fromkeys(SYMBOL.findall(expr)):
            origin = self._origins.get(name)
            source = sources.get(name)
            found.append(
                ExportSymbol(
                    symbol=name,
                    name=local_names.get(name)
                    or (dim_name(source) if isinstance(source, str) else None)
                    or (origin.name if origin is not None else None),
                    kind=origin.kind if origin is not None else ("unbacked" if name.startswith("u") else "backed"),
                    created_at=origin.at if origin is not None else None,
                )
            )
        return found

    def _frame(self, record: Record, stack: Iterable[Frame] | None) -> SourceLocation | None:
        return self.user.innermost_of(record, stack)


def event_kind(record: Record) -> str:
    """The kind of an issue's event as viewers filter by it: an artifact's name, else its key."""
    event = record.event
    return event.name if isinstance(event, Artifact) and event.name else record.key


def _trace_id(captured: CompileId | None) -> str | None:
    """The compile id of a strict export's Dynamo trace, as displayed (`[0/0]`)."""
    return None if captured is None else captured.normalised().display


def _exports_stack(record: Record) -> bool:
    """Whether an outside metrics record is strict export's: its stack passes through torch/export/
    (aot_compile's and AOT Inductor's do not); one with no stack is read as export's, as before 1.20."""
    return capture_api(record) == "export" or not frames_of(record.envelope.get("stack"))


def _place(at: SourceLocation | None) -> str:
    return "" if at is None else f"{at.file}:{at.line}"
