"""compiles.json: one entry per compile id saying what happened to it, and the distinct graph breaks.

These Structs are the file's schema (docs/schema/compiles.schema.json is generated from them) and
what the analyses in analyse/fold/compile_fold.py return; `tlscope.load`, `tlscope summary` and the report
read the same objects. FORMAT.md section "compiles.json" documents every field.
"""

# No `from __future__ import annotations`: msgspec reads these Structs' annotations when it
# first converts or decodes one (the report reads compiles.json's entries back), and typing compiles each string
# annotation there (~20M instructions, 3 % of a small log's run; bench/README.md, session 9).
from collections.abc import Sequence
from typing import Any

import msgspec

from tlscope.format.logsize import LogSize
from tlscope.format.status import STATUS_ORDER

#: How a guard failure is classified (`GuardFailure.kind`).
GUARD_KINDS: dict[str, str] = {
    "size": "a tensor's size on one dimension differs",
    "stride": "a tensor's stride on one dimension differs (e.g. a transposed or sliced input)",
    "rank": "a tensor's number of dimensions differs",
    "dtype": "a tensor's dtype differs",
    "device": "a tensor's device differs",
    "requires_grad": "a tensor's requires_grad differs",
    "dispatch_keys": "a tensor's dispatch keys differ (device, autograd, autocast, subclass…)",
    "grad_mode": "grad mode differs (torch.no_grad / torch.enable_grad around the call), and nothing else of "
    "torch's global state",
    "global_state": "other global torch state differs, or grad mode with more (autocast, deterministic algorithms, "
    "the number of threads…): `subject` lists the parts as torch names them. Since 1.45 (before, `grad_mode` "
    "when grad mode was one of them)",
    "dynamic_range": "a dynamic size is outside the range the graph was compiled for (e.g. 0 or 1, "
    "which are always specialised)",
    "dim_marking": "an input was marked dynamic (mark_dynamic) after the entry was compiled, or the reverse",
    "value": "a Python value the code depends on (an int, a string, a bool…) differs",
    "value_range": "a dynamic Python value (an int or float Dynamo made a symbol) is outside a condition "
    "the entry's code tested on it (`if z > 0:`): the guard `___stack0 <= 0.0`. Since 1.44 (before, `other`)",
    "global": "a global variable the code reads differs",
    "length": "the length of a list, tuple or dict differs",
    "identity": "a different object (or function, or module) is passed where the entry saw another",
    "dict_key": "a dict has a key the entry was compiled without, or lacks one it was compiled with "
    "(the guard `___dict_contains('y', d)`, from code such as `if \"y\" in d:`); `expected` and `actual` "
    "say `absent` or `present`. Since 1.45 (before, `other`)",
    "attribute": "an object has an attribute the entry was compiled without, or lacks one it was compiled with "
    "(the guard `hasattr(o, 'bias')`); `expected` and `actual` say `absent` or `present`. Since 1.45 (before, `other`)",
    "none": "an argument is None where the entry saw a value, or the reverse (the guards `mask is None`, "
    "`mask is not None`, and a tensor's `expected type of 'mask' to be a tensor type, ' but found <class "
    "'NoneType'>`): an optional argument; `expected` and `actual` say `None` or `not None`. Since 1.45 (before, "
    "`other`)",
    "aliasing": "the call passes one tensor as several inputs the entry was compiled for as distinct tensors "
    '(`Duplicate tensors found: ["a", "b"]`); `subject` lists them. Since 1.45 (before, `other`)',
    "backend": "the function was compiled again by another torch.compile backend (`BACKEND_MATCH`; a new backend "
    "object on each call recompiles each time); `expected` and `actual` name them (`eager`, `aot_eager`). Since 1.45 "
    "(before, `other`)",
    "type": "an input's type differs",
    "other": "a guard tlscope does not classify; `guard` holds its text",
}


class SourceLocation(msgspec.Struct, kw_only=True):
    """A place in user code."""

    file: str | None = None
    line: int | None = None
    #: The function's name.
    name: str | None = None
    #: The source line's text, when the log gives it.
    code: str | None = None


class PayloadRef(msgspec.Struct, kw_only=True):
    """An event with a payload, and where to find both."""

    #: The event key, or for an `artifact` its name.
    kind: str
    #: `payloads/<md5>.txt` (relative to the folder), or null when the event had no payload.
    payload_filename: str | None = None
    payload_size: int | None = None
    #: 1-based line of the event in raw.jsonl (line 1 is the string table).
    raw_line: int | None = None
    #: 1-based line of its envelope in the input log.
    log_line: int
    #: A `graph_dump`'s name (e.g. `inductor_aot_wrapper_code`, `inductor_aot_kernel_code`,
    #: vLLM's `vllm_submod_2`): what a viewer labels the reference with. Absent for other kinds
    #: (msgspec.UNSET here: never written, so no other reference, nor a Graph, changes). Since 1.25.
    name: str | msgspec.UnsetType = msgspec.UNSET


class GraphInput(msgspec.Struct, kw_only=True):
    """One input of a graph, as its readable code declares it."""

    name: str
    #: e.g. `f32[s77, 8][8, 1]cpu`: dtype, sizes (symbols are dynamic), strides, device; or `Sym(s0)`.
    type: str | None = None


class Collective(msgspec.Struct, kw_only=True):
    """A collective a graph calls (`torch.ops._c10d_functional.<op>`), as its code prints it."""

    #: e.g. `all_reduce`, `all_gather_into_tensor`, `reduce_scatter_tensor`, `all_to_all_single`.
    op: str
    #: The result's annotation, e.g. `f32[4, 8][8, 1]cuda:0`; null when not printed.
    tensor: str | None = None
    #: The call's literal arguments in order (reduce op, group name, sizes), e.g. `["'sum'", "'0'"]`;
    #: the tensors it takes are left out.
    args: list[str] = []


class LineNodes(msgspec.Struct, kw_only=True):
    """A source line of a graph and the nodes traced from it. Since 1.49."""

    #: Where, as the graph's `# File:` comment names it (the innermost frame of the nodes' stack).
    file: str
    line: int
    #: The line's code, as the comment quotes it.
    code: str
    #: The graph's nodes (assignment lines) under that line's comments.
    nodes: int


