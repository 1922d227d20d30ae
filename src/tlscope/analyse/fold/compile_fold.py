"""What happened to each compile id: the fold behind compiles.json, `summary`, the report and the API.

`CompileFold.feed(record, raw_line)` takes every Record in log order (with the raw.jsonl line the
format writer gave it, if any); `entries()` returns one `CompileEntry` per compile id. Everything
is derived from typed events; payloads are read while their record passes (graph break reasons,
recompile reasons, cache keys, graph signatures) and never kept. The per-compile state is kept per
frame, and the frames the log has moved past go to a store (analyse/fold/framestore.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from tlscope.analyse.fold.blocks import repeated_blocks
from tlscope.analyse.fold.break_fixes import COMPILED_AUTOGRAD_ON
from tlscope.analyse.fold.callvalues import (
    Wanted,
    guard_codes,
    guard_values,
    method_class,
    value_key,
    wanted_of,
    wrapped_module,
)
from tlscope.analyse.fold.capture import AotiSpans, Captures
from tlscope.analyse.fold.compileacc import CompileAcc, failure_of
from tlscope.analyse.fold.dynamic import CHROMIUM_NAMES as DYNAMIC_NAMES
from tlscope.analyse.fold.dynamic import PROFILE_ARTIFACTS, DynamicFold
from tlscope.analyse.fold.exports import EXPORT_KEYS, ExportFold, outside_compiles
from tlscope.analyse.fold.framestore import FrameStore, HeldFrames, LiveFrames, frame_of_id, frame_order
from tlscope.analyse.fold.graphbreaks import parse_graph_break
from tlscope.analyse.fold.graphs import (
    BIG_GRAPH,
    GRAPH_ARTIFACTS,
    GRAPH_KEYS,
    busiest_line,
    graph_collectives,
    graph_shape,
)
from tlscope.analyse.fold.guards import (
    dynamo_error_frame,
    error_user_frame,
    guard_failure,
    is_torch_bare_reason,
    reason_texts,
)
from tlscope.analyse.fold.phases import ChromiumSpan, FrameTime, frame_key, phase_name
from tlscope.analyse.fold.refs import payload_ref
from tlscope.analyse.fold.settings import SettingsFold
from tlscope.analyse.fold.shared import Shared
from tlscope.analyse.fold.symbols import SYMBOL_KEYS, SymbolFold
from tlscope.analyse.fold.usercode import UserCode
from tlscope.analyse.fold.vllm import VLLM_NAMED, VllmFold
from tlscope.analyse.tlparse.stack import ResolvedFrame, drop_convert_frame_suffix, resolve_stack
from tlscope.format.compiles import (
    CacheOutcome,
    Graph,
    GraphBreak,
    GraphInput,
    PayloadRef,
    SourceLocation,
    Timing,
    is_torch_wrapper,
)
from tlscope.format.json_boundary import JsonError, chromium_of, decode
from tlscope.model.compile_id import CompileId
from tlscope.model.events import (
    AotAutogradBackwardCompilationMetrics,
    Artifact,
    CompilationMetrics,
    CreateSymbol,
    DescribeSource,
    DescribeStorage,
    DescribeTensor,
    DynamoStart,
)
from tlscope.model.lenient import frames_of
from tlscope.model.record import Record

#: Event keys whose payload is code (generated, or a dump of code).
CODE_KEYS = frozenset({"inductor_output_code", "graph_dump", "dump_file"})
GUARD_KEYS = frozenset({"dynamo_guards", "dynamo_cpp_guards_str"})
_CODE_ARTIFACT = re.compile(r"(^fx_graph_runnable$|_BYTECODE$|^inductor_aot_|_code$)")
_CACHE_ARTIFACT = re.compile(r"^(?P<cache>.+)_cache_(?P<outcome>hit|miss|bypass)$")

#: Reports a problem: (line, message). The fold counts the payloads that contradict their
#: declared encoding (an artifact with `encoding: "json"` that is not JSON).
ProblemSink = Callable[[int, str], None]


class _CachePayload(msgspec.Struct):
    key: str | None = None
    cache_bypass_reason: str | None = None
    reason: str | None = None
    # The compile time a hit saved (the FX graph cache's in ns, AOTAutograd's in ms) and the time a
    # miss's compile took (the FX graph cache's, ns). Any: a value of another type must not cost
    # the key and the reason (a failed decode keeps neither); `_seconds` checks it.
    time_saved_ns: Any = None
    time_saved_ms: Any = None
    time_taken_ns: Any = None


#: What compiles.json keeps of a cache artifact's payload, CacheOutcome's fields: key, reason,
#: time_saved_s, time_taken_s (a plain tuple: a NamedTuple class costs ~0.3 ms at every start).
CacheFields = tuple["str | None", "str | None", "float | None", "float | None"]


def _seconds(value: Any, per_second: float) -> float | None:
    """A duration logged in `1 / per_second` units as seconds; None unless a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        return None
    return round(value / per_second, 6)


