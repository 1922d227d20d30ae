"""The report's event parsers: one typed event, one handler, registered in tlparse's order.

ADDING AN EVENT TO THE REPORT: describe its metadata as a Struct in model/events.py (its `KEY` is
the envelope key), write a handler `def my_event(state: ReportState, line: Line, event: MyEvent)`
here, and add `On(MyEvent, my_event)` to PARSERS (per-compile outputs, in the order tlparse runs
its parsers: that order gives every output its `_N` number), EXPORT_PARSERS (-e) or FOLDS (state
the end pages need). A handler writes through `state.outputs` and folds into `state`.

Each handler runs when its key is in the envelope (an envelope may carry several). Its event is
the record's typed event, or for metadata of the wrong shape the usable part of it
(model/lenient.py); `any_value` handlers (tlparse's payload-only parsers) also run when the
metadata is not an object, with an empty event.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from tlscope.analyse.tlparse.metrics import failures_of, frame_key
from tlscope.analyse.tlparse.naming import eval_with_key_id, file_stem
from tlscope.analyse.tlparse.stack import drop_convert_frame_suffix, resolve_stack
from tlscope.model import events as ev
from tlscope.model.lenient import lenient
from tlscope.model.record import Record
from tlscope.write.outdir import safe_component
from tlscope.write.report import pages
from tlscope.write.report.export import GuardPage
from tlscope.write.report.outputs import Line
from tlscope.write.report.stacks import format_stack
from tlscope.write.report.state import ReportState

E = TypeVar("E", bound=ev.Event)


class On(msgspec.Struct, Generic[E], frozen=True):
    """Run `handle` on each record whose envelope has `event.KEY`."""

    event: type[E]
    handle: Callable[[ReportState, Line, E], None]
    #: Also when the metadata is not an object (the handler needs only the record and payload).
    any_value: bool = False


def dispatch(state: ReportState, line: Line, handlers: Sequence[On[Any]]) -> None:
    """Every handler whose key the line's envelope has, in order, with its typed event.

    The envelope's few keys are looked up among the handlers' (an index per handler list),
    not each of the ~40 handlers' keys in the envelope: this ran for every record, twice.
    """
    record = line.record
    envelope = record.envelope
    by_key = _index(handlers)
    matched = [by_key[key] for key in envelope if key in by_key]
    if not matched:
        return
    # Handlers of several keys on one envelope run in the list's order (it numbers the files).
    todo = matched[0] if len(matched) == 1 else sorted(itertools.chain.from_iterable(matched))
    for _, on in todo:
        value = envelope.get(on.event.KEY)
        if value is None:
            continue
        event = _typed(record, on.event, value)
        if event is None:
            if not on.any_value:
                continue
            event = on.event()
        on.handle(state, line, event)


#: Per handler list (the module's tuples): event key -> [(position in the list, handler)].
_INDEXES: dict[int, tuple[Sequence[On[Any]], dict[str, list[tuple[int, On[Any]]]]]] = {}


def _index(handlers: Sequence[On[Any]]) -> dict[str, list[tuple[int, On[Any]]]]:
    found = _INDEXES.get(id(handlers))
    if found is None or found[0] is not handlers:  # held, so its id cannot be reused meanwhile
        by_key: dict[str, list[tuple[int, On[Any]]]] = {}
        for position, on in enumerate(handlers):
            by_key.setdefault(on.event.KEY, []).append((position, on))
        found = _INDEXES[id(handlers)] = (handlers, by_key)
    return found[1]


def _typed(record: Record, event_type: type[E], value: Any) -> E | None:
    if isinstance(record.event, event_type) and record.key == event_type.KEY:
        return record.event  # typed by the reader (every well-formed record)
    return lenient(value, event_type)


# -- per-compile outputs (tlparse's parsers) ----------------------------------------------------


def payload_only(state: ReportState, line: Line, event: ev.Event) -> None:
    """`<dir>/<key>_N.txt`: the raw payload."""
    state.outputs.payload_file(line, f"{line.dir}/{event.KEY}.txt")


def graph_dump(state: ReportState, line: Line, event: ev.GraphDump) -> None:
    if event.name is not None:
        state.outputs.payload_file(line, f"{line.dir}/{safe_component(event.name)}.txt")


def dynamo_guards(state: ReportState, line: Line, event: ev.DynamoGuards) -> None:
    guards = pages.parse_guards(line.record.payload_text)
    if guards is None:
        state.problem(line, "dynamo_guards payload is not a JSON list of {code: ...}")
        return
    state.outputs.page(line, "dynamo_guards", guards=guards)


def output_code(state: ReportState, line: Line, event: ev.InductorOutputCode) -> None:
    stem = None if event.filename is None else file_stem(event.filename)
    name = "inductor_output_code" if stem is None else f"inductor_output_code_{safe_component(stem)}"
    outputs, record = state.outputs, line.record
    if state.options.plain_text:
        outputs.payload_file(line, f"{line.dir}/{name}.txt")
        return
    rel = outputs.number(f"{line.dir}/{name}.html")
    if record.payload_md5 is None or record.payload is None:
        outputs.write_text(rel, pages.highlighted(""))
    else:
        outputs.derived_file("code", rel, record)
        outputs.provenance_output(line, rel, str(outputs.payload_path(record.payload_md5)), pre_line=True)
    outputs.register(line, rel)


def ddp_split_child(state: ReportState, line: Line, event: ev.OptimizeDdpSplitChild) -> None:
    if event.name is not None:
        state.outputs.payload_file(line, f"{line.dir}/optimize_ddp_split_child_{safe_component(event.name)}.txt")


def metrics_page(state: ReportState, line: Line, event: ev.Event) -> None:
    """A page of the event's metrics (backward and AOT backward compilations)."""
    state.outputs.page(line, event.KEY, m=event)