class Graph(PayloadRef, kw_only=True):
    """A graph of this compile (Dynamo's, AOTAutograd's or Inductor's), with its size."""

    #: Values computed in the graph's forward (its assignment lines); null if the payload is not a readable graph.
    nodes: int | None = None
    inputs: list[GraphInput] = []
    #: The collectives Dynamo's graph calls, in order (`dynamo_output_graph` only; since 1.17).
    collectives: list[Collective] = []
    #: Of a Dynamo graph (`dynamo_output_graph`) of BIG_GRAPH (500) nodes or more, the source line
    #: that half or more of its nodes were traced from: one line traced again and again (a Python
    #: loop Dynamo unrolled, or a function called in one), what made the graph big. Absent
    #: otherwise. Since 1.49.
    busiest_line: LineNodes | msgspec.UnsetType = msgspec.UNSET


class TensorInput(msgspec.Struct, kw_only=True):
    """A tensor input as Dynamo saw it (describe_tensor joined with describe_source)."""

    #: Where it comes from, e.g. `L['x']`, `L['self']._modules['fc']._parameters['weight']`.
    source: str
    dtype: str | None = None
    device: str | None = None
    size: list[int | str] | None = None
    stride: list[int | str] | None = None
    requires_grad: bool | None = None
    #: Dimensions compiled as dynamic (a symbol in the Dynamo graph's input annotation).
    dynamic_dims: list[int] = []
    #: Dimensions the user marked dynamic (torch._dynamo.mark_dynamic: describe_tensor's
    #: `dynamo_dynamic_indices`). Since 1.1's second revision; absent in folders written before.
    marked_dynamic: list[int] = []


class Phase(msgspec.Struct, kw_only=True):
    """Time spent in one phase of the compilation, from the chromium events' begin/end pairs."""

    name: str
    seconds: float
    #: How many spans were summed (e.g. one per attempt, or per graph for inductor).
    count: int


class Timing(msgspec.Struct, kw_only=True):
    """When the frame compile ran and how long it took."""

    #: Epoch microseconds of the `dynamo` chromium event's begin and end (Perfetto's clock).
    start_us: float | None = None
    end_us: float | None = None
    #: Wall time of the whole frame compile, every attempt included.
    duration_s: float | None = None
    #: `chromium_event` (the `dynamo` span) or `compilation_metrics` (`entire_frame_compile_time_s`).
    source: str | None = None


#: The fix kinds whose `code` is an instruction in words, not code to paste (FORMAT.md "What to
#: change"): every view says them as they are, where another kind's `code` is a line to add.
INSTRUCTION_KINDS = frozenset({"pass_as_argument", "stack_list", "tensor_lr", "compile_model", "step_outside"})


class Fix(msgspec.Struct, kw_only=True):
    """The one change to the user's code that avoids a recompile (or a specialisation) caused by a
    size, or (since 1.44) by a module's int attribute, or (since 1.46) by a global number, or (since
    1.47) by a list's length, or (since 1.49) by an optimizer's learning rate; or (since 1.49, a
    compile's `time_fix`) that makes a slow compile faster; or (since 1.50, a graph break's `fix`)
    that makes a graph break go away."""

    #: `mark_dynamic`, `maybe_mark_dynamic`, `mark_unbacked`, `change_code`, `dynamic_false`,
    #: (a symbol's) `size_guard`, `unspec_int_on_nn_module`, (since 1.46) `pass_as_argument`, (since
    #: 1.47) `stack_list` or (since 1.48) `recompile_limit` or `dynamic_parameters`, or (since
    #: 1.49) `tensor_lr`, or (since 1.49, a compile's `time_fix`) `regional`, or (since 1.50, a graph
    #: break's) `ignore_logging`, `reorder_logging`, `compile_model`, `step_outside` (FORMAT.md "What to change").
    kind: str
    #: The input, as the compiled function names it (`x`), and as Dynamo names its source (`L['x']`).
    input: str
    source: str
    #: The tensor dimension concerned; null for a value's fix (`unspec_int_on_nn_module`, 1.44).
    dim: int | None = None
    #: The line to add (or the change to make), e.g. `torch._dynamo.mark_dynamic(x, 0)`; since
    #: 1.44 the input named as `where`'s line passes it, when certain (`batch` for `args[0]`).
    code: str
    #: The user's line to put it before: the call that entered the input (null when the log
    #: does not give that call's stack).
    where: SourceLocation | None = None
    #: Why this change, in plain words (and what it costs).
    why: str


class GraphBreak(msgspec.Struct, kw_only=True):
    """One `dynamo_graph_break_reason` artifact: where tracing stopped, and why."""

    #: The reason's headline: the first line of the reason proper (e.g. `Failed to trace builtin operator`).
    reason: str
    #: The innermost frame of the user's own code on the break's stack (not the standard library,
    #: installed packages or torch: FORMAT.md "What is user code"), else where tracing stopped.
    user_frame: SourceLocation
    #: The artifact itself (its payload holds the whole reason, hints and tracebacks).
    event: PayloadRef
    #: Where tracing stopped (`Graph break in user code at FILE:LINE`), when that is not `user_frame`
    #: (library code reached from the user's line). Since 1.7.
    stopped_at: SourceLocation | None = None
    #: The payload's `User code traceback:` frames, outermost first. Since 1.7.
    stack: list[SourceLocation] = []
    #: torch's own fix hints in the payload (its `Hint:` lines, "report an issue to PyTorch" left
    #: out), e.g. `Set torch._dynamo.config.capture_scalar_outputs = True ...`. Since 1.8.
    hints: list[str] = []
    #: torch's page about this break (`For more details ..., please visit:`), if the payload links one. Since 1.8.
    docs_url: str | None = None
    #: What to change so the break goes away (`ignore_logging`, `reorder_logging`, `compile_model`, `step_outside`:
    #: FORMAT.md "What to change: a graph break's fix"); absent when tlscope knows none. Since 1.50.
    fix: Fix | msgspec.UnsetType = msgspec.UNSET


class GuardFailure(msgspec.Struct, kw_only=True):
    """One failed guard of an earlier cache entry, from the `recompile_reasons` artifact."""

    #: The cache entry whose guard failed, display form (e.g. `[0/0]`).
    cache_entry: str
    #: The guard's text as Dynamo logged it, without its trailing source comment.
    guard: str
    #: What kind of change failed it (see the guard kinds in FORMAT.md).
    kind: str
    #: The same in plain words, e.g. `size of x on dim 0 changed: 4 -> 5`.
    explanation: str
    #: The input or variable concerned, e.g. `x`, `G['SCALE_UP']`; null when none is named.
    subject: str | None = None
    #: The value the entry was compiled for, and the one this call had, as Dynamo printed them.
    expected: str | None = None
    actual: str | None = None
    #: The user code the guard came from, when Dynamo logged it.
    user_frame: SourceLocation | None = None


