"""From the compile fold's per-compile facts to compiles.json's entries: statuses, attempts, recompiles.

Attempts of one frame compile (`[0/1]`, `[0/1_1]`, ...) are separate compile ids. Facts of the
frame compile as a whole (its time and phases, and why it is a recompile) are put on its last
attempt, the one holding compilation_metrics; its inputs and stack are on every attempt.

Entries are made one frame at a time (`frame_entries`, analyse/fold/framestore.py), frames in
manifest order: what an entry combines is its own frame's, so a frame's entries can be written
and forgotten before the next frame's are made.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from tlscope.analyse.fold.blocks import time_fix
from tlscope.analyse.fold.break_fixes import drop_model_fixes
from tlscope.analyse.fold.callvalues import fill_actuals, value_changes
from tlscope.analyse.fold.compile_fold import CompileFold
from tlscope.analyse.fold.compileacc import CompileAcc
from tlscope.analyse.fold.export_words import where_text
from tlscope.analyse.fold.fixes import Resumes, attach_fixes
from tlscope.analyse.fold.framestore import Frame, FrameState, frame_of_id
from tlscope.analyse.fold.graphbreaks import OBSERVED
from tlscope.analyse.fold.graphs import dynamic_dims, placeholder_name
from tlscope.analyse.fold.guards import as_tensor_of, said_name
from tlscope.analyse.fold.phases import FrameTime
from tlscope.analyse.fold.recommend import expected_of, identity_about, recommended_failure
from tlscope.analyse.fold.resume import resumed
from tlscope.analyse.fold.usercode import UserCode
from tlscope.analyse.phase_words import backward_s, compile_seconds
from tlscope.format.compiles import (
    AotInductorCompile,
    CompileEntry,
    Failure,
    GuardFailure,
    InputChange,
    Recompile,
    SourceLocation,
    Symbol,
    TensorInput,
    Timing,
)
from tlscope.format.status import compile_status
from tlscope.model.compile_id import CompileId, compile_id_order, frame_compile_from_text

_OUTSIDE = CompileId()


def frame_of(cid: CompileId) -> CompileId:
    """The frame compile an attempt belongs to (attempt left out)."""
    return CompileId(cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, None)


def status_of(acc: CompileAcc, restarted_as: str | None) -> str:
    """The compile id's facts, given to the vocabulary's rule (format/status.py).

    A failure that a later good record of the same id recovered from (after torch._dynamo.reset())
    keeps `failure` but not the status.
    """
    metrics = acc.metrics
    return compile_status(
        outside=acc.cid == _OUTSIDE,
        failed=acc.failure is not None and not acc.recovered,
        restarted=restarted_as is not None,
        broke=bool(acc.restart_reasons or acc.graph_breaks),
        has_metrics=metrics is not None,
        empty=metrics is not None
        and (metrics.graph_op_count == 0 or metrics.has_guarded_code is False or not _captured(acc)),
        cache_hit={c.outcome for c in acc.cache} == {"hit"},
        captured=_autograd_capture(acc),
    )


def _autograd_capture(acc: CompileAcc) -> bool:
    """Whether `acc` is a compiled-autograd capture (`[!N/-/-]`) that logged the graph it traced."""
    cid = acc.cid
    if cid.compiled_autograd_id is None or cid.frame_id is not None:
        return False
    return any(g.kind == "compiled_autograd_graph" for g in acc.graphs)


def _captured(acc: CompileAcc) -> bool:
    """Whether Dynamo captured a graph: ops counted, or its output graph logged (older torch)."""
    if acc.metrics is not None and acc.metrics.graph_op_count:
        return True
    return any(g.kind == "dynamo_output_graph" for g in acc.graphs)


def _attempts(state: FrameState) -> dict[CompileId, list[CompileAcc]]:
    """A frame's attempts of each frame compile, in attempt order."""
    attempts: dict[CompileId, list[CompileAcc]] = {}
    for acc in state.accs.values():
        if acc.cid.frame_compile_id is not None:
            attempts.setdefault(frame_of(acc.cid), []).append(acc)
    for accs in attempts.values():
        accs.sort(key=lambda a: a.cid.attempt or 0)
    return attempts


