"""What to change so a size does not recompile (issue 23, point 4): each recompile's `fix`.

A recompile is caused by a size when the guard failure that explains it (`recompile.recommended`)
is of kind `size` (an entry specialised on a size, and the call had another), `dynamic_range`
(a dynamic entry's `2 <= x.size()[0]` failed: sizes 0 and 1 are always specialised) or
`dim_marking` (the call's tensor is marked dynamic and the entries were not, or the reverse).
The change that avoids it is decided here once, from the log's facts only:

- `size`: mark the dimension dynamic before the call, so the first compile is already dynamic
  (`torch._dynamo.mark_dynamic(x, 0)`); `maybe_mark_dynamic` when a size of 0 or 1 was seen on
  it (mark_dynamic raises when the compile specialises the dimension, which it does for 0 and
  1). When the recompile specialised that dimension again (`symbolic_shape_specialization`),
  marking cannot help: `change_code` when another compile of the function kept it dynamic (the
  code singles out this size, e.g. `if x.shape[0] == 5`: the fix is at that line), `dynamic_false`
  when every one specialised it (e.g. `range(x.shape[0])`: a dynamic graph is never kept, and
  `torch.compile(..., dynamic=False)` saves the attempt); a module's parameter or buffer, whose
  sizes Dynamo keeps static whatever marks them: `dynamic_parameters`, the two settings that do;
  a size after an entry compiled for size 0 or 1: `mark_unbacked` (that entry held for it alone);
- `dynamic_range`: `torch._dynamo.decorators.mark_unbacked(x, 0)`, whose dimension is not specialised on 0
  and 1 (or accept one more graph for that size);
- `dim_marking`: mark the same dimension before every call of the function (or none).

The user's line is the call that entered the input: the innermost user frame of the new
compile's `create_symbol` stacks (every symbol of a compile is created during the same call).
A resume function's (`torch_dynamo_resume_in_f_at_4`, the rest of `f` after a graph break) is
`f`'s own line at the break, inside the compiled function, where no mark_dynamic can go: an input
`f` got from its caller is marked at the user's call of `f` instead (the same tensor, so both
graphs are dynamic at once); an input made inside `f` no marking reaches, and the fix is the
graph break's line (`change_code`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from tlscope.analyse.fold.guards import input_name
from tlscope.analyse.fold.resume import base_name, resumed
from tlscope.analyse.fold.symbols import size_refs
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import CompileEntry, Fix, GuardFailure, SourceLocation, Specialization, Symbol
from tlscope.model.compile_id import CompileId

_SIZE_INDEX = re.compile(r"size mismatch at index (?P<dim>\d+)\.")
_SYMBOL = re.compile(r"\b(?P<name>s\d+)\b")


class _Frame:
    """The compiles of one frame and the symbols of each (by frame compile display id)."""

    def __init__(
        self,
        compiles: Sequence[CompileEntry],
        symbols: Sequence[Symbol],
        knows_sources: bool = False,
        resumes: Resumes | None = None,
    ) -> None:
        #: Whether the run's torch has TORCH_COMPILE_DYNAMIC_SOURCES (analyse/fold/dynamic.py).
        self.knows_sources = knows_sources
        #: The inputs of the functions compiled so far, for a resume function's fix.
        self.resumes = resumes
        frame_of = {c.id: c.frame_compile for c in compiles}
        self.symbols: dict[str, list[Symbol]] = {}
        for symbol in symbols:
            if symbol.compile_id is not None:
                key = frame_of.get(symbol.compile_id, symbol.compile_id)
                self.symbols.setdefault(key, []).append(symbol)
        self.compiles = compiles

    def frame_symbols(self, entry: CompileEntry) -> list[Symbol]:
        """The symbols of every compile of `entry`'s frame."""
        frame = entry.frame_compile.rsplit("/", 1)[0]
        return [s for key, found in self.symbols.items() if key.rsplit("/", 1)[0] == frame for s in found]

    def sizes(self, source: str, dim: int, entry: CompileEntry) -> list[int | str]:
        """Every concrete size seen on (source, dim) in the compiles of `entry`'s frame."""
        found: list[int | str] = []
        frame = entry.frame_compile.rsplit("/", 1)[0]
        for c in self.compiles:
            if c.frame_compile.rsplit("/", 1)[0] != frame:
                continue
            for t in c.inputs:
                if t.source == source and t.size is not None and dim < len(t.size):
                    found.append(t.size[dim])
        return found