_CACHE_DECODER = msgspec.json.Decoder(_CachePayload)


def _ignore(line: int, message: str) -> None:
    pass


class CompileFold:
    """Folds a log's records into per-compile facts; see `entries()` (analyse/fold/compileresult.py)."""

    def __init__(
        self,
        problem: ProblemSink = _ignore,
        note: ProblemSink = _ignore,
        user: UserCode | None = None,
        store: FrameStore | None = None,
    ) -> None:
        #: Each frame's compile accumulators, chromium spans (`times`) and, per frame compile
        #: (attempt left out), the Python values its failed guards are about (`wanted`), looked
        #: for in its later guards and symbols (recompile_reasons comes first in a compile).
        self.frames = LiveFrames(store or HeldFrames())
        #: What counts as the user's own code: breaks, guards and failures are attributed to it.
        self.user = user or UserCode()
        self._problem = problem
        #: Known torch quirks (model/problems.py NoteKind): said, never counted as problems.
        self._note = note
        #: Where each dynamic dimension comes from (compiles.json `symbols`).
        self.symbols = SymbolFold(self.user)
        #: Each torch.export call and how it ended (compiles.json `exports`).
        self.exports = ExportFold(self.user)
        #: Which compile a fullgraph capture's records outside any compile id belong to.
        self.captures = Captures()
        #: Each AOT Inductor compile (a `compile_fx_aot` span, no compile id), compiles.json `aot_inductor`.
        self.aoti = AotiSpans()
        #: vLLM's compiles: its config and each piecewise compile (compiles.json `vllm`).
        self.vllm = VllmFold()
        #: What made inputs dynamic on torch's own (compiles.json `dynamic`, symbols' `why`).
        self.dynamic = DynamicFold()
        #: The compiles that ran under other settings than the first (compiles.json `settings`).
        self.settings = SettingsFold()
        #: Equal values kept once (analyse/fold/shared.py): the fold's memory grows with what is distinct.
        self.shared = Shared()
        #: A graph payload's (nodes, inputs) by its MD5: recompiles log the same graphs again.
        self._shapes: dict[str, tuple[int | None, list[GraphInput]]] = {}
        #: A JSON artifact payload's decode error ("" when it is JSON) by its MD5.
        self._json_errors: dict[str, str] = {}
        #: Whether a compile ran with compiled autograd on, which captures a backward called inside
        #: a compiled function: its break there is by design (break_fixes.py).
        self.compiled_autograd = False

    def feed(self, record: Record, raw_line: int | None = None) -> None:
        if self.vllm.watching or record.key in VLLM_NAMED:
            self.vllm.feed(record, raw_line)
        if record.key in SYMBOL_KEYS:
            self.symbols.feed(record)  # outside a compile too (export logs them under none)
        if record.key in EXPORT_KEYS:
            # A strict export's metrics: the capture says which compile id its Dynamo trace was.
            self.exports.feed(record, raw_line, self.captures.cid)
        elif record.key == "artifact" and outside_compiles(record.compile_id):
            self.exports.artifact(record, raw_line)
        if record.key == "str" or record.compile_id is None:
            return
        cid = record.compile_id.normalised()
        state = self.frames.state(frame_of_id(cid))
        acc = state.accs.get(cid)
        if acc is None:
            acc = state.accs[cid] = CompileAcc(cid)
        acc.count(record, raw_line)
        if cid.frame_id is not None or cid.compiled_autograd_id is not None:
            if self.captures.watching:  # most logs have no capture: no call per record
                self.captures.traced(cid)
            if self.aoti.current is not None:
                self.aoti.traced()
        elif self.captures.watching or self.aoti.current is not None or record.key == "chromium_event":
            # Counted among `[-/-]`'s events (raw_lines holds an id's own records), maybe read as
            # a capture's or an AOT Inductor compile's (capture.py).
            routed = self._outside(record)
            if routed is _DONE:
                return
            acc = routed or acc
        event = record.event
        # The event types are disjoint (CompilationMetrics' subclasses aside): the most common
        # records (chromium events, then describe_*) are tested first. Inline, not a call: this
        # runs for every record.
        if record.key == "chromium_event":
            self._chromium(record)
        elif type(event) is DescribeStorage:
            return  # nothing of it is folded
        elif isinstance(event, DescribeTensor):
            acc.pending_tensors[(event.describer_id, event.id)] = self.shared.tensor(event)
        elif isinstance(event, DescribeSource):
            acc.describe_source(event.describer_id, event.id, self.shared.maybe_text(event.source))
        elif isinstance(event, Artifact):
            self._artifact(acc, record, event, raw_line)
        elif isinstance(event, CompilationMetrics):
            self._metrics(acc, record, event)
        elif isinstance(event, AotAutogradBackwardCompilationMetrics):
            if event.fail_type is not None and acc.failure is None:
                acc.failure = failure_of(event.fail_type, event.fail_reason, None)
        elif isinstance(event, DynamoStart):
            self._dynamo_start(acc, record, event)
        elif isinstance(event, CreateSymbol):
            self._symbol(acc, event)
        else:
            self._payload_event(acc, record, raw_line)

    def _metrics(self, acc: CompileAcc, record: Record, event: CompilationMetrics) -> None:
        acc.add_metrics(record, event)
        if event.fail_reason is not None and acc.error_frame is None:
            # No user line in the dynamo_error traceback (a constraint violation is raised in
            # torch's guard code): the reason's `User stack:` block names it.
            acc.error_frame = dynamo_error_frame(event.fail_reason, self.user)
        self.dynamic.metrics(event.compiler_config, event.dynamo_config, acc.cid.display)
        self.settings.feed(acc.cid.display, event)
        if not self.compiled_autograd and event.dynamo_config and COMPILED_AUTOGRAD_ON in event.dynamo_config:
            self.compiled_autograd = True

    def _outside(self, record: Record) -> CompileAcc | None:
        """Where a record outside any compile id is folded: the accumulator of the capture or AOT
        Inductor compile it belongs to, `_DONE` when it was (a chromium span of one), else None."""
        if (captured := self._captured(record)) is not None:
            if record.key == "chromium_event":
                self._chromium(record, _frame(captured.cid))
                return _DONE
            self._capture_record(captured, record)
            return captured
        if (index := self.aoti.target(record)) is None:
            return None
        aoti = self.aoti.accs[index]
        aoti.seen(record)
        if record.key == "chromium_event":
            if (span := _phase_span(record)) is not None:
                self.aoti.times[index].feed(span)
            return _DONE
        self._capture_record(aoti, record)
        return aoti

    def _captured(self, record: Record) -> CompileAcc | None:
        """The compile a fullgraph capture's record outside any compile id belongs to (capture.py)."""
        cid = self.captures.outside(record)
        if cid is None:
            return None
        acc = self.frames.state(frame_of_id(cid)).accs.get(cid)
        if acc is not None:
            acc.capture = self.captures.apis.get(cid, "fullgraph")
        return acc

    def _capture_record(self, acc: CompileAcc, record: Record) -> None:
        """What a capture's record says that a compile's own records would: its stack (there is
        no dynamo_start) and, for a failure, its user line (no dynamo_error artifact either)."""
        if not acc.stack and (stack := frames_of(record.envelope.get("stack"))):
            acc.stack = _located(resolve_stack(stack, record))
        event = record.event
        if not isinstance(event, CompilationMetrics) or record.key != "compilation_metrics":
            return
        if event.fail_reason and acc.error_frame is None:
            acc.error_frame = dynamo_error_frame(event.fail_reason, self.user)
        start, end = event.start_time_us, event.end_time_us
        if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end >= start:
            # No `dynamo` span (the capture's is outside the compile): the record's own times
            # are the capture's, the backend included.
            acc.capture_time = Timing(
                start_us=start, end_us=end, duration_s=round((end - start) / 1e6, 6), source="compilation_metrics"
            )

    @property
    def accs(self) -> dict[CompileId, CompileAcc]:
        """Every compile id's accumulator, the stored frames' read back (tests; a small log's)."""
        found: dict[CompileId, CompileAcc] = {}
        for frame in sorted({*self.frames.store.frames(), *self.frames.live_frames()}, key=frame_order):
            state = self.frames.peek(frame)
            found.update(state.accs if state is not None else {})
        return found

    def _wanted(self, acc: CompileAcc) -> dict[CompileId, set[Wanted]]:
        """The values wanted per frame compile of `acc`'s frame (being fed, so live)."""
        return self.frames.state(frame_of_id(acc.cid)).wanted

    def _payload_event(self, acc: CompileAcc, record: Record, raw_line: int | None) -> None:
        if record.key in GRAPH_KEYS:
            acc.graphs.append(self._graph(record, record.key, raw_line))
        elif record.key in CODE_KEYS:
            acc.code.append(payload_ref(record, record.key, raw_line))
        elif record.key in GUARD_KEYS:
            acc.guards = payload_ref(record, record.key, raw_line)
            if acc.module is None and record.payload is not None:
                if is_torch_wrapper(acc.function):
                    acc.module = wrapped_module(record.payload)
                else:
                    acc.self_class = acc.self_class or method_class(record.payload)
            text = record.payload_text
            self.dynamic.guards(text, acc.cid.display)
            acc.blocks = repeated_blocks(text) or acc.blocks
            wanted = self._wanted(acc).get(_frame(acc.cid))
            if wanted and record.payload is not None:
                acc.call_values.update(guard_values(guard_codes(record.key, record.payload), wanted))

    def _symbol(self, acc: CompileAcc, event: CreateSymbol) -> None:
        """A Python int or float the call changed, made dynamic: its value is the symbol's `val`."""
        if event.source is None or event.val is None:
            return
        want = ("value", value_key(event.source))
        if want in self._wanted(acc).get(_frame(acc.cid), ()):
            acc.call_values.setdefault(want, (event.source, event.val))
            acc.symbolic.add(want)

    def _chromium(self, record: Record, captured: CompileId | None = None) -> None:
        """A phase's span, under its `args.compile_id`, or under `captured` (a fullgraph
        capture's spans outside the compile name none); automatic dynamic shapes' and the PGO
        profile's events (analyse/fold/dynamic.py)."""
        event = _phase_span(record, self._dynamic_event)
        if event is None:
            return
        key = captured or frame_key(event.args.compile_id if event.args is not None else None)
        if key is None:
            key = _autograd_capture(record.compile_id)
            if key is None:
                return
        times = self.frames.state(frame_of_id(key)).times
        # Not setdefault(key, FrameTime()): that built a FrameTime (two dicts) for every event.
        found = times.get(key)
        if found is None:
            found = times[key] = FrameTime()
        found.feed(event)

    def _dynamic_event(self, record: Record, name: str, value: object) -> None:
        args = value.get("args") if isinstance(value, dict) else None
        cid = record.compile_id.normalised().display if record.compile_id is not None else None
        self.dynamic.chromium(name, args, cid)

    def _dynamo_start(self, acc: CompileAcc, record: Record, event: DynamoStart) -> None:
        if acc.stack:
            # An id's first compile's stack, as its function is: after torch._dynamo.reset() one
            # id holds compiles of other functions (their own stacks were the entry's, the last).
            return
        acc.stack = _located(drop_convert_frame_suffix(resolve_stack(event.stack, record)))
        if acc.stack and acc.function is None:
            last = acc.stack[-1]
            acc.function = SourceLocation(file=last.file, line=last.line, name=last.name)
        if acc.cid.compiled_autograd_id is not None and acc.cid.frame_id is not None:
            self._capture_stack(acc.cid.compiled_autograd_id, acc.stack)

    def _capture_stack(self, ca: int, stack: list[SourceLocation]) -> None:
        """A compiled-autograd capture logs no stack; the first compile of its graph does, from the
        user's `loss.backward()` down through compiled autograd's runtime. The capture ran inside
        that same backward call: its stack is the part above compiled autograd's own frames."""
        frame = (ca, None)
        if self.frames.peek(frame) is None:
            return
        cut = next((i for i, f in enumerate(stack) if (f.file or "").endswith(_AUTOGRAD_RUNTIME)), None)
        if not cut:
            return
        for capture in self.frames.state(frame).accs.values():
            capture.stack = capture.stack or stack[:cut]

    def _artifact(self, acc: CompileAcc, record: Record, event: Artifact, raw_line: int | None) -> None:
        name = event.name or ""
        if event.encoding == "json" and name != "recompile_reasons":
            self._check_json(record, name)
        if name == "dynamo_graph_break_reason":
            found = parse_graph_break(record.payload_text, self.user)
            ref = payload_ref(record, name, raw_line)
            acc.graph_breaks.append(
                GraphBreak(
                    reason=found.reason,
                    user_frame=found.user_frame,
                    event=ref,
                    stopped_at=found.stopped_at,
                    stack=found.stack,
                    hints=found.hints,
                    docs_url=found.docs_url,
                    fix=found.fix if found.fix is not None else msgspec.UNSET,
                )
            )
        elif name == "recompile_reasons":
            self._recompile_reasons(acc, record, raw_line)
        elif name == "dynamo_error":
            acc.traceback = payload_ref(record, name, raw_line)
            acc.error_frame = error_user_frame(record.payload_text, self.user)
        elif (match := _CACHE_ARTIFACT.match(name)) is not None:
            acc.cache.append(self._cache(record, match["cache"], match["outcome"], payload_ref(record, name, raw_line)))
        elif name in GRAPH_ARTIFACTS:
            acc.graphs.append(self._graph(record, name, raw_line))
        elif name in PROFILE_ARTIFACTS:
            self.dynamic.artifact(record, name, raw_line, acc.cid.display)
        elif name.startswith(SCHEDULE_ARTIFACT):
            ops = _schedule(record)
            if ops:
                acc.schedules.append(ops)
        elif _CODE_ARTIFACT.search(name):
            acc.code.append(payload_ref(record, name, raw_line))

    def _check_json(self, record: Record, name: str) -> None:
        if record.payload is None:
            return
        md5 = record.payload_md5
        # A payload logged again (each recompile's artifacts, a long job's steps) is decoded once:
        # its verdict, "" when it is JSON, is kept by MD5 (the problem is still said per record).
        error = self._json_errors.get(md5) if md5 is not None else None
        if error is None:
            error = json_error(record.payload, md5)
            if md5 is not None:
                self._json_errors[md5] = error
        if error:
            self._problem(record.line, f"artifact {name!r} declares encoding json but its payload is not JSON: {error}")

    def _recompile_reasons(self, acc: CompileAcc, record: Record, raw_line: int | None) -> None:
        texts, was_json = reason_texts(record.payload or b"")
        if not was_json and is_torch_bare_reason(record.payload or b""):
            self._note(record.line, "artifact 'recompile_reasons' declares encoding json; torch wrote one reason bare")
        elif not was_json:
            self._problem(
                record.line,
                "artifact 'recompile_reasons' declares encoding json but holds plain text (read as one reason)",
            )
        acc.recompile_event = payload_ref(record, "recompile_reasons", raw_line)
        acc.guard_failures = [guard_failure(text, self.user) for text in texts]
        wanted = {w for w in map(wanted_of, acc.guard_failures) if w is not None}
        if wanted:
            self._wanted(acc).setdefault(_frame(acc.cid), set()).update(wanted)

    def _cache(self, record: Record, cache: str, outcome: str, ref: PayloadRef) -> CacheOutcome:
        found = CacheOutcome(cache=cache, outcome=outcome, event=ref)
        fields = cache_fields(record.payload or b"", record.payload_md5)
        if fields is not None:
            found.key, found.reason, found.time_saved_s, found.time_taken_s = fields
        return found

    def _graph(self, record: Record, kind: str, raw_line: int | None) -> Graph:
        ref = payload_ref(record, kind, raw_line)
        nodes, inputs = self._shape(record)
        # A big Dynamo graph only (BIG_GRAPH nodes): what made it big, read from its comments (the
        # payload decoded for it alone: every other graph's text is not).
        big = kind == "dynamo_output_graph" and (nodes or 0) >= BIG_GRAPH
        busiest = busiest_line(record.payload_text, nodes) if big else None
        return Graph(
            kind=ref.kind,
            payload_filename=ref.payload_filename,
            payload_size=ref.payload_size,
            raw_line=ref.raw_line,
            log_line=ref.log_line,
            nodes=nodes,
            inputs=inputs,
            # Dynamo's graph only: what the ranks' comparison reads (analyse/ranks/divergence.py).
            # The bytes are searched first: most graphs call no collective, and are not decoded.
            collectives=graph_collectives(record.payload_text)
            if kind == "dynamo_output_graph" and record.payload is not None and b"c10d_functional" in record.payload
            else [],
            busiest_line=busiest or msgspec.UNSET,
        )

    def _shape(self, record: Record) -> tuple[int | None, list[GraphInput]]:
        """The graph's (nodes, inputs), read once per distinct payload; inputs shared (never changed)."""
        if record.payload is None:
            return None, []
        md5 = record.payload_md5
        found = self._shapes.get(md5) if md5 is not None else None
        if found is None:
            # Another log's of this process (a rank worker's), else read now.
            known = _SHAPES.get(md5) if md5 is not None else None
            nodes, inputs = known if known is not None else graph_shape(record.payload_text)
            found = (nodes, self.shared.graph_inputs(inputs))
            if md5 is not None:
                self._shapes[md5] = found
                _remember(_SHAPES, md5, found)
        return found