class _Frames:
    """The attempts of each frame compile of one frame (`state`), and the facts they share."""

    def __init__(self, fold: CompileFold, frame: Frame, state: FrameState) -> None:
        self.fold = fold
        self.frame = frame
        self.times = state.times
        self.attempts = _attempts(state)
        #: The first compiled function seen in the frame (one code object), by first record.
        self.function = next((a.function for a in state.accs.values() if a.function is not None), None)
        #: `inputs` by frame compile: each recompile compares the call with every earlier entry
        #: (up to the recompile limit), so a frame's inputs are asked for again and again.
        self._inputs: dict[CompileId, list[TensorInput]] = {}
        #: `_expected`, read on the frame's first recompile.
        self._known: dict[str, dict[str, str]] | None = None
        #: `self_class`, False until asked.
        self._self_class: str | bool | None = False

    def self_class(self) -> str | None:
        """The class of `self` any compile of the frame's guards name (found once a frame)."""
        if self._self_class is False:
            every = (a for accs in self.attempts.values() for a in accs)
            self._self_class = next((a.self_class for a in every if a.self_class), None)
        return self._self_class if isinstance(self._self_class, str) else None

    def _attempts_of(self, frame: CompileId) -> list[CompileAcc]:
        """A frame compile's attempts; another frame's (a cache entry of another frame id, which
        torch does not log) are looked up in the fold's store."""
        found = self.attempts.get(frame)
        if found is not None or frame_of_id(frame) == self.frame:
            return found or []
        other = self.fold.frames.peek(frame_of_id(frame))
        return _attempts(other).get(frame, []) if other is not None else []

    def holder(self, acc: CompileAcc) -> bool:
        """Whether `acc` carries its frame compile's time and recompile facts."""
        accs = self.attempts.get(frame_of(acc.cid))
        if not accs:
            return True
        with_metrics = [a for a in accs if a.metrics is not None]
        return acc is (with_metrics or accs)[-1]

    def next_attempt(self, acc: CompileAcc) -> str | None:
        later = [a for a in self.attempts.get(frame_of(acc.cid), ()) if (a.cid.attempt or 0) > (acc.cid.attempt or 0)]
        return later[0].cid.display if later else None

    def inputs(self, frame: CompileId) -> list[TensorInput]:
        """The frame's tensor inputs (first description wins), with dynamic dims from Dynamo's graph."""
        found = self._inputs.get(frame)
        if found is None:
            found = self._inputs[frame] = self._merged_inputs(frame)
        return list(found)

    def _merged_inputs(self, frame: CompileId) -> list[TensorInput]:
        merged: dict[str, TensorInput] = {}
        graph_types: dict[str, str | None] = {}
        for acc in self._attempts_of(frame):
            for source, tensor in acc.inputs.items():
                merged.setdefault(source, tensor)
            for graph in acc.graphs:
                if graph.kind == "dynamo_output_graph":
                    graph_types.update({i.name: i.type for i in graph.inputs})
        for source, tensor in merged.items():
            tensor.dynamic_dims = dynamic_dims(graph_types.get(placeholder_name(source)))
        return list(merged.values())

    def timing(self, acc: CompileAcc) -> Timing | None:
        frame_time = self.times.get(frame_of(acc.cid))
        found = frame_time.timing() if frame_time is not None else None
        if found is None and acc.metrics is not None and acc.metrics.entire_frame_compile_time_s is not None:
            found = Timing(duration_s=acc.metrics.entire_frame_compile_time_s, source="compilation_metrics")
        return found or acc.capture_time

    def recompile(self, acc: CompileAcc) -> Recompile | None:
        accs = self.attempts.get(frame_of(acc.cid), [acc])
        failures = next((a.guard_failures for a in accs if a.guard_failures), [])
        event = next((a.recompile_event for a in accs if a.recompile_event is not None), None)
        reason = next((a.recompile_reason for a in reversed(accs) if a.recompile_reason is not None), None)
        if not failures and event is None and reason is None:
            return None
        after = self.inputs(frame_of(acc.cid))
        known = self._expected()
        values = {want: value for a in accs for want, value in a.call_values.items()}
        ids = {identity_about(key): value for (what, key), (_, value) in values.items() if what == "identity"}
        recommended = recommended_failure(failures, self._entry_inputs(failures), after, known, ids)
        # What the call is compared with: the entry of the failure that explains it, the closest.
        chosen = failures[recommended.index : recommended.index + 1] if recommended is not None else []
        compared = chosen[0].cache_entry if chosen else _entry_of(reason)
        found = Recompile(
            reason=reason, guard_failures=failures, recommended=recommended, compared_with=compared, event=event
        )
        earlier = _frame_key(compared)
        before = self.inputs(earlier) if earlier is not None else []
        if before and after:  # a compile that failed before describing its inputs has nothing to compare
            found.changes = input_changes(before, after)
        fill_actuals(failures, values, after)
        name_stack_values(failures, acc.function)
        symbolic = {want for a in accs for want in a.symbolic}
        said = value_changes(chosen, values, symbolic)  # a float's `dynamic` said again after its value
        found.changes = [c for c in found.changes if not _said(said, c)] + said
        name_changes(found.changes, acc.function)
        return found

    def _expected(self) -> dict[str, dict[str, str]]:
        """What the frame's recompiles said each cache entry was compiled for (a dict key present
        or absent, an object's id: recommend.KNOWN_KINDS), by the entry's compile id. A fact of
        the entry whichever recompile said it, so read once a frame: each recompile lists every
        earlier entry, and a log may hold thousands."""
        if self._known is None:
            self._known = {}
            for accs in self.attempts.values():
                failures = next((a.guard_failures for a in accs if a.guard_failures), [])
                for failure in failures:
                    about = expected_of(failure)
                    if about is not None:
                        self._known.setdefault(failure.cache_entry, {})[about[0]] = about[1]
        return self._known

    def _entry_inputs(self, failures: Sequence[GuardFailure]) -> dict[str, list[TensorInput]]:
        """Each failed cache entry's tensor inputs, by its compile id (which failures name)."""
        found: dict[str, list[TensorInput]] = {}
        for failure in failures:
            key = _frame_key(failure.cache_entry)
            if key is not None and failure.cache_entry not in found:
                found[failure.cache_entry] = self.inputs(key)
        return found