def attach_fixes(
    compiles: Sequence[CompileEntry],
    symbols: Sequence[Symbol],
    guard_frames: Mapping[tuple[str | None, str], tuple[str, SourceLocation]] | None = None,
    exported: Collection[str] = (),
    knows_sources: bool = False,
    resumes: Resumes | None = None,
) -> None:
    """Give each recompile caused by a size its `fix`, each symbol the recompiles it failed, and
    each specialisation and guarded dimension of an input its own `fix` (a specialisation need not
    be a recompile: it may be the first compile, or one whose other sizes are still to come);
    `guard_frames`: per (compile id, symbol) its first guard with the user line traced then;
    `exported`: the compile ids strict torch.export traced (ExportFold.exported_ids);
    `knows_sources`: the run's torch has TORCH_COMPILE_DYNAMIC_SOURCES (a kept-static size's fix names it);
    `resumes`: the functions compiled in the frames before, which a resume function's fix reads."""
    frames = _Frame(compiles, symbols, knows_sources, resumes)
    attribute_fixes = _attribute_fixes(compiles, knows_sources)
    for entry in compiles:
        recompile = entry.recompile
        if recompile is None or not recompile.guard_failures:
            continue
        _link_failures(entry, frames)
        index = recompile.recommended.index if recompile.recommended is not None else 0
        recompile.fix = as_the_caller_says(fix_for(entry, recompile.guard_failures[index], frames), entry)
    for entry in compiles:  # not a size: a module's int attribute, again and again
        if entry.recompile is not None and entry.recompile.fix is None:
            entry.recompile.fix = attribute_fixes.get(entry.id)
    by_id = {c.id: c for c in compiles}
    for symbol in symbols:
        if symbol.what == "value" and symbol.input is not None and symbol.input_source is not None:
            _value_specialised(symbol, by_id.get(symbol.compile_id or ""))
            continue
        if symbol.input is None or symbol.input_source is None or symbol.dim is None or symbol.what != "size":
            continue
        owner = by_id.get(symbol.compile_id or "")
        for spec in symbol.specializations:
            spec.fix = as_the_caller_says(
                specialisation_fix(symbol, spec, frames, owner, symbol.compile_id in exported), owner
            )
        guarded = (guard_frames or {}).get((symbol.compile_id, symbol.symbol))
        if not symbol.specializations and guarded is not None:
            symbol.fix = as_the_caller_says(guard_fix(symbol, *guarded), owner)


def _value_specialised(symbol: Symbol, owner: CompileEntry | None) -> None:
    """An int input made dynamic after it changed (automatic dynamic shapes) whose value the code
    then needed (`for _ in range(n)` unrolls a loop): each specialisation's fix is that line, and
    so is the fix of the recompile its change caused, when it has none (the value changed)."""
    for spec in symbol.specializations:
        frame = spec.user_frame
        if frame is None or not frame.code or symbol.input is None or symbol.input_source is None:
            continue
        value, reason = spec.value or "?", spec.reason or "a guard fixed its value"
        spec.fix = Fix(
            kind="change_code",
            input=symbol.input,
            source=symbol.input_source,
            code=frame.code,
            where=frame,
            why=(
                f"the code at {_at(frame)} specialised {symbol.input} ({symbol.symbol}) to {value} ({reason}) in "
                f"{symbol.compile_id}: torch made it dynamic when it changed, but this line needs its value, so "
                f"every value compiles its own graph until the recompile limit. Change that line so it does not "
                f"need the value{_unrolled(frame.code, symbol.input)}, or raise "
                f"torch._dynamo.config.recompile_limit above the number of values it takes"
            ),
        )
        recompile = owner.recompile if owner is not None else None
        failure = recompile.shown_failure() if recompile is not None else None
        # The recompile by this value: its first specialisation's line (the value's first use).
        said = failure is not None and failure.kind == "value" and failure.subject == symbol.input
        if recompile is not None and recompile.fix is None and said:
            recompile.fix = spec.fix


def _unrolled(code: str, name: str) -> str:
    """How to keep a loop over `range(name)` from needing the value, when the line is one."""
    if "range(" not in code:
        return ""
    return f" (a loop over range({name}) is unrolled: loop outside the compiled function and compile its body)"


def _attribute_fixes(compiles: Sequence[CompileEntry], knows_sources: bool) -> dict[str, Fix]:
    """value_fixes.py's fixes of a frame that recompiled (imported then: most logs never do)."""
    if not any(entry.recompile is not None for entry in compiles):
        return {}
    from tlscope.analyse.fold.value_fixes import repeated_value_fixes

    return repeated_value_fixes(compiles, knows_sources)


