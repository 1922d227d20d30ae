"""What the compile fold keeps per compile id while the log streams by (analyse/fold/compile_fold.py).

Only small facts are kept: references to payloads (never the payloads), the first line of
reasons, the inputs' shapes. A long job has thousands of compile ids; each costs a few KB.
"""

from __future__ import annotations

from tlscope.analyse.fold.blocks import Blocks
from tlscope.analyse.fold.callvalues import Values, Wanted
from tlscope.analyse.fold.graphbreaks import fix_hints, named_reason
from tlscope.format.compiles import (
    CacheOutcome,
    Failure,
    Graph,
    GraphBreak,
    GuardFailure,
    Metrics,
    MetricsRecord,
    PayloadRef,
    SourceLocation,
    TensorInput,
    Timing,
)
from tlscope.format.status import status_from_metrics
from tlscope.model.compile_id import CompileId
from tlscope.model.events import CompilationMetrics, DescribeTensor
from tlscope.model.record import Record

#: compilation_metrics fields copied into `Metrics` (the same names).
METRIC_FIELDS = tuple(name for name in Metrics.__struct_fields__ if name not in ("records", "log_lines"))


class CompileAcc:
    """Facts of one (normalised) compile id."""

    def __init__(self, cid: CompileId) -> None:
        self.cid = cid
        self.events = 0
        self.raw_ranges: list[list[int]] = []
        self.log_first: int | None = None
        self.log_last: int | None = None
        self.stack: list[SourceLocation] = []
        self.function: SourceLocation | None = None
        #: The module class torch's wrapper `inner` compiled (CompileEntry.module), from its guards.
        self.module: str | None = None
        #: The class of `L['self']` its guards name (a method's class, CompileEntry.module when the
        #: compiled function is a method: decided with the function, at the end).
        self.self_class: str | None = None
        #: The compiled module's repeated blocks (analyse/fold/blocks.py), from its guards.
        self.blocks: Blocks | None = None
        self.graph_breaks: list[GraphBreak] = []
        self.restart_reasons: list[str] = []
        self.recompile_reason: str | None = None
        self.recompile_event: PayloadRef | None = None
        self.guard_failures: list[GuardFailure] = []
        self.failure: Failure | None = None
        self.traceback: PayloadRef | None = None
        #: The user frame of the `dynamo_error` traceback (`from user code:`), with name and code.
        self.error_frame: SourceLocation | None = None
        self.cache: list[CacheOutcome] = []
        self.metrics: Metrics | None = None
        #: Every metrics record (forward, backward, runtime), in log order.
        self.records: list[MetricsRecord] = []
        #: A forward record without `fail_type` came after a failed one: the id's last compile
        #: (after torch._dynamo.reset() renumbered compiles) worked, so its status is not `failed`.
        self.recovered = False
        self.graphs: list[Graph] = []
        #: Inductor's collective schedules (`inductor_collective_schedule`), in log order.
        self.schedules: list[list[str]] = []
        self.code: list[PayloadRef] = []
        self.guards: PayloadRef | None = None
        self.inputs: dict[str, TensorInput] = {}
        #: The recompiling call's values that this compile logged, for its failed guards' `actual`
        #: (analyse/fold/callvalues.py): only those of sources a guard failure names, so a few.
        self.call_values: Values = {}
        #: Those of `call_values` this compile made a symbol of (automatic dynamic: an int or a
        #: float whose value changed is traced as a dynamic value from this compile on).
        self.symbolic: set[Wanted] = set()
        self.pending_tensors: dict[tuple[int | None, int | None], DescribeTensor] = {}
        #: The API of the fullgraph capture this compile was (analyse/fold/capture.py), else None.
        self.capture: str | None = None
        #: A capture's time, from its last metrics record's start and end (it has no `dynamo` span).
        self.capture_time: Timing | None = None

    def count(self, record: Record, raw_line: int | None) -> None:
        self.events += 1
        self.seen(record)
        if raw_line is None:
            return
        if self.raw_ranges and self.raw_ranges[-1][1] == raw_line - 1:
            self.raw_ranges[-1][1] = raw_line
        else:
            self.raw_ranges.append([raw_line, raw_line])

    @property
    def log_lines(self) -> list[int]:
        """compiles.json's `log_lines`: the first and last input-log line of its records, if any."""
        return [self.log_first, self.log_last] if self.log_first is not None and self.log_last is not None else []

    def seen(self, record: Record) -> None:
        """Widen `log_lines` to `record` (an event of its own, or one read as its compile's)."""
        self.log_first = record.line if self.log_first is None else self.log_first
        self.log_last = record.line

    def add_metrics(self, record: Record, metrics: CompilationMetrics) -> None:
        """Keep one metrics record; `metrics` holds the numbers of the last forward one.

        The numbers are never merged across records: a failed compile's times must not be read as
        those of the compile after it, nor a backward record's Inductor time as the forward's.
        """
        forward = record.key == "compilation_metrics"
        failure = None if metrics.fail_type is None else failure_of(metrics.fail_type, metrics.fail_reason, metrics)
        self.records.append(
            MetricsRecord(
                kind=record.key,
                log_line=record.line,
                status=record_status(metrics, forward),
                time_s=record_seconds(metrics),
                failure=failure,
                co_name=metrics.co_name,
                co_filename=metrics.co_filename,
                co_firstlineno=metrics.co_firstlineno,
            )
        )
        kept = self.metrics
        if kept is None or forward or not any(r.kind == "compilation_metrics" for r in self.records[:-1]):
            kept = Metrics(
                **{name: getattr(metrics, name, None) for name in METRIC_FIELDS},
                records=kept.records if kept else 0,
                log_lines=kept.log_lines if kept else [],
            )
        kept.records += 1
        kept.log_lines.append(record.line)
        self.metrics = kept
        self._outcome(failure, forward)
        for reason in metrics.restart_reasons or ():
            if reason not in self.restart_reasons:
                self.restart_reasons.append(reason)
        if metrics.recompile_reason is not None and self.recompile_reason is None:
            self.recompile_reason = metrics.recompile_reason
        if metrics.co_name is not None and self.function is None:
            self.function = SourceLocation(file=metrics.co_filename, line=metrics.co_firstlineno, name=metrics.co_name)

    def _outcome(self, failure: Failure | None, forward: bool) -> None:
        """The first failure is kept; a later forward compile that worked makes the id recovered."""
        if failure is not None:
            if self.failure is None:
                self.failure = failure
            if forward:
                self.recovered = False
        elif forward and self.failure is not None:
            self.recovered = True

    def describe_source(self, describer: int | None, tensor_id: int | None, source: str | None) -> None:
        tensor = self.pending_tensors.pop((describer, tensor_id), None)
        if tensor is None or source is None or source in self.inputs:
            return
        self.inputs[source] = TensorInput(
            source=source,
            dtype=tensor.dtype,
            device=tensor.device,
            size=tensor.size,
            stride=tensor.stride,
            # describe_tensor leaves requires_grad out when it is False.
            requires_grad=bool(tensor.requires_grad),
            # A list shared with equal tensors when the fold's Shared made `tensor` (never changed).
            marked_dynamic=tensor.dynamo_dynamic_indices if tensor.dynamo_dynamic_indices is not None else [],
        )