#: Dynamo's name for a value on the stack at a resume function's start (a local of it); compiled
#: by `re` on first use: a log without recompiles never pays for it.
_STACK = r"^(?:L\['(___stack\d+)'\]|(___stack\d+))$"


def _resume_break(function: SourceLocation | None) -> str | None:
    """Where the graph break a resume function resumes after is (`a.py:5`); None for another function."""
    found = resumed(function.name) if function is not None else None
    if found is None or function is None:
        return None
    return where_text(SourceLocation(file=function.file, line=found[1]))


def _stack_words(name: str, at: str) -> str:
    return f"the value the graph break at {at} left on the stack ({name})"


def name_stack_values(failures: Sequence[GuardFailure], function: SourceLocation | None) -> None:
    """Say what `___stack0` is where a resume function's guard names it: the value the graph
    break left on the stack (the result of the call that broke the graph, e.g. `x.sum().item()`),
    which the resume function takes as an input."""
    at = _resume_break(function)
    if at is None:
        return
    for failure in failures:
        stack = re.match(_STACK, failure.subject or "")
        if stack is not None:
            name = stack[1] or stack[2]
            failure.explanation = failure.explanation.replace(name, _stack_words(name, at), 1)


def name_changes(changes: Sequence[InputChange], function: SourceLocation | None) -> None:
    """Each change's input as the code names it (`name`): `L['self']._modules['fc']` is
    `self.fc`, and a resume function's `___stack0` the value its graph break left on the stack."""
    at = _resume_break(function) if any("___stack" in c.input for c in changes) else None
    for change in changes:
        stack = re.match(_STACK, change.input) if at is not None else None
        change.name = _stack_words(stack[1] or stack[2], at) if stack and at else said_name(change.input)


def _entry_of(reason: str | None) -> str | None:
    found = frame_compile_from_text(reason, prefix=True)
    return None if found is None else found.display


def _frame_key(display: str | None) -> CompileId | None:
    return frame_compile_from_text(display, prefix=True)