def as_the_caller_says(fix: Fix | None, owner: CompileEntry | None = None) -> Fix | None:
    """`fix` with its code naming the input as the line it goes before does (`batch`, where the
    compiled function says `args[0]`), when that line leaves no doubt (analyse/fold/caller.py);
    `owner`: the compile it is about, whose function the line calls (a resume function's: the
    function it resumes)."""
    if fix is None or fix.where is None:
        return fix
    fn = owner.function.name if owner is not None and owner.function is not None else None
    called = base_name(fn) if fn else None
    from tlscope.analyse.fold.caller import caller_argument  # a log with a fix: few do

    names = list(dict.fromkeys(re.findall(r"\(([^,()]+), \d+\)", fix.code)))  # each input it marks
    for name in names:
        said = caller_argument(fix.where.code, name, called)
        if said is None or said == name:
            continue
        fix.code = fix.code.replace(f"({name}, ", f"({said}, ", 1)
        fix.why += f" (the line before which it goes passes {'it' if len(names) == 1 else name} as {said})"
    return fix


def _link_failures(entry: CompileEntry, frames: _Frame) -> None:
    assert entry.recompile is not None
    for failure in entry.recompile.guard_failures:
        if failure.kind != "dynamic_range":
            continue
        for symbol in _failed_symbols(failure, frames):
            if entry.id not in symbol.failed_in:
                symbol.failed_in.append(entry.id)


def _failed_symbols(failure: GuardFailure, frames: _Frame) -> list[Symbol]:
    """The symbols of the failed entry that its `dynamic_range` guard is about."""
    own = frames.symbols.get(failure.cache_entry, [])
    named = {m["name"] for m in _SYMBOL.finditer(failure.guard)}
    dims = set(size_refs(failure.guard))
    return [
        s
        for s in own
        if s.symbol in named or (s.input is not None and s.dim is not None and (_local(s.input), s.dim) in dims)
    ]


def _local(name: str) -> str:
    """A guard prints a local input by its name; Dynamo's `L['x']` is `x` there."""
    return input_name(name)


#: Functions whose inputs `Resumes` keeps: a bound for a log that compiles without end.
MAX_FUNCTIONS = 10_000


class Resumed(NamedTuple):
    """A resume function's compile: the function it resumes, its line at the break (where the
    resume function is entered), the user's call of that function, and that function's inputs."""

    function: str
    at: SourceLocation
    caller: SourceLocation | None
    inputs: frozenset[str]


class Resumes:
    """The tensor inputs of each function compiled so far that are its own locals, by (file
    name, function name): a
    resume function (`torch_dynamo_resume_in_f_at_4`, the rest of `f` after a graph break) gets
    its inputs from `f`'s own line at the break, and whether an input was `f`'s own parameter
    decides where its fix goes. `f` is always compiled first, so its frame comes earlier."""

    def __init__(self, user: UserCode) -> None:
        self.user = user
        self.inputs: dict[tuple[str, str], set[str]] = {}

    def note(self, entries: Sequence[CompileEntry]) -> None:
        """Keep the inputs of one frame's compiles, once its fixes are made."""
        for entry in entries:
            fn = entry.function
            if fn is None or fn.name is None:
                continue
            key = (_base(fn.file), fn.name)
            if key in self.inputs or len(self.inputs) < MAX_FUNCTIONS:
                # Its own locals only (`L['x']`), what a resume function can be passed: a model's
                # parameters, hundreds of inputs a frame, never are.
                own = (t.source for t in entry.inputs if t.source.startswith("L['") and t.source.count("'") == 2)
                self.inputs.setdefault(key, set()).update(own)

    def resumed(self, entry: CompileEntry, where: SourceLocation | None) -> Resumed | None:
        """When `entry` compiles a resume function and `where` (its symbols' user line) is the
        line of the function it resumes at the break: what `Resumed` holds, the caller being the
        innermost user frame of the compile's stack outside its own frame."""
        found = resumed(entry.function.name) if entry.function is not None and where is not None else None
        if found is None or where is None:
            return None
        function = found[0]
        if where.name != function and base_name(where.name or "") != function:
            return None
        inputs = frozenset(self.inputs.get((_base(where.file), function), ()))
        return Resumed(function, where, self.user.innermost(entry.stack[:-1]), inputs)


def _base(file: str | None) -> str:
    return (file or "").replace("\\", "/").rsplit("/", 1)[-1]


def _break_fix(entry: CompileEntry, failure: GuardFailure, resumed: Resumed) -> Fix | None:
    """A resume function's size recompile on a tensor made inside the function it resumes: no
    mark_dynamic before a call reaches it; the graph break that made the resume function does."""
    found = _SIZE_INDEX.search(failure.guard)
    if found is None or failure.subject is None:
        return None
    name, dim, function = failure.subject, int(found["dim"]), resumed.function
    resume = entry.function.name if entry.function is not None else "the resume function"
    return Fix(
        kind="change_code",
        input=name,
        source=_source_of(entry, name),
        dim=dim,
        code=(resumed.at.code or "").strip(),
        where=resumed.at,
        why=(
            f"{name} is made inside {function}; the graph break at this line runs the rest of {function} as "
            f"a function of its own ({resume}) that takes {name} as an input, compiled for one size of it "
            f"and again for another ({failure.expected} -> {failure.actual}). No mark_dynamic before a call "
            f"reaches a tensor made inside the compiled function: removing the graph break keeps {name} in "
            f"one graph, dynamic with the inputs it is made from. Else this recompile made it dynamic, and "
            f"later sizes reuse it"
        ),
    )