class InputChange(msgspec.Struct, kw_only=True):
    """A difference between this compile's inputs and those of the cache entry it replaces."""

    #: The input, as Dynamo names its source (e.g. `L['x']`).
    input: str
    #: `size`, `stride`, `dtype`, `device`, `requires_grad`, `rank`, `dynamic_dims`, `marked_dynamic`,
    #: `presence`; or, for a Python value whose new value the log holds, `value` or `length`, and
    #: `dynamic` (`static` -> `dynamic`) when the new compile made that value dynamic. Since 1.46 a
    #: float's tensor input `___as_tensor(L['s'])` is said as `dynamic` of `L['s']`, not `presence`.
    what: str
    before: str | None
    after: str | None
    #: The input as the compiled function's code names it (`x`, `self.fc.weight`; a resume
    #: function's `___stack0` as the value its graph break left on the stack): what every view
    #: says. Since 1.47 (absent before: read as `input`).
    name: str | msgspec.UnsetType = msgspec.UNSET

    def said(self) -> str:
        """The input as the code names it (`name`), else as Dynamo does (an older file)."""
        return self.name if isinstance(self.name, str) else self.input


class RecommendedFailure(msgspec.Struct, kw_only=True):
    """Which guard failure explains a recompile best (FORMAT.md "Which failure is the cause")."""

    #: Its position in `guard_failures`.
    index: int
    #: Why it was chosen over `guard_failures[0]`, in plain words.
    why: str


class Recompile(msgspec.Struct, kw_only=True):
    """Why this compile id exists although its frame was compiled before."""

    #: `compilation_metrics.recompile_reason` verbatim: the first guard failure Dynamo reported.
    reason: str | None = None
    #: Each earlier cache entry and the guard of it that failed (newest entry first, as Dynamo checks them).
    guard_failures: list[GuardFailure] = []
    #: The guard failure to show first, and why (null with no guard failures). Since 1.9.
    recommended: RecommendedFailure | None = None
    #: The cache entry this compile is compared with, display form: the `recommended` failure's
    #: (the closest; since 1.44, before always the newest).
    compared_with: str | None = None
    #: How this compile's inputs differ from that entry's (from describe_tensor and the graphs' inputs).
    changes: list[InputChange] = []
    #: The `recompile_reasons` artifact, when logged.
    event: PayloadRef | None = None
    #: When the recompile is caused by a size (the recommended failure's kind is `size`,
    #: `dynamic_range` or `dim_marking`): the one change that avoids it. Since 1.10; since 1.44
    #: also when a module's int attribute recompiled its frame again and again.
    fix: Fix | None = None

    def shown_failure(self) -> GuardFailure | None:
        """The guard failure every answer shows first: `recommended`'s, else the newest entry's (a
        folder written before 1.9, or a damaged index); None without guard failures."""
        failures, chosen = self.guard_failures, self.recommended
        if chosen is not None and 0 <= chosen.index < len(failures):
            return failures[chosen.index]
        return failures[0] if failures else None

    def explanation(self) -> str | None:
        """Why it recompiled in plain words, one rule for summary, diff and the ranks' divergence:
        the shown failure's explanation, else `reason` (Dynamo's, verbatim)."""
        shown = self.shown_failure()
        return shown.explanation if shown is not None else self.reason


class Failure(msgspec.Struct, kw_only=True):
    """Why a compilation failed (compilation_metrics `fail_*` fields)."""

    type: str
    #: The first line of `fail_reason` (the whole text is in the metrics event); since 1.44, a
    #: first line ending in a colon (`backend='inductor' raised:`) has the error, its next line, joined,
    #: and one followed by a list (a constraint violation's) that list's first item.
    reason: str
    user_frame: SourceLocation | None = None
    #: The `dynamo_error` artifact (its payload is the traceback), when logged.
    traceback: PayloadRef | None = None
    #: torch's own fix hints in `fail_reason` (its `Hint:` lines, "report an issue to PyTorch" left
    #: out), e.g. the recompile limit's `consider increasing torch._dynamo.config.recompile_limit`,
    #: and its page about the error, as a graph break's `hints` and `docs_url`. Since 1.12.
    hints: list[str] = []
    docs_url: str | None = None


class CacheOutcome(msgspec.Struct, kw_only=True):
    """One cache lookup of this compile (an artifact named `<cache>_cache_<outcome>`)."""

    #: e.g. `fx_graph`, `aotautograd`, `fx_graph_bundled`, `dynamo`, `precompile`.
    cache: str
    #: `hit`, `miss` or `bypass`.
    outcome: str
    #: The cache key, when the payload gives it.
    key: str | None = None
    #: Why the cache was bypassed, when it was and the payload says.
    reason: str | None = None
    event: PayloadRef
    #: A hit: the compile time it saved, as the payload says (the FX graph cache's `time_saved_ns`,
    #: AOTAutograd's `time_saved_ms`, whose count includes the Inductor compile an FX graph hit
    #: inside it saved too). Null when not logged. Since 1.26.
    time_saved_s: float | None = None
    #: A miss: the time its compile took (the FX graph cache's `time_taken_ns`: Inductor's compile
    #: of the graph, which a later hit of the same key saves). Null when not logged. Since 1.26.
    time_taken_s: float | None = None


class MetricsRecord(msgspec.Struct, kw_only=True):
    """One metrics record of a compile id: one compilation PyTorch measured, forward or backward.

    A compile id holds several when torch._dynamo.reset() made PyTorch number compiles from
    `[0/0]` again, and when AOTAutograd compiled the backward (`bwd_compilation_metrics`).
    """

    #: The event key: `compilation_metrics`, `bwd_compilation_metrics`, or their `_runtime` forms.
    kind: str
    #: 1-based input-log line of the record.
    log_line: int
    #: The status vocabulary applied to this record alone: `failed` (`fail_type`), `graph_break`
    #: (`restart_reasons`), `empty` (no ops, or no guarded code), else `ok`.
    status: str
    #: Seconds: `entire_frame_compile_time_s`, or `duration_us` / 1e6 when that is absent (a
    #: backward record logs no frame time); null when neither was logged.
    time_s: float | None = None
    failure: Failure | None = None
    #: The compiled function's name (`co_name`) as this record logged it, if it did: after
    #: torch._dynamo.reset() one id can hold compiles of different functions. Since 1.24.
    co_name: str | None = None
    #: Where that function is defined (`co_filename`, `co_firstlineno`), as the record logged it:
    #: compile time is told per function with them when one id held several. Since 1.27.
    co_filename: str | None = None
    co_firstlineno: int | None = None