def link(state: ReportState, line: Line, event: ev.Link) -> None:
    if event.name is not None and event.url is not None:
        state.outputs.directory.register_link(line.key, event.name, event.url)


def artifact(state: ReportState, line: Line, event: ev.Artifact) -> None:
    name, encoding = event.name, event.encoding
    if name is None or encoding is None:
        state.problem(line, "artifact without a string name and encoding")
    elif encoding == "string":
        state.outputs.payload_file(line, f"{line.dir}/{safe_component(name)}.txt")
    elif encoding == "json":
        # Pretty-printed like serde_json, by a page worker, once per distinct payload.
        outputs = state.outputs
        rel = outputs.number(f"{line.dir}/{safe_component(name)}.json")
        outputs.derived_file("json", rel, line.record)
        outputs.provenance_output(line, rel, outputs.out.path_text(rel))
        outputs.register(line, rel)
    else:
        state.problem(line, f"artifact {name!r}: unsupported encoding {encoding!r}")


def dump_file(state: ReportState, line: Line, event: ev.DumpFile) -> None:
    if event.name is None:
        return
    eval_id = eval_with_key_id(event.name)
    # tlparse's names; the id is digits from the log, as long as it likes: cut like any name.
    stem = f"eval_with_key_{eval_id}" if eval_id else event.name
    rel = f"dump_file/{safe_component(stem)}.html"
    state.outputs.write_text(rel, pages.render("dump_file.html.jinja", lines=line.record.payload_text.splitlines()))
    state.outputs.register(line, rel)


def compilation_metrics(state: ReportState, line: Line, m: ev.CompilationMetrics) -> None:
    """The compilation's page (its outputs so far, stack, specializations), its failures, its status."""
    outputs, key = state.outputs, line.key
    earlier = outputs.directory.entries(key)
    stack = state.stack_index.get(None if line.cid is None else frame_key(line.cid))
    rel = outputs.page(
        line,
        "compilation_metrics",
        m=m,
        mini_stack=pages.mini_stack(m),
        output_files=[pages.output_file(e) for e in earlier],
        stack_html=format_stack(stack, "Stack") if stack is not None else "",
        restart_reasons=m.restart_reasons or [],
        compliant_custom_ops=m.compliant_custom_ops or [],
        non_compliant_ops=m.non_compliant_ops or [],
        specializations=state.specializations.pop(key, []),
        guards_added_fast=state.guards_fast.pop(key, []),
    )
    state.failures.extend(failures_of(line.cid, None if line.cid is None else rel, m))
    state.metrics.add(line.cid, m)


# -- export mode (-e) ----------------------------------------------------------------------------


def guard_page(state: ReportState, line: Line, page: GuardPage | None) -> None:
    """A symbolic_guard_information page, numbered and registered as it is made."""
    if page is None or state.export is None:
        return
    rel = state.outputs.number(f"{line.dir}/symbolic_guard_information.html")
    state.outputs.write_text(rel, state.export.page_html(page, rel))
    state.outputs.register(line, rel)