def fix_for(entry: CompileEntry, failure: GuardFailure, frames: _Frame) -> Fix | None:
    """The change that avoids `entry`'s recompile, when `failure` (the explaining one) is about a size."""
    own = frames.symbols.get(entry.frame_compile, [])
    where = next((s.entered_at for s in own if s.entered_at is not None), None)
    resumed = frames.resumes.resumed(entry, where) if frames.resumes is not None else None
    if resumed is not None:
        if _source_of(entry, failure.subject or "") not in resumed.inputs:
            return _break_fix(entry, failure, resumed) if failure.kind == "size" else None
        where = resumed.caller or where  # f's own parameter: marked where f is called
    if failure.kind == "size":
        return _with_others(_size_fix(entry, failure, frames, own, where), entry, own)
    if failure.kind == "dynamic_range":
        return _range_fix(entry, failure, frames, where)
    if failure.kind == "dim_marking":
        return _marking_fix(entry, failure, where)
    return None


def _source_of(entry: CompileEntry, name: str) -> str:
    """Dynamo's source of the input a tensor guard names (`x` -> `L['x']`; a module's parameter as
    the guard names it, `self._modules['a']._parameters['weight']`, or as the code does)."""
    said = input_name(name)
    return next((t.source for t in entry.inputs if input_name(t.source) == said), f"L['{name}']")


def _size_fix(
    entry: CompileEntry, failure: GuardFailure, frames: _Frame, own: list[Symbol], where: SourceLocation | None
) -> Fix | None:
    found = _SIZE_INDEX.search(failure.guard)
    if found is None or failure.subject is None:
        return None
    name, dim = failure.subject, int(found["dim"])
    source = _source_of(entry, name)
    symbol = next((s for s in own if s.input_source == source and s.dim == dim and s.what == "size"), None)
    if symbol is None and _MODULE_TENSOR.search(source):
        return _parameter_fix(input_name(source), source, dim, failure)
    if symbol is not None and symbol.specializations:
        others = [
            s for s in frames.frame_symbols(entry) if s is not symbol and (s.input_source, s.dim) == (source, dim)
        ]
        shared = next((s.compile_id for s in others if not s.specializations), None)
        return _specialised_fix(name, source, dim, symbol, where, shared)
    if failure.actual in ("0", "1"):
        return _to_specialised(name, source, dim, failure, where)
    if failure.expected in ("0", "1"):
        return _from_specialised(name, source, dim, failure, where)
    sizes = frames.sizes(source, dim, entry)
    small = sorted({str(s) for s in sizes if str(s) in ("0", "1")})
    dynamic = symbol is not None or any(t.source == source and dim in t.dynamic_dims for t in entry.inputs)
    how = (
        f"this recompile made it dynamic ({symbol.symbol}, range {symbol.range})"
        if symbol is not None
        else "this recompile made it dynamic"
        if dynamic
        else "this recompile kept it static (automatic dynamic shapes is off: dynamic=False or config), "
        "so every new size compiles again"
    )
    if small:
        return _marking(
            "maybe_mark_dynamic",
            name,
            source,
            dim,
            where,
            (
                f"{_size_changed(name, dim, failure)}; {how}. This function was also called with "
                f"size {' and '.join(small)} on that dimension, which is always specialised, so mark_dynamic "
                f"would raise on such a tensor: maybe_mark_dynamic on the tensor passed as {name}, before "
                f"its first call, makes the first graph dynamic where it can"
            ),
        )
    why = (
        f"{_size_changed(name, dim, failure)}; {how}. Marking dim {dim} of the tensor passed as "
        f"{name} dynamic, before its first call, compiles the dynamic graph at once"
        f"{_other_way(source, dim, dynamic, frames.knows_sources)}"
    )
    return _marking("mark_dynamic", name, source, dim, where, why)