class Metrics(msgspec.Struct, kw_only=True):
    """The numbers of the compile id's last forward `compilation_metrics` record (else its last record)."""

    entire_frame_compile_time_s: float | None = None
    backend_compile_time_s: float | None = None
    inductor_compile_time_s: float | None = None
    code_gen_time_s: float | None = None
    dynamo_time_before_restart_s: float | None = None
    guard_count: int | None = None
    shape_env_guard_count: int | None = None
    graph_op_count: int | None = None
    graph_node_count: int | None = None
    graph_input_count: int | None = None
    cache_size: int | None = None
    accumulated_cache_size: int | None = None
    has_guarded_code: bool | None = None
    #: How many metrics records the compile id has, of every kind (`metrics_records` lists them).
    records: int = 0
    #: 1-based log lines of those records.
    log_lines: list[int] = []


class CompileEntry(msgspec.Struct, kw_only=True):
    """One compile id: did it work, and what did it produce."""

    #: Display form, as manifest `compile_ids[].id`.
    id: str
    #: Folder form, as manifest `compile_ids[].dir`.
    dir: str
    #: One of the status vocabulary (FORMAT.md): failed, restarted, graph_break, empty, cache_hit, ok,
    #: metrics_missing, outside.
    status: str
    #: The attempt-0 id of this frame compile (e.g. `[0/1]` for `[0/1_2]`); the same as `id` for attempt 0.
    frame_compile: str
    #: The next attempt, when this one was restarted.
    restarted_as: str | None = None
    #: True when the frame was compiled before (frame_compile_id > 0): see `recompile`.
    is_recompile: bool = False
    #: The compiled function: from compilation_metrics (`co_name`, `co_filename`, `co_firstlineno`) or
    #: the last frame of `dynamo_start`'s stack.
    function: SourceLocation | None = None
    #: The user stack that reached the compiled frame, outermost first (dynamo_start, file names resolved).
    stack: list[SourceLocation] = []
    #: The innermost frame of `stack` in the user's own code (FORMAT.md "What is user code"): the
    #: compiled function itself when it is the user's, else the user's line that led into the
    #: library code compiled (DDP's forward, a contextlib helper). Since 1.7.
    user_frame: SourceLocation | None = None
    #: Timing of the frame compile; given on the attempt holding the metrics (the last one).
    time: Timing | None = None
    #: Time per phase (dynamo tracing, AOT, inductor, codegen…), on the same entry as `time`.
    phases: list[Phase] = []
    graph_breaks: list[GraphBreak] = []
    #: compilation_metrics `restart_reasons`: why the attempt before this one was restarted.
    restart_reasons: list[str] = []
    recompile: Recompile | None = None
    failure: Failure | None = None
    cache: list[CacheOutcome] = []
    metrics: Metrics | None = None
    #: Every metrics record of this id, in log order, each with its own status, time and failure.
    metrics_records: list[MetricsRecord] = []
    #: The tensor inputs of the frame, as Dynamo saw them for this compile.
    inputs: list[TensorInput] = []
    graphs: list[Graph] = []
    #: Generated code and other code-like payloads (inductor_output_code, fx_graph_runnable, bytecode…).
    code: list[PayloadRef] = []
    #: The guards installed (dynamo_guards / dynamo_cpp_guards_str).
    guards: PayloadRef | None = None
    #: Events of this compile id (as manifest `compile_ids[].events`: chromium events included).
    events: int = 0
    #: raw.jsonl line ranges `[first, last]` (inclusive) holding its events, in file order.
    raw_lines: list[list[int]] = []
    #: First and last 1-based line of its envelopes in the input log.
    log_lines: list[int] = []
    #: `aot_compile`, `export` or `fullgraph`: a fullgraph capture (torch.compile(...).aot_compile,
    #: strict torch.export) whose backend events and metrics torch logged outside any compile id,
    #: read here as this compile's; null for every other compile. Since 1.20.
    capture: str | None = None
    #: Each collective schedule Inductor logged for this compile (`inductor_collective_schedule`,
    #: a JSON list of op names, in order: what its compiled code runs), in log order; absent when
    #: it logged none (msgspec.UNSET: a compile without one is written as before). Since 1.34.
    collective_schedules: list[list[str]] | msgspec.UnsetType = msgspec.UNSET
    #: The nn.Module class whose forward this compile traced when `function` is torch's wrapper
    #: `inner` (torch/_dynamo/external_utils.py): torch.compile of a torch.nn built-in module
    #: (`nn.Sequential`) compiles that wrapper, as of an FSDP-managed module or under
    #: `wrap_top_frame`; read from the guards on the wrapper's `fn`. The class's name, not its
    #: module path (`Sequential`); absent otherwise. Since 1.46. Since 1.47 also `CompiledAutogradN`,
    #: torch's name for compiled autograd's backward graph, for a compile of that graph (`[!N/F/C]`),
    #: and the class of `self` when `function` is a method (`Block` of `Block.forward`), read from
    #: the guards on `L['self']` (of this compile, or of another of the same function).
    module: str | msgspec.UnsetType = msgspec.UNSET
    #: The phases (`phases`' names) a compile with no metrics record was still in when the log
    #: ended, outermost first (`["dynamo", "compile_attempt", "backend_compile", "inductor_compile"]`):
    #: torch logs a compile's metrics when it ends, failed or not, so the process stopped (killed,
    #: out of memory, a crash) or the log was cut while it compiled. Absent otherwise. Since 1.48.
    unfinished: list[str] | msgspec.UnsetType = msgspec.UNSET
    #: The change that makes this compile itself faster, for a compile of at least a second
    #: (analyse/headline.py's SLOW_S, its backward counted): kind `regional` (FORMAT.md "What to
    #: change"), compile each of the module's repeated blocks instead of the whole. Absent
    #: otherwise. Since 1.49.
    time_fix: Fix | msgspec.UnsetType = msgspec.UNSET
    #: The seconds AOTAutograd took compiling this compile's backward, at the first backward call
    #: (its `bwd_compilation_metrics` records' `time_s`, summed), after `time`'s span: the
    #: compile's time is both, as every view counts it. Absent when none was logged. Since 1.49.
    backward_s: float | msgspec.UnsetType = msgspec.UNSET

    def function_name(self) -> str | None:
        """The compiled function as said: `Sequential.forward` for a module compiled through
        torch's wrapper, `Block.forward` for a method, else `function.name`."""
        fn = self.function
        if isinstance(self.module, str):
            own = fn is not None and fn.name and not is_torch_wrapper(fn)
            return f"{self.module}.{fn.name if own and fn is not None else 'forward'}"
        return fn.name if fn is not None and fn.name else None

    def said_function(self) -> SourceLocation | None:
        """`function` with the name every view says (`function_name()`: `Block.forward`,
        `Sequential.forward` for torch's wrapper `inner`); `function` itself without a `module`."""
        fn = self.function
        if fn is None or not isinstance(self.module, str):
            return fn
        return msgspec.structs.replace(fn, name=self.function_name())