def input_changes(before: Iterable[TensorInput], after: Iterable[TensorInput]) -> list[InputChange]:
    """How the tensor inputs differ, field by field, matched by source."""
    old = {t.source: t for t in before}
    new = {t.source: t for t in after}
    changes: list[InputChange] = []
    for source in [*old, *(s for s in new if s not in old)]:
        a, b = old.get(source), new.get(source)
        if a is None or b is None:
            changes.append(_presence(source, a is not None, b is not None))
            continue
        for what, x, y in (
            ("rank", _rank(a), _rank(b)),
            ("size", a.size, b.size),
            ("stride", a.stride, b.stride),
            ("dtype", a.dtype, b.dtype),
            ("device", a.device, b.device),
            ("requires_grad", a.requires_grad, b.requires_grad),
            ("dynamic_dims", a.dynamic_dims, b.dynamic_dims),
            ("marked_dynamic", a.marked_dynamic, b.marked_dynamic),
        ):
            if x != y:
                changes.append(InputChange(input=source, what=what, before=_text(x), after=_text(y)))
    return changes


def _said(changes: Sequence[InputChange], change: InputChange) -> bool:
    return any((c.input, c.what) == (change.input, change.what) for c in changes)


def _rank(t: TensorInput) -> int | None:
    return None if t.size is None else len(t.size)


def _presence(source: str, before: bool, after: bool) -> InputChange:
    """An input one side has: Dynamo passes a float it made dynamic to the graph as a tensor
    (`___as_tensor(L['s'])`), which says the float went from static to dynamic, not an input."""
    scalar = as_tensor_of(source)
    if scalar:
        return InputChange(input=scalar, what="dynamic", before=_dynamic(before), after=_dynamic(after))
    return InputChange(input=source, what="presence", before=_yes(before), after=_yes(after))


def _yes(present: bool) -> str:
    return "present" if present else "absent"


def _dynamic(dynamic: bool) -> str:
    return "dynamic" if dynamic else "static"


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def entries(fold: CompileFold) -> list[CompileEntry]:
    """One entry per compile id, in manifest order (`[-/-]` first), each recompile caused by a
    size with its `fix` (analyse/fold/fixes.py; `fold.symbols` gets the recompiles they failed)."""
    return [entry for found in frame_entries(fold) for entry in found]


def frame_entries(fold: CompileFold) -> Iterator[list[CompileEntry]]:
    """`entries`, one frame's at a time (frames in manifest order); the fold is over (each frame
    goes to its store after its turn)."""
    symbols: dict[str, list[Symbol]] = {}
    for symbol in fold.symbols.result():
        if symbol.compile_id is not None:
            symbols.setdefault(_frame_text(symbol.compile_id), []).append(symbol)
    guards = fold.symbols.guard_frames
    exported = fold.exports.exported_ids
    resumes = Resumes(fold.user)
    for frame, state in fold.frames.in_order():
        frames = _Frames(fold, frame, state)
        found = [_entry(acc, frames) for acc in sorted(state.accs.values(), key=lambda a: compile_id_order(a.cid))]
        # A fix reads the symbols and compiles of its own frame only (fixes.py's _Frame, by text).
        texts = dict.fromkeys(_frame_text(e.frame_compile) for e in found)
        own = [s for text in texts for s in symbols.pop(text, ())]
        attach_fixes(found, own, guards, exported, fold.dynamic.knows_sources, resumes)
        resumes.note(found)
        fold.dynamic.attach_why(found, own, bool(fold.exports.calls))
        if fold.compiled_autograd:
            drop_model_fixes(found)
        yield found
    # The symbols of no compile: their fixes read no compile (a specialisation's `entry` is None).
    left = [s for group in symbols.values() for s in group]
    attach_fixes([], left + [s for s in fold.symbols.result() if s.compile_id is None], guards, exported)


def _frame_text(display: str) -> str:
    """The frame part of a compile id's display (`[0/1_2]` -> `[0`), as fixes.py groups them."""
    return display.rsplit("/", 1)[0]