def _with_others(fix: Fix | None, entry: CompileEntry, own: Sequence[Symbol]) -> Fix | None:
    """A marking fix that marks, too, the other inputs whose size the call changed on a dimension
    this recompile made dynamic (a batch's labels beside its data: `out - target` ties their
    sizes): marked alone, the first graph specialises the one against the others, and
    mark_dynamic raises (corpus break_batch's `step(batch, target)`)."""
    if fix is None or fix.kind not in ("mark_dynamic", "maybe_mark_dynamic") or fix.dim is None:
        return fix
    others = _also_changed(entry, own, fix.source, fix.dim)
    if not others:
        return fix
    call = fix.code.split("(", 1)[0]
    fix.code = "; ".join([fix.code, *(f"{call}({name}, {dim})" for name, dim in others)])
    said = " and ".join(f"dim {dim} of {name}" for name, dim in others)
    fix.why += (
        f"; this recompile made {said} dynamic too, whose size changed with it: marked alone, {fix.input} "
        "would be specialised against it in the first graph, and mark_dynamic raises"
    )
    return fix


def _also_changed(entry: CompileEntry, own: Sequence[Symbol], source: str, dim: int) -> list[tuple[str, int]]:
    """(input, dimension) of the new compile's size symbols, other than `source`'s `dim`, on a
    dimension whose size the recompile's `changes` say the call changed."""
    changes = {c.input: c for c in entry.recompile.changes if c.what == "size"} if entry.recompile else {}
    found: list[tuple[str, int]] = []
    for s in own:
        if s.what != "size" or s.input is None or s.dim is None or s.input_source is None:
            continue
        change = changes.get(s.input_source)
        key = (s.input, s.dim)
        if change is None or (s.input_source, s.dim) == (source, dim) or key in found:
            continue
        if _dim_changed(change.before, change.after, s.dim):
            found.append(key)
    return found


def _dim_changed(before: str | None, after: str | None, dim: int) -> bool:
    """Whether two printed sizes (`[32, 16]`, `[4, 16]`) differ at `dim`."""
    a, b = (re.findall(r"[^\[\],\s]+", text or "") for text in (before, after))
    return dim < len(a) and dim < len(b) and a[dim] != b[dim]


def _other_way(source: str, dim: int, dynamic: bool, knows_sources: bool) -> str:
    """The alternative to marking: kept static, dynamic=False is what the run did, so the setting
    that overrides it without changing code (analyse/fold/dynamic.py recommends it when torch
    learned); made dynamic, one static graph per size when only a few occur."""
    left = (
        "Left as it is, each new size is one more compile until the recompile limit, after which the "
        "function runs uncompiled"
    )
    if not dynamic and knows_sources:
        return (
            f'; or, without changing code, TORCH_COMPILE_DYNAMIC_SOURCES="{source}:{dim}" (it overrides '
            f"dynamic=False). {left}"
        )
    if not dynamic:
        return f". {left}"  # this torch has no TORCH_COMPILE_DYNAMIC_SOURCES to name
    return ". If only a few sizes ever occur, torch.compile(..., dynamic=False) keeps one static graph per size instead"


def _specialised_fix(
    name: str, source: str, dim: int, symbol: Symbol, where: SourceLocation | None, shared: str | None
) -> Fix:
    """The recompile made the dimension dynamic and the code specialised it again: when another
    compile kept it dynamic (`shared`), the code singles out this size (`change_code`); when every
    one specialised it, no dynamic graph is ever kept (`dynamic_false`)."""
    spec = symbol.specializations[0]
    frame = spec.user_frame
    if shared is not None and frame is not None and frame.code:
        at = _at(frame)
        return Fix(
            kind="change_code",
            input=name,
            source=source,
            dim=dim,
            code=frame.code,
            where=frame,
            why=(
                f"the code at {at} specialised dim {dim} of {name} to {spec.value} ({spec.reason or 'a guard'}): "
                f"that size gets a graph of its own whatever is marked (mark_dynamic would raise on it), "
                f"while other sizes share the dynamic graph of {shared}. To avoid this recompile, change "
                f"that line so it does not single out the size, or accept one graph for size {spec.value}"
            ),
        )
    return Fix(
        kind="dynamic_false",
        input=name,
        source=source,
        dim=dim,
        code="torch.compile(..., dynamic=False)",
        where=spec.user_frame or where,
        why=(
            f"the recompile made dim {dim} of {name} dynamic ({symbol.symbol}) but the code specialised it "
            f"again ({spec.reason or 'a guard fixed its value'}), as every compile of this function that "
            f"made it dynamic did: no dynamic graph is kept, so each new size compiles a dynamic attempt for "
            f"nothing (marking it dynamic would raise). Compile with dynamic=False (one static graph per "
            f"size, compiled once), or change the code at that line"
        ),
    )


def _marking(kind: str, name: str, source: str, dim: int, where: SourceLocation | None, why: str) -> Fix:
    """A fix that marks dim `dim` of the tensor passed as `name` (`torch._dynamo.<kind>(x, 0)`;
    mark_unbacked is not exported there, only from `torch._dynamo.decorators`, torch 2.13)."""
    module = "torch._dynamo.decorators" if kind == "mark_unbacked" else "torch._dynamo"
    return Fix(
        kind=kind, input=name, source=source, dim=dim, code=f"{module}.{kind}({name}, {dim})", where=where, why=why
    )