#: The frame torch compiles for a module's forward it would not otherwise see (`inner`, of
#: external_utils.py's `wrap_inline`): a torch.nn built-in module (`nn.Sequential`), an FSDP-managed one.
WRAPPER_FILE = "torch/_dynamo/external_utils.py"


def is_torch_wrapper(function: SourceLocation | None) -> bool:
    """Whether a compiled function is torch's wrapper `inner`, which names no module."""
    if function is None or function.name != "inner" or function.file is None:
        return False
    return function.file.replace("\\", "/").endswith(WRAPPER_FILE)


class DistinctGraphBreak(msgspec.Struct, kw_only=True):
    """Graph breaks with the same reason headline at the same user location."""

    reason: str
    user_frame: SourceLocation
    #: Where tracing stopped, when that is library code reached from `user_frame` (the first such
    #: break's; see GraphBreak). Since 1.7.
    stopped_at: SourceLocation | None = None
    #: How many `dynamo_graph_break_reason` artifacts have this (reason, location).
    count: int
    #: The compile ids they were logged under, in log order (repeated when a compile id broke there twice).
    compile_ids: list[str]
    #: torch's fix hints and docs page, as in GraphBreak (the first such break's). Since 1.8.
    hints: list[str] = []
    docs_url: str | None = None
    #: The first such break's fix, as in GraphBreak. Since 1.50.
    fix: Fix | msgspec.UnsetType = msgspec.UNSET


class Specialization(msgspec.Struct, kw_only=True):
    """A `symbolic_shape_specialization` event: the symbol was replaced by a constant."""

    value: str | None = None
    #: torch's reason, e.g. `Eq(s0, 3)` or the guard that forced it.
    reason: str | None = None
    #: The user line whose code forced it (the innermost user frame of its `user_stack`).
    user_frame: SourceLocation | None = None
    #: What to change so the size is not specialised (`change_code` or `dynamic_false`), for a
    #: dimension of an input; null otherwise. Since 1.15.
    fix: Fix | None = None


class Symbol(msgspec.Struct, kw_only=True):
    """A symbolic size or int of a compile (`create_symbol`, `create_unbacked_symbol`): where it
    comes from and what constrains it (FORMAT.md "Where a dynamic dimension comes from")."""

    #: The compile id it was created under (display form); null outside a compile (export).
    compile_id: str | None = None
    #: `s77`, `u0`...: names are reused by every compile, so (compile_id, symbol) is the key.
    symbol: str
    #: `backed` (a dynamic size or int with a value at compile time) or `unbacked` (data-dependent).
    kind: str = "backed"
    #: Dynamo's source, e.g. `L['x'].size()[0]`, `L['k']`; null for an unbacked symbol.
    source: str | None = None
    #: The input's source (`L['x']`), its name in the compiled function (`x`), and the dimension
    #: (null for an int input), read from `source`.
    input_source: str | None = None
    input: str | None = None
    dim: int | None = None
    #: `size`, `stride`, `storage_offset` or `value` (an int input); null when unknown.
    what: str | None = None
    #: The value it had when created (`val`), and its value range (`vr`, e.g. `[2, int_oo]`).
    value: str | None = None
    range: str | None = None
    #: The user line that passed the input: the innermost user-code frame of the event's Python
    #: `stack` (the call of the compiled function).
    entered_at: SourceLocation | None = None
    #: The line of the compiled code being traced when it was created (innermost user frame of `user_stack`).
    traced_at: SourceLocation | None = None
    specializations: list[Specialization] = []
    #: Shape guards on it (`guard_added_fast` / `guard_added` expressions naming it), distinct, in log order.
    guards: list[str] = []
    #: How many distinct guards there were (`guards` keeps the first 20).
    guard_count: int = 0
    #: Compile ids whose recompile reason is a guard of this symbol's compile on its source
    #: (e.g. `2 <= x.size()[0]` failed for a size 1).
    failed_in: list[str] = []
    #: A dimension of an input not specialised but guarded (`guards`): kind `size_guard`, the line
    #: traced when its first guard was added, where a size outside the guard compiles again; null
    #: otherwise. Since 1.15.
    fix: Fix | None = None
    #: An unbacked symbol made again by torch's later passes (AOTAutograd's and Inductor's retraces
    #: of the graph), with no user line of its own: the symbol of this compile it stands for (the
    #: one made by the same operator with a user line, `u0` for `u2`); null otherwise. Since 1.18.
    retrace_of: str | None = None
    #: Why a size or an int input is dynamic: `marked` (mark_dynamic), `maybe_marked`
    #: (maybe_mark_dynamic, since 1.32), `dynamic_shapes` (a strict torch.export's dynamic_shapes,
    #: since 1.32), `configured` (TORCH_COMPILE_DYNAMIC_SOURCES),
    #: `all_dynamic` (dynamic=True, since 1.32), `automatic` (a call changed it in this run),
    #: `profile` (a PGO profile read at the start), `data_dependent` (an unbacked symbol a
    #: data-dependent operator made, `op`; since 1.39); null when the log does not say (a stride, an
    #: unbacked symbol of another origin). Since 1.29.
    why: str | None = None
    #: The data-dependent operator whose output an unbacked symbol is, as a user calls it: `item`
    #: (a tensor's value: `.item()`, `.tolist()`, `int(t)`), `nonzero`, `unique`, `masked_select`,
    #: `repeat_interleave`, `new_dynamic_size` (a custom op's fake kernel)..., torch's fake kernel's
    #: own name when tlscope has no other; null for a backed symbol and when no fake kernel made it.
    #: Since 1.39.
    op: str | None = None