def failure_of(fail_type: str, fail_reason: str | None, metrics: CompilationMetrics | None) -> Failure:
    frame = None
    if metrics is not None and (metrics.fail_user_frame_filename is not None or metrics.fail_user_frame_lineno):
        frame = SourceLocation(file=metrics.fail_user_frame_filename, line=metrics.fail_user_frame_lineno)
    reason = (fail_reason or "").strip().splitlines()
    hints, docs_url = fix_hints(reason)
    return Failure(type=fail_type, reason=failure_headline(reason), user_frame=frame, hints=hints, docs_url=docs_url)


def failure_headline(lines: list[str]) -> str:
    """A failure's first line; when it only announces what follows (`backend='inductor' raised:`,
    a line ending in a colon), the next line is the error itself and is joined to it, since
    the announcement alone tells nobody what failed; when a list follows it (a constraint
    violation's `  - You marked L['x'].size()[0] as dynamic but your code specialized it`), its
    first item is what was violated and how to fix it, joined too."""
    if not lines:
        return ""
    first = lines[0]
    following = next((line.strip() for line in lines[1:] if line.strip()), "")
    if following.startswith("- ") and following[2:].strip():
        return f"{first.rstrip()} {following[2:].strip()}"
    raised = _node_error(following)
    if raised:
        return f"{first.rstrip()}: {raised}"
    if not first.rstrip().endswith(":"):
        named = named_reason(first.strip(), lines[1:])
        return (first if named == first.strip() else named) + _then(lines)
    return f"{first.rstrip()} {following}" if following else first


#: How torch's failure text goes on to a second graph break met while handling the first.
_ANOTHER = "*** While handling this graph break, another graph break occurred: ***"


def _then(lines: list[str]) -> str:
    """`; then graph break in loop: torch.compile detected a graph break in a for/while loop. …`:
    the graph break torch met while handling the first, which is what failed the frame (a break
    in a loop runs the whole frame in eager), with torch's explanation of it."""
    at = next((i for i, line in enumerate(lines) if line.strip() == _ANOTHER), None)
    if at is None:
        return ""
    rest = [line.strip() for line in lines[at + 1 :] if line.strip()]
    if not rest:
        return ""
    why = rest[1].removeprefix("Explanation:").strip() if len(rest) > 1 and rest[1].startswith("Explanation:") else ""
    return f"; then {rest[0]}" + (f": {why}" if why else "")


def _node_error(explanation: str) -> str:
    """The error of an FX node Dynamo ran on fake tensors, as its explanation gives it
    (`Explanation: Dynamo failed to run FX node with fake tensors: call_function f(...): got
    RuntimeError('a and b must have same reduction dim...')`) and said as raised
    (`RuntimeError: a and b must ...`); "" for any other line. The failure's first line says only
    `RuntimeError when making fake tensor call`: a shape mismatch in the user's code, a custom op
    without a fake kernel."""
    if not explanation.startswith("Explanation: "):
        return ""
    _, found, error = explanation.partition("): got ")
    name, paren, rest = error.partition("(")
    quote = rest[:1]
    if not found or not paren or not name.isidentifier() or quote not in ("'", '"'):
        return ""
    message = rest[1:].rstrip(".").removesuffix(")").removesuffix(quote)
    return f"{name}: {message}" if message else ""


def record_status(metrics: CompilationMetrics, forward: bool) -> str:
    """The status one metrics record establishes alone (format/status.py); a backward record's
    restarts and op counts are not the frame's, so it says only failed or ok."""
    if not forward:
        return "failed" if metrics.fail_type is not None else "ok"
    return status_from_metrics(metrics)


def record_seconds(metrics: CompilationMetrics) -> float | None:
    """A record's compile time: the frame's, else its span (backward records log only that)."""
    if metrics.entire_frame_compile_time_s is not None:
        return float(metrics.entire_frame_compile_time_s)
    if metrics.duration_us is not None:
        return round(metrics.duration_us / 1e6, 6)
    return None