def _entry(acc: CompileAcc, frames: _Frames) -> CompileEntry:
    restarted_as = frames.next_attempt(acc) if acc.cid.frame_compile_id is not None else None
    holder = frames.holder(acc)
    frame_time = frames.times.get(frame_of(acc.cid)) if holder else None
    frame = frame_of(acc.cid)
    attempt0 = CompileId(frame.compiled_autograd_id, frame.frame_id, frame.frame_compile_id, 0)
    stack = acc.stack or _shared_stack(acc, frames)
    function = _function(acc, frames) or _shared_function(acc, frames)
    entry = CompileEntry(
        id=acc.cid.display,
        dir=acc.cid.dirname,
        status=status_of(acc, restarted_as),
        frame_compile=attempt0.display if acc.cid.frame_compile_id is not None else acc.cid.display,
        restarted_as=restarted_as,
        is_recompile=bool(acc.cid.frame_compile_id),
        function=function,
        stack=stack,
        user_frame=frames.fold.user.innermost(stack),
        time=frames.timing(acc) if holder else None,
        phases=frame_time.phases() if frame_time is not None else [],
        graph_breaks=acc.graph_breaks,
        restart_reasons=acc.restart_reasons,
        recompile=frames.recompile(acc) if holder and acc.cid.frame_compile_id else None,
        failure=_failure(acc, frames.fold.user),
        cache=acc.cache,
        metrics=acc.metrics,
        metrics_records=acc.records,
        inputs=frames.inputs(frame) if acc.cid.frame_compile_id is not None else list(acc.inputs.values()),
        graphs=acc.graphs,
        code=acc.code,
        guards=acc.guards,
        events=acc.events,
        raw_lines=acc.raw_ranges,
        log_lines=acc.log_lines,
        capture=acc.capture,
        collective_schedules=acc.schedules or msgspec.UNSET,
        module=_module(acc, frames, function) or msgspec.UNSET,
        unfinished=_unfinished(acc, frame_time) or msgspec.UNSET,
    )
    backward = backward_s(entry)
    if backward > 0:
        entry.backward_s = round(backward, 6)
    if acc.blocks is not None and entry.status in ("ok", "graph_break"):  # a failure's answer is its own
        module = entry.module if isinstance(entry.module, str) else None
        # Where the module is called: the blocks must be compiled before that (the stack's last
        # frame is the compiled function's own, or torch's wrapper's).
        caller = frames.fold.user.innermost(stack[:-1])
        entry.time_fix = time_fix(acc.blocks, compile_seconds(entry), module, caller) or msgspec.UNSET
    return entry


def _unfinished(acc: CompileAcc, frame_time: FrameTime | None) -> list[str]:
    """The phases a compile with no metrics record was still in when the log ended: torch logs a
    compile's metrics when it ends, failed or not, so the process stopped (killed, out of memory,
    a crash) or the log was cut while it compiled."""
    if acc.metrics is not None or acc.records or frame_time is None:
        return []
    return frame_time.unfinished()


def aot_inductor(fold: CompileFold) -> list[AotInductorCompile]:
    """compiles.json's `aot_inductor`: each `compile_fx_aot` span's compile (capture.py's AotiSpans)."""
    pairs = zip(fold.aoti.accs, fold.aoti.times, strict=True)
    return [_aoti(index, acc, times, fold.user) for index, (acc, times) in enumerate(pairs)]


def _aoti(index: int, acc: CompileAcc, times: FrameTime, user: UserCode) -> AotInductorCompile:
    return AotInductorCompile(
        index=index,
        status=compile_status(
            outside=False,
            failed=acc.failure is not None and not acc.recovered,
            restarted=False,
            broke=False,
            has_metrics=acc.metrics is not None,
            empty=False,
            cache_hit=False,
        ),
        user_frame=user.innermost(acc.stack),
        stack=acc.stack,
        time=acc.capture_time,
        phases=times.phases(),
        failure=_failure(acc, user),
        cache=acc.cache,
        metrics=acc.metrics,
        metrics_records=acc.records,
        graphs=acc.graphs,
        code=acc.code,
        log_lines=acc.log_lines,
    )