#: What a payload gives the fold, by its MD5, kept across the logs one process parses: a job's
#: ranks log the same graphs and JSON artifacts, and a rank worker parses many ranks, so each is
#: read once per worker, not once per rank. A function of the payload's bytes alone (the MD5
#: tlscope computed), never changed once made; bounded (a long job's distinct payloads), then
#: started again. Each fold still keeps its own log's (`_shapes`, `_json_errors`).
T = TypeVar("T")
_SHAPES: dict[str, tuple[int | None, list[GraphInput]]] = {}
_JSON_ERRORS: dict[str, str] = {}
_MEMO_MAX = 1 << 12


def json_error(payload: bytes, md5: str | None) -> str:
    """Why `payload` is not JSON the decode boundary accepts ("" when it is), kept by its MD5 for
    the process: the fold checks every JSON artifact, the report asks again of each stack-trace
    JSON it gives a readable page (after the fold, for the same record), a rank worker's next
    ranks of the same payloads."""
    error = _JSON_ERRORS.get(md5) if md5 is not None else None
    if error is None:
        try:
            decode(payload)
            error = ""
        except JsonError as err:
            error = str(err)
        if md5 is not None:
            _remember(_JSON_ERRORS, md5, error)
    return error


#: The artifact Inductor logs each graph's collectives in, in the order its code runs them.
SCHEDULE_ARTIFACT = "inductor_collective_schedule"
_SCHEDULE = msgspec.json.Decoder(list[str])


