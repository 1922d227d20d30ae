"""The typed event model: one msgspec Struct per event key that PyTorch writes.

An envelope is `{"<event key>": <metadata>, <context fields>...}`; the types here describe the
metadata. Every field is optional because fields come and go between torch versions, and
unknown fields are ignored by the Struct (the raw envelope keeps them, so nothing is lost).
Types are as loose as real logs require and no looser: where torch versions disagree on a
shape (e.g. `frame_locals` values, specialization `value`), the field is typed to accept both.

Unknown event keys have no Struct: they pass through as raw metadata and are counted.
"""

# No `from __future__ import annotations`: msgspec reads these Structs' annotations when it
# first converts or decodes one (the reader converts every record to one), and typing compiles each string
# annotation there (~20M instructions, 3 % of a small log's run; bench/README.md, session 9).
from typing import Any, ClassVar

import msgspec

Number = int | float


class Frame(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One frame of a stack summary. `filename` is an index into the process's string table."""

    filename: int | str | None = None
    line: int | None = None
    name: str | None = None
    loc: str | None = None
    # Set by PyTorch for synthetic frames whose file name was never interned.
    uninterned_filename: str | None = None


Stack = list[Frame]


class Event(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base of all typed events; `KEY` is the envelope key the event is logged under."""

    KEY: ClassVar[str] = ""
    #: One line for FORMAT.md: what the event means.
    DOC: ClassVar[str] = ""


class StringEntry(Event, array_like=True):
    KEY = "str"
    DOC = "String-table entry `[string, index]`: interns a stack frame's file name (per process)."
    value: str
    index: int


# --- Dynamo -------------------------------------------------------------------------------


class DynamoStart(Event):
    KEY = "dynamo_start"
    DOC = "Dynamo starts compiling a frame; `stack` is the user stack that reached it."
    stack: Stack | None = None


class DynamoOutputGraph(Event):
    KEY = "dynamo_output_graph"
    DOC = "The FX graph Dynamo captured (payload: readable graph code)."
    sizes: dict[str, Any] | None = None


class DynamoGuards(Event):
    KEY = "dynamo_guards"
    DOC = "Guards of the compiled frame (payload: JSON list of `{code, stack, user_stack}`; older torch)."


class DynamoCppGuardsStr(Event):
    KEY = "dynamo_cpp_guards_str"
    DOC = "The C++ guard tree as text (payload)."


class CompiledAutogradGraph(Event):
    KEY = "compiled_autograd_graph"
    DOC = "Graph captured by compiled autograd (payload)."


class OptimizeDdpSplitGraph(Event):
    KEY = "optimize_ddp_split_graph"
    DOC = "DDP optimizer's split graph (payload)."


class OptimizeDdpSplitChild(Event):
    KEY = "optimize_ddp_split_child"
    DOC = "One submodule of the DDP optimizer's split (payload: graph)."
    name: str | None = None


# --- AOTAutograd and Inductor graphs ----------------------------------------------------


class AotJointGraph(Event):
    KEY = "aot_joint_graph"
    DOC = "AOTAutograd joint forward+backward graph (payload)."


class AotForwardGraph(Event):
    KEY = "aot_forward_graph"
    DOC = "AOTAutograd forward graph (payload)."


class AotBackwardGraph(Event):
    KEY = "aot_backward_graph"
    DOC = "AOTAutograd backward graph (payload)."


class AotInferenceGraph(Event):
    KEY = "aot_inference_graph"
    DOC = "AOTAutograd inference graph (payload)."


class InductorPreGradGraph(Event):
    KEY = "inductor_pre_grad_graph"
    DOC = "Inductor graph before pre-grad passes (payload)."


class InductorPostGradGraph(Event):
    KEY = "inductor_post_grad_graph"
    DOC = "Inductor graph after post-grad passes (payload)."


class InductorOutputCode(Event):
    KEY = "inductor_output_code"
    DOC = "Generated wrapper code, Python or C++ (payload); `filename` is where Inductor wrote it."
    filename: str | None = None
    file_path: str | None = None


class GraphDump(Event):
    KEY = "graph_dump"
    DOC = "A named code dump, e.g. AOTInductor wrapper or kernel code (payload)."
    name: str | None = None
    type: str | None = None
    filename: str | None = None


class DumpFile(Event):
    KEY = "dump_file"
    DOC = "Source of an FX-generated module such as `<eval_with_key>.3` (payload)."
    name: str | None = None


class Link(Event):
    KEY = "link"
    DOC = "A named link to an external resource (no payload)."
    name: str | None = None
    url: str | None = None


class Artifact(Event):
    KEY = "artifact"
    DOC = "A named artifact; `encoding` is `string`, `json` or another name (payload)."
    name: str | None = None
    encoding: str | None = None


class ChromiumEvent(Event):
    KEY = "chromium_event"
    DOC = "One Chrome trace event (payload: JSON object with `name, ts, ph, cat, pid, tid, args`)."


class ExportedProgram(Event):
    KEY = "exported_program"
    DOC = "A printed ExportedProgram (payload)."


class ExportStart(Event):
    KEY = "export"
    DOC = "torch.export started (payload `start!`); newer torch, via dtrace."


# --- Metrics ------------------------------------------------------------------------------


class CompilationMetrics(Event):
    KEY = "compilation_metrics"
    DOC = "Metrics of one compilation: timings, counts, failure and restarts (no payload)."
    compile_id: str | None = None
    frame_key: str | None = None
    co_name: str | None = None
    co_filename: str | None = None
    co_firstlineno: int | None = None
    cache_size: int | None = None
    accumulated_cache_size: int | None = None
    guard_count: int | None = None
    shape_env_guard_count: int | None = None
    graph_op_count: int | None = None
    graph_node_count: int | None = None
    graph_input_count: int | None = None
    start_time: Number | None = None
    entire_frame_compile_time_s: Number | None = None
    backend_compile_time_s: Number | None = None
    inductor_compile_time_s: Number | None = None
    code_gen_time_s: Number | None = None
    dynamo_time_before_restart_s: Number | None = None
    fail_type: str | None = None
    fail_reason: str | None = None
    fail_user_frame_filename: str | None = None
    fail_user_frame_lineno: int | None = None
    non_compliant_ops: list[str] | None = None
    compliant_custom_ops: list[str] | None = None
    restart_reasons: list[str] | None = None
    recompile_reason: str | None = None
    num_graph_breaks: int | None = None
    has_guarded_code: bool | None = None
    is_forward: bool | None = None
    is_runtime: bool | None = None
    start_time_us: Number | None = None
    end_time_us: Number | None = None
    duration_us: Number | None = None
    dynamo_cumulative_compile_time_us: Number | None = None
    aot_autograd_cumulative_compile_time_us: Number | None = None
    inductor_cumulative_compile_time_us: Number | None = None
    pytorch_version: str | None = None
    python_version: str | None = None
    stack_trace: list[str] | None = None
    exception_stack_trace: list[str] | None = None
    #: The configs in force, each as JSON text: torch.compiler.config (its `dynamic_sources`:
    #: analyse/fold/dynamic.py), torch._dynamo.config, functorch's and Inductor's
    #: (analyse/fold/settings.py compares them with the first compile's).
    compiler_config: str | None = None
    dynamo_config: str | None = None
    functorch_config: str | None = None
    inductor_config: str | None = None


class CompilationMetricsRuntime(CompilationMetrics):
    KEY = "compilation_metrics_runtime"
    DOC = "Compilation metrics logged at run time (e.g. runtime autotuning); same fields."


class BwdCompilationMetrics(CompilationMetrics):
    KEY = "bwd_compilation_metrics"
    DOC = "Metrics of a backward compilation (`is_forward` false); same fields."


class BwdCompilationMetricsRuntime(CompilationMetrics):
    KEY = "bwd_compilation_metrics_runtime"
    DOC = "Backward compilation metrics logged at run time; same fields."


class AotAutogradBackwardCompilationMetrics(Event):
    KEY = "aot_autograd_backward_compilation_metrics"
    DOC = "AOTAutograd's lazy backward compilation: timing and failure (no payload)."
    start_time: Number | None = None
    elapsed_time: Number | None = None
    fail_type: str | None = None
    fail_reason: str | None = None


# --- Fake tensors: what Dynamo saw of each input ----------------------------------------


class DescribeStorage(Event):
    KEY = "describe_storage"
    DOC = "A storage seen while fakeifying inputs."
    id: int | None = None
    describer_id: int | None = None
    size: int | None = None


class DescribeTensor(Event):
    KEY = "describe_tensor"
    DOC = "A tensor seen while fakeifying inputs: dtype, device, sizes, strides and flags."
    id: int | None = None
    describer_id: int | None = None
    ndim: int | None = None
    dtype: str | None = None
    device: str | None = None
    size: list[int | str] | None = None
    stride: list[int | str] | None = None
    storage: int | None = None
    storage_offset: int | str | None = None
    is_leaf: bool | None = None
    requires_grad: bool | None = None
    is_parameter: bool | None = None
    dynamo_dynamic_indices: list[int] | None = None


class DescribeSource(Event):
    KEY = "describe_source"
    DOC = "Where a described tensor came from, e.g. `L['x']`; joins on (describer_id, id)."
    id: int | None = None
    describer_id: int | None = None
    source: str | None = None


# --- Symbolic shapes ----------------------------------------------------------------------


class CreateSymbol(Event):
    KEY = "create_symbol"
    DOC = "A symbolic size was created for a dynamic dimension."
    symbol: str | None = None
    val: str | None = None
    vr: str | None = None
    source: str | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None


class CreateUnbackedSymbol(Event):
    KEY = "create_unbacked_symbol"
    DOC = "A data-dependent (unbacked) symbol was created."
    symbol: str | None = None
    node_id: int | None = None
    vr: str | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None


class SymbolicShapeSpecialization(Event):
    KEY = "symbolic_shape_specialization"
    DOC = "A symbol was specialized to a value, with the reason and stacks."
    symbol: str | None = None
    sources: list[str] | None = None
    # tlparse requires a string here; real logs carry numbers too.
    value: str | Number | None = None
    reason: str | None = None
    stack: Stack | None = None
    user_stack: Stack | None = None


class GuardAddedFast(Event):
    KEY = "guard_added_fast"
    DOC = "A shape guard was added (cheap form, always logged)."
    expr: str | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None


class FrameLocals(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Locals and symbols of the user frame at a guard; torch 2.13 logs list values."""

    locals: dict[str, Any] | None = None
    symbols: dict[str, Any] | None = None


class GuardAdded(Event):
    KEY = "guard_added"
    DOC = "A shape guard was added, with provenance (TORCH_DTRACE or export only)."
    expr: str | None = None
    prefix: str | None = None
    expr_node_id: int | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None
    symbol_to_sources: dict[str, Any] | None = None
    frame_locals: FrameLocals | None = None


class PropagateRealTensorsProvenance(Event):
    KEY = "propagate_real_tensors_provenance"
    DOC = "Draft export guessed a data-dependent expression from real tensors."
    expr: str | None = None
    result: str | None = None
    expr_node_id: int | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None
    symbol_to_sources: dict[str, Any] | None = None
    frame_locals: FrameLocals | None = None
    prefix: str | None = None


class PropagateRealTensors(Event):
    KEY = "propagate_real_tensors"
    DOC = "An unsound result was used while propagating real tensors."
    expr: str | None = None
    result: str | None = None
    stack: Stack | None = None


class GuardOnDataDependentError(Event):
    KEY = "guard_on_data_dependent_error"
    DOC = "A guard on a data-dependent expression could not be decided (newer torch, via dtrace)."
    expr: str | None = None
    unhinted_expr: str | None = None
    expr_id: int | None = None
    stack: Stack | None = None


class ExpressionCreated(Event):
    KEY = "expression_created"
    DOC = "A symbolic expression node was created (provenance tree for export guards)."
    method: str | None = None
    result: str | None = None
    result_id: int | None = None
    arguments: list[Any] | None = None
    argument_ids: list[int | None] | None = None
    user_stack: Stack | None = None
    stack: Stack | None = None


class MissingFakeKernel(Event):
    KEY = "missing_fake_kernel"
    DOC = "An operator has no fake (meta) kernel."
    op: str | None = None
    reason: str | None = None


class MismatchedFakeKernel(Event):
    KEY = "mismatched_fake_kernel"
    DOC = "An operator's fake kernel disagrees with its real kernel."
    op: str | None = None
    reason: str | None = None


def _all_event_types() -> dict[str, type[Event]]:
    types: dict[str, type[Event]] = {}
    pending: list[type[Event]] = [Event]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            pending.append(sub)
            types[sub.KEY] = sub
    return dict(sorted(types.items()))


#: Every known event key and its Struct, sorted by key.
EVENT_TYPES: dict[str, type[Event]] = _all_event_types()
