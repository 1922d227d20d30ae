"""Compiles whose records torch logs outside any compile id: fullgraph captures and AOT Inductor.

`torch.compile(fn, fullgraph=True).aot_compile(...)` (the ahead-of-time path vLLM compiles its
models with) and strict `torch.export` both trace through Dynamo's `fullgraph_capture`. Only
Dynamo's own trace carries the compile id (`[0/0]`); what follows it inside the capture's
chromium span (AOTAutograd's and Inductor's graphs, the output code, the cache outcomes, the
guards) and the compile's `compilation_metrics` after the span are logged with no compile id.
A log of such a run showed every compile as `metrics_missing` with no time, no output code and
no failure (pytorch/pytorch#169133 asks the same of tlparse).

`Captures` follows the spans and says which compile id an outside record belongs to: inside an
open span, the id Dynamo traced last in it; after the span closed, only the compile's metrics
records, until a compile of its own starts or another capture opens. The records themselves stay
outside in raw.jsonl and the manifest (as torch logged them): compiles.json's entry takes what
they say and names the capture (`capture`: `aot_compile`, `export`, or `fullgraph` when the
stacks do not say which API it was).

AOT Inductor (`torch._inductor.aoti_compile_and_package`, `aot_compile`) compiles an exported program
with no compile id at all: its `compile_fx_aot` chromium span holds the whole compile, its graphs,
wrapper and kernel code and its metrics. `AotiSpans` makes one compile of each span, compiles.json's
`aot_inductor`, with the same rule for the records after the span.
"""

from __future__ import annotations

from tlscope.analyse.fold.compileacc import CompileAcc
from tlscope.analyse.fold.phases import FrameTime
from tlscope.format.json_boundary import chromium_of
from tlscope.model.compile_id import CompileId
from tlscope.model.events import CompilationMetrics
from tlscope.model.lenient import frames_of
from tlscope.model.record import Record

#: The chromium span of a fullgraph capture (torch/_dynamo/convert_frame.py `fullgraph_capture`).
CAPTURE_SPAN = "fullgraph_capture"
#: The chromium span of an AOT Inductor compile (torch/_inductor/compile_fx.py `compile_fx_aot`).
AOTI_SPAN = "compile_fx_aot"
#: AOT Inductor compiles kept (the log is untrusted: a million spans must not make a million accumulators).
MAX_AOTI = 10_000
#: What ran the capture, from the file of a frame on an outside record's stack.
_EXPORT_FILE = "/torch/export/"
_AOT_COMPILE_FILE = "/torch/_dynamo/aot_compile.py"


def capture_api(record: Record) -> str | None:
    """`export` or `aot_compile` when `record`'s envelope stack passes through that API; None
    when it has no stack or names neither."""
    stack = frames_of(record.envelope.get("stack"))
    if not stack:
        return None
    files = [record.frame_filename(frame).replace("\\", "/") for frame in stack]
    if any(_EXPORT_FILE in file for file in files):
        return "export"
    if any(file.endswith(_AOT_COMPILE_FILE) for file in files):
        return "aot_compile"
    return None


def renumbered_why(capture: str | None) -> str:
    """Why one compile id held several compiles, as summary and the report say it: strict export
    numbers its Dynamo traces from [0/0] again for each call; otherwise torch._dynamo.reset() did."""
    if capture == "export":
        return "strict export numbers compile ids from [0/0] again for each call"
    return "ids are numbered again after torch._dynamo.reset()"


class Captures:
    """Where a fullgraph capture's outside records belong (see the module docstring)."""

    __slots__ = ("_open", "apis", "cid", "watching")

    def __init__(self) -> None:
        self._open = False
        #: The compile id the current (or last) capture traced; None when no capture applies.
        self.cid: CompileId | None = None
        #: A span is open or its compile id still takes metrics: `traced` has something to do.
        self.watching = False
        #: Each captured compile id's API, when a record said which.
        self.apis: dict[CompileId, str] = {}

    def traced(self, cid: CompileId) -> None:
        """A record with a compile id: inside a span Dynamo's trace; outside one a compile of its own."""
        if self._open:
            self.cid = cid
        else:
            self.cid, self.watching = None, False

    def outside(self, record: Record) -> CompileId | None:
        """The compile id an outside record belongs to, else None; follows the spans."""
        if record.key == "chromium_event":
            self._span(record)
            return self.cid if self._open else None
        if self.cid is None:
            return None
        if not self._open and not isinstance(record.event, CompilationMetrics):
            return None  # after the span only the compile's metrics are its own
        api = capture_api(record)
        if api is not None:
            self.apis[self.cid] = api
        return self.cid

    def _span(self, record: Record) -> None:
        phase = span_phase(record, CAPTURE_SPAN)
        if phase == "B":
            self._open, self.cid, self.watching = True, None, True
        elif phase == "E":
            self._open = False
            self.watching = self.cid is not None


def span_phase(record: Record, name: str) -> object:
    """A chromium event's `ph` when it is a span named `name`, else None."""
    # The reader's decode (`chromium_of`, inline), as the compile fold reads it.
    value = (record.chromium if record.chromium is not None else chromium_of(record)).value
    if not isinstance(value, dict) or value.get("name") != name:
        return None
    return value.get("ph")


class AotiSpans:
    """One AOT Inductor compile per `compile_fx_aot` span (see the module docstring)."""

    __slots__ = ("_open", "accs", "current", "times")

    def __init__(self) -> None:
        self._open = False
        #: Each compile's accumulator and its phases' spans, in log order.
        self.accs: list[CompileAcc] = []
        self.times: list[FrameTime] = []
        #: The index of the compile the current (or last) span made; None when none applies.
        self.current: int | None = None

    def traced(self) -> None:
        """A record with a compile id: after a span, a compile of its own (its metrics are not the span's)."""
        if not self._open:
            self.current = None

    def target(self, record: Record) -> int | None:
        """The AOT Inductor compile an outside record belongs to, else None; follows the spans."""
        if record.key == "chromium_event":
            self._span(record)
            return self.current if self._open else None
        if self.current is None or (not self._open and not isinstance(record.event, CompilationMetrics)):
            return None  # after the span only the compile's metrics are its own
        return self.current

    def _span(self, record: Record) -> None:
        phase = span_phase(record, AOTI_SPAN)
        if phase == "B":
            self._open = True
            if len(self.accs) >= MAX_AOTI:
                self.current = None
                return
            self.current = len(self.accs)
            self.accs.append(CompileAcc(CompileId()))
            self.times.append(FrameTime())
        elif phase == "E":
            self._open = False