def _schedule(record: Record) -> list[str]:
    """A collective schedule artifact's op names; [] when its payload is not a JSON list of
    strings (the JSON check says a payload that is not JSON)."""
    if record.payload is None:
        return []
    try:
        ops: list[str] = decode(record.payload, _SCHEDULE)
    except (JsonError, msgspec.ValidationError):
        return []
    return ops


#: A cache artifact's fields by its payload's MD5, None when it is not the JSON object expected;
#: kept for the process as _SHAPES: a job's ranks log the same cache artifacts (a cache miss's
#: payload is ~50-70 KB of the key's components, every rank's decode and checks of it ~3 % of a
#: rank's instructions).
_CACHE_FIELDS: dict[str, CacheFields | None] = {}


def cache_fields(payload: bytes, md5: str | None) -> CacheFields | None:
    """A cache artifact payload's key, (bypass) reason and times; None when it is not such a JSON object."""
    if md5 is not None and md5 in _CACHE_FIELDS:
        return _CACHE_FIELDS[md5]
    found: CacheFields | None
    try:
        data = decode(payload, _CACHE_DECODER)
        saved = _seconds(data.time_saved_ns, 1e9)
        found = (
            data.key,
            data.cache_bypass_reason or data.reason,
            _seconds(data.time_saved_ms, 1e3) if saved is None else saved,
            _seconds(data.time_taken_ns, 1e9),
        )
    except (JsonError, msgspec.ValidationError):
        found = None
    if md5 is not None:
        _remember(_CACHE_FIELDS, md5, found)
    return found