def _failure(acc: CompileAcc, user: UserCode) -> Failure | None:
    failure, frame = acc.failure, acc.error_frame
    if failure is None:
        return None
    if acc.traceback is not None:
        failure.traceback = acc.traceback
    # The metrics give file and line only; the traceback's frame adds the function and the source
    # line (taken when it is the same place, or when the metrics named none, or library code the
    # traceback's user frame was reached from).
    told = failure.user_frame
    same = told is not None and (told.file, told.line) == (frame.file, frame.line) if frame is not None else False
    if frame is not None and (told is None or same or (not user.is_user(told.file) and user.is_user(frame.file))):
        failure.user_frame = frame
    if failure.reason == OBSERVED:
        # The metrics say only that the user's code raised; the compile's break names what.
        failure.reason = next((g.reason for g in acc.graph_breaks if g.reason.startswith(f"{OBSERVED}: ")), OBSERVED)
    return failure


def _module(acc: CompileAcc, frames: _Frames, function: SourceLocation | None) -> str | None:
    """The module class the wrapper compiled, from any attempt's guards (a restarted attempt
    logs none); for compiled autograd's graph, the name torch gives it (`CompiledAutograd0`)."""
    attempts = frames.attempts.get(frame_of(acc.cid), ())
    found = acc.module or next((a.module for a in attempts if a.module), None)
    if found is None and _method(function):
        found = acc.self_class or next((a.self_class for a in attempts if a.self_class), None)
    if found is None and _method(function) and function == frames.function:
        # Another compile of the same code (a frame id is one code object until torch._dynamo.reset()):
        # a compile that failed before its guards, named by its recompile's.
        found = frames.self_class()
    return found or _autograd_graph(acc.cid, function)


def _method(function: SourceLocation | None) -> bool:
    """Whether `self`'s class names `function`: a user's function, not a resume function (whose
    `self` is the method's it resumes) nor code torch generated (`<eval_with_key>.5`)."""
    if function is None or not function.name or resumed(function.name) is not None:
        return False
    return not (function.file or "<").startswith("<")


def _autograd_graph(cid: CompileId, function: SourceLocation | None) -> str | None:
    """`CompiledAutogradN` when this compile traced the backward graph capture N made: its
    function is the `forward` of a GraphModule torch generated (`<eval_with_key>.5`), torch's
    class `CompiledAutograd{N}` (torch/_dynamo/compiled_autograd.py)."""
    if cid.compiled_autograd_id is None or cid.frame_id is None or function is None:
        return None
    generated = (function.file or "").startswith("<eval_with_key>")
    return f"CompiledAutograd{cid.compiled_autograd_id}" if generated and function.name == "forward" else None


def _shared_function(acc: CompileAcc, frames: _Frames) -> SourceLocation | None:
    """The function of another attempt, else of another compile of the same frame id (a compile that
    failed early, e.g. at the recompile limit, logs neither its code object nor its stack)."""
    found = next((a.function for a in frames.attempts.get(frame_of(acc.cid), ()) if a.function is not None), None)
    if found is None and acc.cid.frame_id is not None:
        found = frames.function
    return found


#: Where Dynamo's own frame evaluation lives: never the function it compiles (external_utils.py,
#: also Dynamo's, holds `inner`, the wrapper it does compile for a module's forward).
_DYNAMO_OWN = ("torch/_dynamo/convert_frame.py", "torch/_dynamo/eval_frame.py")


def _function(acc: CompileAcc, frames: _Frames) -> SourceLocation | None:
    """The compiled function: the stack's innermost frame, unless the code object the metrics
    name (this attempt's, else another attempt's of the same frame compile) is another function.
    An older torch logged `dynamo_start`'s stack without the frame it compiles: its innermost
    frame is Dynamo's own (`_convert_frame`, `_fn` in eval_frame.py) or the caller (a resume
    function's stack ends in the function it resumes)."""
    found = acc.function
    named = next((r for r in acc.records if r.co_name), None)
    if named is None:
        attempts = frames.attempts.get(frame_of(acc.cid), ())
        named = next((r for a in attempts for r in a.records if r.co_name), None)
    if named is None:
        return found
    own = found is not None and found.file is not None and found.file.replace("\\", "/").endswith(_DYNAMO_OWN)
    if found is not None and found.name == named.co_name and not own:
        return found
    return SourceLocation(file=named.co_filename, line=named.co_firstlineno, name=named.co_name)


def _shared_stack(acc: CompileAcc, frames: _Frames) -> list[SourceLocation]:
    return next((a.stack for a in frames.attempts.get(frame_of(acc.cid), ()) if a.stack), [])