class ShapeCell(msgspec.Struct, kw_only=True):
    """One graph input in one compile of a frame, and what changed since the compile before."""

    compile_id: str
    #: As the Dynamo graph's annotation prints it: dtype (`f32`), sizes (a symbol is dynamic), strides.
    dtype: str | None = None
    shape: list[str] | None = None
    stride: list[str] | None = None
    #: The call's concrete sizes (`describe_tensor`), when the input is a tensor Dynamo described.
    sizes: list[int | str] | None = None
    #: Dimensions whose size (or stride) differs from the previous compile's; whether the dtype does;
    #: `absent` when the input is not in this compile's graph.
    changed_dims: list[int] = []
    changed_strides: list[int] = []
    dtype_changed: bool = False
    absent: bool = False
    #: The compile id whose recompile explains the change (this one), and the dimension the
    #: recompile's recommended guard failure names for this input (null when it names none): of a
    #: size (or a dynamic size's range) in `reason_dim`; of a stride in `reason_stride` (since 1.48;
    #: before, a stride's dimension was in `reason_dim` too).
    recompile: str | None = None
    reason_dim: int | None = None
    reason_stride: int | None = None


class InputShapes(msgspec.Struct, kw_only=True):
    #: The graph input's name (`L_x_`) and Dynamo's source (`L['x']`) when it is the frame's tensor input.
    name: str
    source: str | None = None
    cells: list[ShapeCell]


class FrameShapes(msgspec.Struct, kw_only=True):
    """Did the sizes change? A frame compiled more than once, its graphs' inputs per compile."""

    #: The frame's first compile id (display, e.g. `[0/0]`), and its function.
    frame: str
    function: SourceLocation | None = None
    #: The compile ids with a Dynamo graph, in order (the columns).
    compile_ids: list[str]
    inputs: list[InputShapes]


class ExportSymbol(msgspec.Struct, kw_only=True):
    """A symbol an export issue's expression names, and where the user's code made it."""

    #: `u0`, `s77`.
    symbol: str
    #: The user's name for it at the issue's line (a local holding it, e.g. `k` for `k = n.item()`),
    #: or the input dimension it is (`x.size()[0]`); null when the log says neither.
    name: str | None = None
    #: `unbacked` (a value read from tensor data: `.item()`, `nonzero()`...) or `backed` (an input size).
    kind: str = "unbacked"
    #: The user line that made it (the innermost user frame of its creation's stack), if logged.
    created_at: SourceLocation | None = None


class ExportFix(msgspec.Struct, kw_only=True):
    """The change that removes an export issue."""

    #: `add` (add `code`: before `where` when given) or `change_code` (change the line `where`;
    #: `code` says how).
    kind: str = "add"
    #: The line to add or the change to make, e.g. `torch._check(k > 2)`,
    #: `@torch.library.register_fake("mylib::op")`.
    code: str
    #: The user line concerned (null when the log names none, e.g. a fake kernel's op).
    where: SourceLocation | None = None
    #: Why, in plain words, with the alternative when there is one.
    why: str
    docs_url: str | None = None


class ExportIssue(msgspec.Struct, kw_only=True):
    """A reason an export failed or produced an unsound program (FORMAT.md "Exports")."""

    #: `data_dependent_error`, `data_dependent`, `guard_evaluated`, `missing_fake_kernel`,
    #: `mismatched_fake_kernel`, `partial_graph` or (since 1.19) `dynamo_error` (FORMAT.md
    #: "Exports" says what each means).
    kind: str
    #: tlparse's failure type for the kind, e.g. `Data Dependent Error` (the -e report's table).
    title: str
    #: What happened, in one plain sentence (decided here; viewers show it as is).
    sentence: str
    #: The symbolic expression (guards, data-dependent kinds), and what it was taken to be (`True`).
    expr: str | None = None
    #: `expr` in the user's names where the log gives them (`k > 2` for `u0 > 2`), else `expr`.
    code_expr: str | None = None
    result: str | None = None
    #: The operator (fake kernel kinds), e.g. `mylib.op.default`, and torch's reason for a mismatch.
    op: str | None = None
    reason: str | None = None
    #: The user line being traced (innermost user frame of the event's user stack, else its stack).
    user_frame: SourceLocation | None = None
    #: Where the expression's symbols come from, in the order it names them.
    symbols: list[ExportSymbol] = []
    fix: ExportFix | None = None
    #: The logged graph traced until the error (`partial_graph`).
    payload: PayloadRef | None = None
    #: Events of this issue in the call (the same kind, expression or op, and line).
    count: int = 1
    #: 1-based log line of its first event, and that event's raw.jsonl line.
    log_line: int
    raw_line: int | None = None
    #: That event's kind: its key, or an artifact's name (`guard_on_data_dependent_error`; the
    #: `make_fx_fail_partial` artifact or `compilation_metrics` for a data-dependent error read
    #: without TORCH_DTRACE or from strict export). Since 1.23.
    event_kind: str | None = None


class ExportCall(msgspec.Struct, kw_only=True):
    """One torch.export / draft_export call of the log and how it ended (FORMAT.md "Exports")."""

    #: 0-based, in log order.
    index: int
    #: `exported` (a program, no issues), `exported_with_issues` (a program, but draft_export's
    #: guesses or fake-kernel problems make it unsound), `failed` (no program before the next
    #: call or the end of the log), `traced` (since 1.28: a strict call whose Dynamo trace ended
    #: without error in a log without TORCH_DTRACE, which says nothing of what followed).
    status: str
    #: The answer in one plain sentence.
    sentence: str
    #: Log line of its `export` event (newer torch under TORCH_DTRACE), else of its first event.
    log_line: int
    #: The user line that called export (the innermost user frame of an input symbol's stack), if logged.
    called_at: SourceLocation | None = None
    #: The printed ExportedProgram (`exported_program`), when one was logged.
    program: PayloadRef | None = None
    issues: list[ExportIssue] = []
    #: A strict call's Dynamo trace, as the compile id of its metrics record (`[0/0]`: strict
    #: export numbers them again each call); null for a non-strict call or when not logged. Since 1.28.
    trace_id: str | None = None