#: `_outside`'s answer for a record it folded itself.
_DONE = CompileAcc(CompileId())


def _phase_span(record: Record, other: Callable[[Record, str, object], None] | None = None) -> ChromiumSpan | None:
    """A chromium event that is a phase's span (analyse/fold/phases.py), else None; `other` is
    given the events named in dynamic.CHROMIUM_NAMES (name, decoded value)."""
    # The reader's decode (`chromium_of`, inline), which the format writer reads too.
    decoded = record.chromium if record.chromium is not None else chromium_of(record)
    if decoded.error is not None:
        return None  # the format writer counts it (bad_payload_json)
    # Only the phases' spans are kept (two thirds of a rank's events are other spans): their
    # name, read from the value first, spares the others the Struct, the compile id and the
    # frame lookups. A name that is no text is no phase either (the Struct would refuse it).
    value = decoded.value
    name = value.get("name", "") if isinstance(value, dict) else None
    if type(name) is not str or phase_name(name) is None:
        if other is not None and type(name) is str and name in DYNAMIC_NAMES:
            other(record, name, value)
        return None
    try:
        return msgspec.convert(value, ChromiumSpan)
    except msgspec.ValidationError:
        return None


def _located(frames: list[ResolvedFrame]) -> list[SourceLocation]:
    return [SourceLocation(file=f.filename, line=f.line, name=f.name, code=f.loc) for f in frames]


def _remember(memo: dict[str, T], md5: str, value: T) -> None:
    if len(memo) >= _MEMO_MAX:
        memo.clear()
    memo[md5] = value


def _frame(cid: CompileId) -> CompileId:
    """The frame compile of an attempt (analyse/fold/compileresult.py's frame_of, which imports this)."""
    return CompileId(cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, None)


#: Compiled autograd's runtime, which calls the compiled backward graph (its first frame on the stack).
_AUTOGRAD_RUNTIME = "torch/_dynamo/compiled_autograd.py"


def _autograd_capture(cid: CompileId | None) -> CompileId | None:
    """A compiled-autograd capture's key (`[!N/-/-]`): its `compiled_autograd` span names only
    `"!N"` in `args.compile_id`, which is no frame compile, so the record's own id says which."""
    if cid is None or cid.compiled_autograd_id is None or cid.frame_id is not None:
        return None
    return CompileId(cid.compiled_autograd_id, None, None, None)