def _size_changed(name: str, dim: int, failure: GuardFailure) -> str:
    """`the size of x on dim 0 changed (4 -> 6) after [0/0] was compiled for one size`."""
    return (
        f"the size of {name} on dim {dim} changed ({failure.expected} -> {failure.actual}) after "
        f"{failure.cache_entry} was compiled for one size"
    )


def _to_specialised(name: str, source: str, dim: int, failure: GuardFailure, where: SourceLocation | None) -> Fix:
    """A call whose size is 0 or 1 where the entry was compiled for another: Dynamo specialises
    0 and 1 whatever marks the tensor (mark_dynamic raises, maybe_mark_dynamic gives way), so
    only an unbacked dimension spares the graph (a one-token decode step after a prompt)."""
    why = (
        f"{_size_changed(name, dim, failure)}; a size of 0 or 1 is always specialised, so "
        f"this recompile compiled a graph for size {failure.actual} alone, which no mark_dynamic or "
        f"maybe_mark_dynamic avoids. mark_unbacked on the tensor passed as {name}, before its first call, "
        f"compiles one graph for every size, 0 and 1 included, as long as the code does not branch on "
        f"that size; otherwise this graph is the cost of size {failure.actual}"
    )
    return _marking("mark_unbacked", name, source, dim, where, why)


#: A module's parameter or buffer as Dynamo's sources name it (`._parameters['weight']`).
_MODULE_TENSOR = re.compile(r"\._(?:parameters|buffers)\['")
#: What makes a module's tensors' sizes dynamic like an input's (torch/_dynamo/utils.py
#: `is_static_input`): a parameter's, and those of a torch.nn built-in module's (nn.Linear).
PARAMETER_CODE = (
    "torch._dynamo.config.force_parameter_static_shapes = False; "
    "torch._dynamo.config.force_nn_module_property_static_shapes = False"
)


def _parameter_fix(name: str, source: str, dim: int, failure: GuardFailure) -> Fix:
    """A module's parameter or buffer whose size changed (an adapter of another rank swapped in):
    Dynamo keeps their sizes static whatever marks them, so automatic dynamic shapes never makes
    it dynamic and mark_dynamic is ignored (checked on torch 2.13: five adapter ranks, 4 compiles
    with mark_dynamic on the weights; 2 with both settings off, 1 with the marks too)."""
    why = (
        f"{_size_changed(name, dim, failure)}; {name} is a module's tensor, whose sizes Dynamo keeps "
        f"static (a parameter's, and those of a torch.nn module's such as nn.Linear): automatic dynamic "
        f"shapes never makes it dynamic and mark_dynamic on it is ignored, so every new size compiles "
        f"again until the recompile limit. Set before the first compile, these two settings make its size "
        f"dynamic once it changes, as an input's is"
    )
    return Fix(kind=PARAMETER_KIND, input=name, source=source, dim=dim, code=PARAMETER_CODE, why=why)


#: The fix kind of a module's tensor's size.
PARAMETER_KIND = "dynamic_parameters"


def _from_specialised(name: str, source: str, dim: int, failure: GuardFailure, where: SourceLocation | None) -> Fix:
    """A call of another size where the entry was compiled for size 0 or 1 (a decode loop whose
    first input is one token long): that entry was specialised whatever marked the tensor
    (maybe_mark_dynamic gives way on 0 and 1), so no marking before the first call avoids this
    recompile but an unbacked dimension (checked on torch 2.13: sizes 1, 2, 5, 9 compiled twice
    with maybe_mark_dynamic, once with mark_unbacked)."""
    why = (
        f"{_size_changed(name, dim, failure)}; a size of 0 or 1 is always specialised, so "
        f"{failure.cache_entry} held for size {failure.expected} alone and any other size compiles again, "
        f"whether or not {name} was marked with mark_dynamic or maybe_mark_dynamic. mark_unbacked on the "
        f"tensor passed as {name} at its first call compiles one graph for every size, {failure.expected} "
        f"included, as long as nothing the code runs branches on that size (some operators do: then this "
        f"graph is the cost of starting at size {failure.expected})"
    )
    return _marking("mark_unbacked", name, source, dim, where, why)