class AotInductorCompile(msgspec.Struct, kw_only=True):
    """One AOT Inductor compile (`torch._inductor.aoti_compile_and_package`, `aot_compile`): a
    `compile_fx_aot` span, logged with no compile id (FORMAT.md "AOT Inductor compiles"). Since 1.21."""

    #: 0-based, in log order.
    index: int
    #: `ok`, `failed` (its metrics record has `fail_type`) or `metrics_missing` (none was logged:
    #: the process died or the log was cut), as compile entries' statuses mean them.
    status: str
    #: The user line that called AOT Inductor (the innermost user frame of `stack`), if logged.
    user_frame: SourceLocation | None = None
    #: The stack of its first record that logged one, outermost first (file names resolved).
    stack: list[SourceLocation] = []
    #: From its metrics record's `start_time_us` and `end_time_us` (`source` `compilation_metrics`).
    time: Timing | None = None
    #: Time per phase, as a compile entry's (the spans inside `compile_fx_aot`).
    phases: list[Phase] = []
    failure: Failure | None = None
    cache: list[CacheOutcome] = []
    metrics: Metrics | None = None
    metrics_records: list[MetricsRecord] = []
    #: Its graphs (pre-grad, AOT, post-grad) and code (`inductor_aot_wrapper_code`,
    #: `inductor_aot_kernel_code`, `fx_graph_runnable`), as a compile entry's.
    graphs: list[Graph] = []
    code: list[PayloadRef] = []
    #: First and last 1-based input-log line of its records (the span's begin and end).
    log_lines: list[int] = []


class VllmPiecewise(msgspec.Struct, kw_only=True):
    """One piece of vLLM's split graph compiled for one compile range (its
    `vllm_piecewise_compile_start` artifact's fields, as logged). Since 1.22."""

    #: `piecewise_index`: the piece's place among the pieces compiled for its range.
    index: int | None = None
    #: `submod_name`, e.g. `submod_0`.
    submod: str | None = None
    #: `total_piecewise_compiles`: how many pieces vLLM announced for the range.
    total: int | None = None
    range_start: int | None = None
    range_end: int | None = None
    #: One batch size (`is_single_size`), and one vLLM captures as a CUDA graph.
    single_size: bool = False
    cudagraph_size: bool = False
    #: The start artifact.
    event: PayloadRef | None = None
    #: The records after the start, outside any compile id, until the next start: the piece's own
    #: dump (`vllm_submod_N`) and Inductor's graphs, then its code (at most 20 references).
    graphs: list[PayloadRef] = []
    code: list[PayloadRef] = []


class VllmRange(msgspec.Struct, kw_only=True):
    """A compile range of one vLLM compile and its pieces. Since 1.22."""

    start: int | None = None
    end: int | None = None
    single_size: bool = False
    cudagraph_size: bool = False
    #: Pieces whose start was logged for the range, and the most vLLM announced (`total`).
    logged: int = 0
    total: int | None = None
    #: The range in one sentence, e.g. `sizes 1-16384: 2 of 33 piecewise compiles logged`.
    sentence: str = ""


class Vllm(msgspec.Struct, kw_only=True):
    """One vLLM compile of the log: a `vllm_compilation_config` artifact and what follows. Since 1.22."""

    index: int
    #: The compile id it was logged under (Dynamo's capture of the whole forward).
    compile_id: str | None = None
    #: The config as logged: its keys with scalar values (at most 200, strings cut at 2,000 characters).
    config: dict[str, Any] = {}
    config_event: PayloadRef | None = None
    #: The `vllm_piecewise_split_graph` dump: the forward split at vLLM's splitting ops.
    split_graph: PayloadRef | None = None
    #: Each compile range, in the order its first piece was logged.
    ranges: list[VllmRange] = []
    #: Each piece compiled, in log order (at most 10,000).
    piecewise: list[VllmPiecewise] = []


class DynamicSource(msgspec.Struct, kw_only=True):
    """An input torch made dynamic on its own: after a call changed it, or from a PGO profile.
    Since 1.29."""

    #: Dynamo's source (`L['x']`) and the compiled function's name for it (`x`).
    source: str
    input: str
    #: The dimensions made dynamic; null: the whole value (an int, or every dimension).
    dims: list[int] | None = None
    #: `automatic` (automatic dynamic shapes, this run) or `profile` (the PGO profile read).
    by: str
    #: `automatic`: the recompile that made it dynamic; `profile`: the compile that read the profile.
    compile_id: str | None = None
    #: The compiled function whose input it is.
    function: SourceLocation | None = None
    #: `automatic`: what changed and in which compile, e.g. `[0/1] dim 0: 4 -> 6`, `[1/1] value: 2 -> 3`.
    changed: list[str] = []
    #: Its TORCH_COMPILE_DYNAMIC_SOURCES entries (`L['x']:0`, or `L['k']` for the whole value).
    entries: list[str] = []
    #: Other compiled functions with a tensor input of the same source that stayed static: the
    #: variable names inputs of every function, so it would make theirs dynamic too.
    shared_with: list[SourceLocation] = []
    #: Why its entries are not in `recommended`: `specialised` (the code specialises the dimension
    #: in a compile of its function: each dynamic graph is specialised again, and the symbol's
    #: `fix` says what to change) or `internal` (Dynamo's own name, e.g. `L['___stack0']`, a value
    #: a graph break left on the stack); null when they are.
    left_out: str | None = None
    #: `automatic`, a whole value: the recompiles of its function that its value still explained
    #: after torch marked it dynamic, so it stayed static (a global: Dynamo keeps guarding it by
    #: value; TORCH_COMPILE_DYNAMIC_SOURCES does make it dynamic). Absent when none. Since 1.46.
    recompiled: list[str] | msgspec.UnsetType = msgspec.UNSET


class PgoProfile(msgspec.Struct, kw_only=True):
    """The PGO profile a run read at its first compile (torch/_dynamo/pgo.py). Since 1.29."""

    #: `get_local_code_state`, `get_remote_code_state` or `get_extra_remote_code_state`.
    artifact: str
    #: `local`, `remote` or `extra remote`.
    where: str
    #: The compile that read it.
    compile_id: str | None = None
    #: The profile's key, from TORCH_COMPILE_JOB_ID (`<job id>:<rank>:<tag>`), if logged.
    key: str | None = None
    #: Functions the profile describes.
    functions: int = 0
    #: The artifact (the profile as text).
    event: PayloadRef


class Dynamic(msgspec.Struct, kw_only=True):
    """What made inputs dynamic that no line of the user's code marked, and the one setting that
    makes them dynamic from the first compile (FORMAT.md "Dynamic without being asked"). Since 1.29."""

    #: Each input made dynamic on torch's own, per function, in the order met.
    sources: list[DynamicSource] = []
    #: TORCH_COMPILE_DYNAMIC_SOURCES's value for the sources not already configured; null when none.
    recommended: str | None = None
    #: The value the run was given (its compile config's `dynamic_sources`); null when unset.
    configured: str | None = None
    #: The PGO profile the run read; null when it read none.
    profile: PgoProfile | None = None
    #: The PGO profile the run wrote last (`put_*_code_state`, after each compile that changed what
    #: it learned: what the next run with the same job id reads); null when it wrote none.
    profile_written: PgoProfile | None = None
    #: The answer in words.
    sentence: str