def guard_evaluated(state: ReportState, line: Line, event: ev.GuardAdded) -> None:
    if state.export is not None:
        guard_page(state, line, state.export.guard_evaluated(event, line.record))


def data_dependent(state: ReportState, line: Line, event: ev.PropagateRealTensorsProvenance) -> None:
    if state.export is not None:
        guard_page(state, line, state.export.data_dependent(event, line.record))


def missing_fake_kernel(state: ReportState, line: Line, event: ev.MissingFakeKernel) -> None:
    if state.export is not None:
        state.export.missing_fake_kernel(event)


def mismatched_fake_kernel(state: ReportState, line: Line, event: ev.MismatchedFakeKernel) -> None:
    if state.export is not None:
        state.export.mismatched_fake_kernel(event)


def expression_created(state: ReportState, line: Line, event: ev.ExpressionCreated) -> None:
    if state.export is not None:
        state.export.expression_created(event, line.record)


def unbacked_symbol(state: ReportState, line: Line, event: ev.CreateUnbackedSymbol) -> None:
    if state.export is not None:
        state.export.unbacked_symbol(event, line.record)


# -- folds for the end pages -----------------------------------------------------------------


def chromium_event(state: ReportState, line: Line, event: ev.ChromiumEvent) -> None:
    state.has_chromium_events = True


def dynamo_start(state: ReportState, line: Line, event: ev.DynamoStart) -> None:
    """The compile id's stack: into the stack trie and, for its metrics page, the stack index."""
    if event.stack is not None:
        frames = drop_convert_frame_suffix(resolve_stack(event.stack, line.record))
        state.stack_index[line.key] = frames
        state.trie.insert(frames, line.cid)


def specialization(state: ReportState, line: Line, event: ev.SymbolicShapeSpecialization) -> None:
    state.specializations.setdefault(line.key, []).append(pages.stack_row(event, line.record))


def guard_added_fast(state: ReportState, line: Line, event: ev.GuardAddedFast) -> None:
    state.guards_fast.setdefault(line.key, []).append(pages.stack_row(event, line.record))


#: Per-compile outputs in tlparse's parser order (reference §3.0): the order numbers the files.
PARSERS: tuple[On[Any], ...] = (
    On(ev.OptimizeDdpSplitGraph, payload_only, any_value=True),
    On(ev.CompiledAutogradGraph, payload_only, any_value=True),
    On(ev.AotForwardGraph, payload_only, any_value=True),
    On(ev.AotBackwardGraph, payload_only, any_value=True),
    On(ev.AotInferenceGraph, payload_only, any_value=True),
    On(ev.AotJointGraph, payload_only, any_value=True),
    On(ev.InductorPostGradGraph, payload_only, any_value=True),
    On(ev.InductorPreGradGraph, payload_only, any_value=True),
    On(ev.DynamoCppGuardsStr, payload_only, any_value=True),
    On(ev.GraphDump, graph_dump),
    On(ev.DynamoOutputGraph, payload_only, any_value=True),
    On(ev.DynamoGuards, dynamo_guards, any_value=True),
    On(ev.InductorOutputCode, output_code),
    On(ev.OptimizeDdpSplitChild, ddp_split_child),
    On(ev.AotAutogradBackwardCompilationMetrics, metrics_page),
    On(ev.BwdCompilationMetrics, metrics_page),
    On(ev.Link, link),
    On(ev.Artifact, artifact),
    On(ev.DumpFile, dump_file),
    On(ev.CompilationMetrics, compilation_metrics),
)

#: Export mode's outputs instead (-e), in tlparse's order.
EXPORT_PARSERS: tuple[On[Any], ...] = (
    On(ev.ExportedProgram, payload_only, any_value=True),
    On(ev.GuardAdded, guard_evaluated),
    On(ev.PropagateRealTensorsProvenance, data_dependent),
    On(ev.MissingFakeKernel, missing_fake_kernel),
    On(ev.MismatchedFakeKernel, mismatched_fake_kernel),
    On(ev.ExpressionCreated, expression_created),
    On(ev.CreateUnbackedSymbol, unbacked_symbol),
)

#: What the end pages need (index.html's stack tries, the metrics pages' tables), both modes.
FOLDS: tuple[On[Any], ...] = (
    On(ev.ChromiumEvent, chromium_event, any_value=True),
    On(ev.DynamoStart, dynamo_start),
    On(ev.SymbolicShapeSpecialization, specialization),
    On(ev.GuardAddedFast, guard_added_fast),
)