def _range_fix(entry: CompileEntry, failure: GuardFailure, frames: _Frame, where: SourceLocation | None) -> Fix | None:
    symbols = _failed_symbols(failure, frames)
    symbol = next((s for s in symbols if s.input is not None and s.dim is not None), None)
    if symbol is not None and symbol.input is not None and symbol.dim is not None:
        name, dim, source = symbol.input, symbol.dim, symbol.input_source or f"L['{symbol.input}']"
    else:
        refs = size_refs(failure.guard)
        if not refs:
            return None
        name, dim = _local(refs[0][0]), refs[0][1]
        source = _source_of(entry, name)
    size = next((t.size[dim] for t in entry.inputs if t.source == source and t.size and dim < len(t.size)), None)
    why = (
        f"{failure.cache_entry} is dynamic on dim {dim} of {name} but only for the sizes its guard "
        f"`{failure.guard}` allows; this call's size{'' if size is None else f' {size}'} is outside it "
        f"(a dynamic size is always specialised on 0 and 1). mark_unbacked instead of mark_dynamic "
        f"compiles one graph for every size, 0 and 1 included, as long as the code does not branch "
        f"on that size; otherwise this extra graph is the cost of that size"
    )
    return _marking("mark_unbacked", name, source, dim, where, why)


def _marking_fix(entry: CompileEntry, failure: GuardFailure, where: SourceLocation | None) -> Fix | None:
    assert entry.recompile is not None
    for change in entry.recompile.changes:
        if change.what != "marked_dynamic":
            continue
        before, after = _dims(change.before), _dims(change.after)
        dims = sorted(set(after) - set(before)) or sorted(set(before) - set(after))
        if not dims:
            continue
        name, dim = input_name(change.input), dims[0]
        now = "marked" if dim in after else "not marked"
        return Fix(
            kind="mark_dynamic",
            input=name,
            source=change.input,
            dim=dim,
            code=f"torch._dynamo.mark_dynamic({name}, {dim})",
            where=where,
            why=(
                f"{name} is {now} dynamic on dim {dim} in this call, unlike in the call that compiled "
                f"{failure.cache_entry}: the marking is part of the guards, so the entries never match it. "
                f"Mark dim {dim} the same way before every call of the function (from the first), or at none"
            ),
        )
    return None


def _dims(text: str | None) -> list[int]:
    return [int(d) for d in re.findall(r"\d+", text or "")]


def _at(frame: SourceLocation) -> str:
    return f"{(frame.file or '?').rsplit('/', 1)[-1]}:{frame.line}"


def specialisation_fix(
    symbol: Symbol, spec: Specialization, frames: _Frame, entry: CompileEntry | None, exported: bool = False
) -> Fix | None:
    """What to change so dimension `symbol.dim` of its input is not specialised by `spec`, whether
    or not the compile is a recompile: `change_code` at the line that specialised it when the user
    marked the dimension dynamic and the compile failed for it, or when another compile of the
    function kept that dimension dynamic (the code singles out this size), else `dynamic_false`
    (every compile that made it dynamic specialised it: no dynamic graph is kept). A symbol made
    outside a compile is torch.export's, as is one of a compile strict export traced (`exported`):
    the line, always (`_export_fix`)."""
    assert symbol.input is not None and symbol.input_source is not None and symbol.dim is not None
    name, source, dim, value = symbol.input, symbol.input_source, symbol.dim, spec.value or "?"
    others = [] if entry is None else frames.frame_symbols(entry)
    shared = next(
        (
            s.compile_id
            for s in others
            if s is not symbol and (s.input_source, s.dim) == (source, dim) and not s.specializations
        ),
        None,
    )
    frame = spec.user_frame
    reason = spec.reason or "a guard fixed its value"
    if exported or symbol.compile_id == OUTSIDE:
        return _export_fix(symbol, spec, frame)
    if _violated(symbol, entry) and frame is not None and frame.code:
        return _marked_fix(symbol, spec, frame, frame.code)
    if shared is not None and frame is not None and frame.code:
        return Fix(
            kind="change_code",
            input=name,
            source=source,
            dim=dim,
            code=frame.code,
            where=frame,
            why=(
                f"the code at {_at(frame)} specialised dim {dim} of {name} ({symbol.symbol}) to {value} ({reason}) "
                f"in {symbol.compile_id}: a call with that size gets a graph of its own whatever is marked "
                f"(mark_dynamic would raise on it), while other sizes share the dynamic graph of {shared}. "
                f"Change that line so it does not single out the size (e.g. torch.where or torch.cond instead "
                f"of a Python branch on it), or accept one graph for size {value}"
            ),
        )
    return Fix(
        kind="dynamic_false",
        input=name,
        source=source,
        dim=dim,
        code="torch.compile(..., dynamic=False)",
        where=frame,
        why=(
            f"dim {dim} of {name} was made dynamic ({symbol.symbol}) in {symbol.compile_id} and the code "
            f"specialised it to {value} ({reason}){'' if frame is None else f' at {_at(frame)}'}, and no "
            f"compile of this function kept it dynamic: a dynamic graph is attempted for each new size and "
            f"then specialised, so each size costs two compiles. Compile with dynamic=False (one static "
            f"graph per size, compiled once), or change that line so it does not need the size's value"
        ),
    )