class Setting(msgspec.Struct, kw_only=True):
    """One setting whose value differs from the run's first compile's. Since 1.29."""

    #: `dynamo`, `compiler`, `functorch` or `inductor` (the metrics record's `<section>_config`).
    section: str
    key: str
    #: The value as Python prints it (`False`, `2`); null when this compile's config lacks the key.
    value: str | None
    #: The first compile's value, the same way.
    first: str | None


class SettingsGroup(msgspec.Struct, kw_only=True):
    """Compiles that ran under the same settings, other than the first compile's. Since 1.29."""

    compile_ids: list[str]
    #: The settings that differ, in section then key order (at most 20; `more` counts the rest).
    settings: list[Setting]
    more: int = 0


class Settings(msgspec.Struct, kw_only=True):
    """Compiles of the run that ran under other settings than its first (a config changed
    mid-run, `torch._dynamo.config.patch`, `torch.compile(dynamic=False)`, which turns automatic
    dynamic shapes off for that function). Since 1.29."""

    #: The first compile that logged its configs: what the others are compared with.
    first_compile: str | None = None
    groups: list[SettingsGroup] = []
    sentence: str


#: What each first answer is about (`FirstAnswer.kind`), in the order a run says them.
FIRST_ANSWER_KINDS: dict[str, str] = {
    "failure": "the first compile that failed: its type and reason, where in the user's code",
    "unfinished": "the log ends inside a compile that never logged its metrics (its `unfinished` phases): "
    "the process stopped (killed, out of memory, a crash) or the log was cut while it compiled (since 1.48)",
    "no_graph": "no compile made a graph (each restarted, broke before any op or was empty), so every "
    "compiled function ran in eager; said only when no compile failed, was loaded from a cache or lacks "
    "metrics (since 1.45)",
    "graph_break": "the distinct graph break met most often: its reason, where, how often",
    "recompile": "the first recompile: why, in plain words, and the line that stops it",
    "slow_compile": "the compile that took longest, when it took a second or more: its time against the "
    "run's, the phase it went to, a cache it missed (since 1.43)",
}


class FirstAnswer(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One of the run's first answers (analyse/headline.py): a line, as `tlscope LOG` prints it
    under its counts, and the compile it is about. Since 1.41."""

    #: One of FIRST_ANSWER_KINDS.
    kind: str
    #: The compile to open for it: the failed compile, the first compile the break stopped, the
    #: compile that recompiled, the slowest compile.
    compile_id: str | None = None
    #: The whole line, e.g. `first failure: [0/0] fn failed at a.py:17 (`x.item()`): Unsupported: …`.
    text: str
    #: `slow_compile`'s compile time in seconds and the phase its time went to (the one its text
    #: names; null when no phase was timed), which a job folds across ranks; absent for the
    #: other kinds. Since 1.43.
    seconds: float | None = None
    phase: str | None = None


class CompilesFile(msgspec.Struct, kw_only=True):
    """Top-level object of compiles.json."""

    format: str = "tlscope"
    format_version: int
    format_minor: int
    #: The status vocabulary with each status's meaning (the same as FORMAT.md).
    statuses: dict[str, str]
    #: The same statuses, most severe first: across ranks a compile id shows its first. Since 1.9.
    status_order: list[str] = msgspec.field(default_factory=lambda: list(STATUS_ORDER))
    #: One entry per compile id, in manifest `compile_ids` order.
    compiles: list[CompileEntry]
    #: The distinct graph breaks, most frequent first.
    graph_breaks: list[DistinctGraphBreak]
    #: Every symbol created, in log order. Since 1.10.
    symbols: list[Symbol] = []
    #: For each frame compiled more than once, its graphs' input shapes per compile. Since 1.10.
    input_shapes: list[FrameShapes] = []
    #: Each torch.export call, in log order (empty for a log of torch.compile alone). Since 1.18.
    exports: list[ExportCall] = []
    #: What the calls cannot say, e.g. that without TORCH_DTRACE only failed calls show; null
    #: when nothing is to say. Since 1.19.
    exports_note: str | None = None
    #: Each AOT Inductor compile, in log order (empty without one). Since 1.21.
    aot_inductor: list[AotInductorCompile] = []
    #: Each vLLM compile, in log order (empty for a log without vLLM's artifacts). Since 1.22.
    vllm: list[Vllm] = []
    #: What made inputs dynamic on torch's own, and how to ask for it; null when nothing. Since 1.29.
    dynamic: Dynamic | None = None
    #: The compiles that ran under other settings than the first; null when none did. Since 1.29.
    settings: Settings | None = None
    #: The run's first answers, in FIRST_ANSWER_KINDS order, each only when the run has one. Since 1.41.
    first_answers: list[FirstAnswer] = []


class Answers(msgspec.Struct, kw_only=True):
    """compiles.json's and log_size.json's data, for sinks that finish after them (the report).

    After a parse, `compiles` and `input_shapes` are read back from the written compiles.json as
    they are iterated (write/answers_sink.py's `WrittenItems`, valid until the output folder is
    committed);
    `summary` and `tlscope.load` hold a list."""

    compiles: Sequence[CompileEntry]
    graph_breaks: list[DistinctGraphBreak]
    log_size: LogSize
    symbols: list[Symbol] = []
    input_shapes: Sequence[FrameShapes] = []
    exports: list[ExportCall] = []
    exports_note: str | None = None
    aot_inductor: list[AotInductorCompile] = []
    vllm: list[Vllm] = []
    dynamic: Dynamic | None = None
    settings: Settings | None = None
    #: Compile ids per status (`outside` left out), most severe first, counted as the entries were
    #: made: what a parse says of them without reading compiles.json back.
    statuses: dict[str, int] = {}
    #: How many entries explain a recompile (`recompile` set), counted the same way.
    recompiles: int = 0
    #: The first answers (analyse/headline.py): the first failure, the most frequent graph break,
    #: the first recompile, the slowest compile; what a parse says under its counts (their `text`).
    first_answers: list[FirstAnswer] = []

    @property
    def headline(self) -> list[str]:
        """The first answers' lines."""
        return [answer.text for answer in self.first_answers]