def _violated(symbol: Symbol, entry: CompileEntry | None) -> bool:
    """Whether `entry`, the compile that made `symbol`, failed because the code specialised a
    dimension the user required dynamic: its failure is a ConstraintViolationError naming the
    symbol's source (`Constraints violated (L['x'].size()[0])!`)."""
    failure = entry.failure if entry is not None else None
    return (
        failure is not None
        and failure.type == "ConstraintViolationError"
        and symbol.source is not None
        and symbol.source in failure.reason
    )


#: The compile id of what was logged outside torch.compile's compiles: torch.export's symbols.
OUTSIDE = CompileId().display


def _export_fix(symbol: Symbol, spec: Specialization, frame: SourceLocation | None) -> Fix | None:
    """A symbol made outside torch.compile is torch.export's, which makes a dimension dynamic only
    when dynamic_shapes asks: the code that specialised it is the fix, not a compile option
    (torch.compile's dynamic=False means nothing to export). With a Dim export raised a constraint
    violation; with Dim.AUTO it exported a program for that size alone."""
    assert symbol.input is not None and symbol.input_source is not None and symbol.dim is not None
    if frame is None or not frame.code:
        return None
    name, dim, value = symbol.input, symbol.dim, spec.value or "?"
    return Fix(
        kind="change_code",
        input=name,
        source=symbol.input_source,
        dim=dim,
        code=frame.code,
        where=frame,
        why=(
            f"torch.export made dim {dim} of {name} dynamic ({symbol.symbol}), as its dynamic_shapes asked, and "
            f"the code at {_at(frame)} specialised it to {value} ({spec.reason or 'a guard fixed its value'}): "
            f"with a Dim, export raised a constraint violation; with Dim.AUTO, it exported a program valid for "
            f"size {value} only. Change that line so it does not single out the size (e.g. torch.where or "
            f"torch.cond instead of a Python branch on it), or, if the size really is fixed, drop its Dim"
        ),
    )


def _marked_fix(symbol: Symbol, spec: Specialization, frame: SourceLocation, code: str) -> Fix:
    """The user marked the dimension dynamic and the code specialised it, so the compile failed:
    no compile option avoids it (the marking is a requirement, not a hint). The code's line is the
    fix; relaxing the marking to a hint is the other way, said in `why`."""
    assert symbol.input is not None and symbol.input_source is not None and symbol.dim is not None
    name, dim = symbol.input, symbol.dim
    return Fix(
        kind="change_code",
        input=name,
        source=symbol.input_source,
        dim=dim,
        code=code,
        where=frame,
        why=(
            f"dim {dim} of {name} was marked dynamic (torch._dynamo.mark_dynamic, or a Dim of torch.export's "
            f"dynamic_shapes) and the code at {_at(frame)} specialised it ({symbol.symbol}) to {spec.value or '?'} "
            f"({spec.reason or 'a guard fixed its value'}), so the compile of {symbol.compile_id} failed "
            f"(ConstraintViolationError). Change that line so it does not single out the size (e.g. torch.where "
            f"or torch.cond instead of a Python branch on it), or mark the dimension with "
            f"torch._dynamo.maybe_mark_dynamic({name}, {dim}) instead (Dim.AUTO under export), a hint the "
            f"compile may specialise"
        ),
    )


def guard_fix(symbol: Symbol, guard: str, frame: SourceLocation) -> Fix | None:
    """A dimension kept dynamic but guarded (`guard`, added while tracing `frame`): the graph holds
    only for sizes satisfying it, so a call whose size breaks it compiles again. The line is where
    the code depends on the size; whether such sizes ever occur, the log cannot say."""
    assert symbol.input is not None and symbol.input_source is not None and symbol.dim is not None
    if not frame.code:
        return None
    more = "" if symbol.guard_count <= 1 else f" (and {symbol.guard_count - 1} more in `guards`)"
    return Fix(
        kind="size_guard",
        input=symbol.input,
        source=symbol.input_source,
        dim=symbol.dim,
        code=frame.code,
        where=frame,
        why=(
            f"dim {dim_text(symbol)} is dynamic in {symbol.compile_id} but its graph holds only while "
            f"`{guard}`{more}, a guard added while tracing {_at(frame)}: a later call whose size breaks it "
            f"compiles again (or reuses another entry). If such sizes occur, change that line so it does not "
            f"depend on the size's value; if they do not, nothing is to change"
        ),
    )


def dim_text(symbol: Symbol) -> str:
    """`0 of x (s77)`."""
    return f"{symbol.dim} of {symbol.input} ({symbol.symbol})"
