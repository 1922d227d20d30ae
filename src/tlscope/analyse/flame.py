"""The compile-time flame graph: the stack trie of every compile, each node weighted by compile time.

Each compile with a time (the entry holding its frame compile's metrics) adds its duration, with
its backward's (AOTAutograd compiles it at the first backward call, after the compile's span), to
every frame of its user stack (`dynamo_start`, outermost first) and, as the leaf, to its compiled
function; a node's time is the compile time spent below it, its `compiles` the ids that reached
it. A compile with no stack hangs under a `(no stack)` root child. The tlparse author's notes
ask for "sort of like a flame graph… could use compilation time": this is that, as data; the
report draws it (compile_time.html). AOT Inductor compiles, which have no compile id, are drawn
under the user's call of AOT Inductor (`aoti_path`), listed as `AOT Inductor compile N`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from tlscope.analyse.phase_words import compile_seconds
from tlscope.format.compiles import AotInductorCompile, CompileEntry, SourceLocation


class FlameNode(msgspec.Struct, kw_only=True):
    """A frame of the trie: `name` (function), `file`, `line`, the compile `seconds` below it."""

    name: str
    file: str | None = None
    line: int | None = None
    seconds: float = 0.0
    #: Compile ids whose stack goes through this frame, in the order they were added.
    compiles: list[str] = []
    children: list[FlameNode] = []


def _label(frame: SourceLocation) -> tuple[str, str | None, int | None]:
    return (frame.name or "?", frame.file, frame.line)


def flame_tree(entries: Iterable[CompileEntry], aot_inductor: Iterable[AotInductorCompile] = ()) -> FlameNode:
    """The root (`all compiles`) of the weighted trie; children ordered by time, biggest first.
    AOT Inductor compiles (no compile id) hang under the user's call of it (`aoti_path`)."""
    root = FlameNode(name="all compiles")
    index: dict[int, dict[tuple[str, str | None, int | None], FlameNode]] = {}
    for entry in entries:
        for stack, function, seconds in timed_compiles(entry):
            frames = list(stack) or [SourceLocation(name="(no stack)")]
            if function is not None and _label(function)[:2] != _label(frames[-1])[:2]:
                frames.append(SourceLocation(name=function.name, file=function.file, line=function.line))
            _path(root, index, frames, seconds, entry.id)
    for aoti in aot_inductor:
        if aoti.time is not None and aoti.time.duration_s is not None:
            _path(root, index, aoti_path(aoti), aoti.time.duration_s, aoti_label(aoti))
    _sort(root)
    return root


#: One compile as compile time is told: the user stack that reached it, its function, its seconds.
TimedCompile = tuple[Sequence[SourceLocation], "SourceLocation | None", float]


def timed_compiles(entry: CompileEntry) -> list[TimedCompile]:
    """The compiles a compile id's time is told as. One, the entry's (its stack, function and
    time), unless the id held several forward compiles of different functions (ids are numbered
    again after torch._dynamo.reset()): then each forward metrics record's, with its own function
    and time; the entry keeps one stack, so a function other than the entry's has none."""
    forward = [r for r in entry.metrics_records if r.kind == "compilation_metrics"]
    raw, own = entry.function, entry.said_function()  # `Sequential.forward`, not torch's `inner`
    stack: Sequence[SourceLocation] = entry.stack
    last = stack[-1] if stack else None
    if (
        raw is not None
        and own is not None
        and own is not raw
        and last
        and (last.name, last.file) == (raw.name, raw.file)
    ):
        stack = [*stack[:-1], msgspec.structs.replace(last, name=own.name)]  # the compiled function's own frame
    if len({r.co_name for r in forward}) < 2:
        seconds = compile_seconds(entry)  # its backward's too: the run's total counts it
        return [] if seconds is None else [(stack, own, seconds)]
    found: list[TimedCompile] = []
    for record in forward:
        if record.time_s is None:
            continue
        function = SourceLocation(name=record.co_name, file=record.co_filename, line=record.co_firstlineno)
        mine = raw is not None and (raw.name, raw.line) == (function.name, function.line)
        found.append((stack if mine else [], own if mine else function, record.time_s))
    return found


def aoti_label(aoti: AotInductorCompile) -> str:
    """How an AOT Inductor compile is named where compile ids are listed (it has none)."""
    return f"AOT Inductor compile {aoti.index}"


def aoti_path(aoti: AotInductorCompile) -> list[SourceLocation]:
    """The frames an AOT Inductor compile's time is drawn along: its stack down to the user's
    call (torch's own frames below it left out, as a compile's stack ends at the user's function),
    then the torch function called there (`aoti_compile_and_package`), named as AOT Inductor's."""
    stack, call = list(aoti.stack), aoti.user_frame
    at = next((i for i, f in enumerate(stack) if call and (f.file, f.line) == (call.file, call.line)), None)
    if at is None:
        frames = [call] if call is not None else [SourceLocation(name="(no stack)")]
        api = None
    else:
        frames, api = stack[: at + 1], stack[at + 1] if at + 1 < len(stack) else None
    name = f"{api.name} (AOT Inductor)" if api is not None and api.name else "AOT Inductor"
    return [*frames, SourceLocation(name=name)]


def _path(
    root: FlameNode,
    index: dict[int, dict[tuple[str, str | None, int | None], FlameNode]],
    frames: list[SourceLocation],
    seconds: float,
    label: str,
) -> None:
    """`seconds` of compile `label` added to the root and to each frame of `frames` below it."""
    node = root
    _add(node, seconds, label)
    for frame in frames:
        children = index.setdefault(id(node), {})
        key = _label(frame)
        child = children.get(key)
        if child is None:
            child = children[key] = FlameNode(name=key[0], file=key[1], line=key[2])
            node.children.append(child)
        node = child
        _add(node, seconds, label)


def _add(node: FlameNode, seconds: float, compile_id: str) -> None:
    node.seconds = round(node.seconds + seconds, 6)
    if not node.compiles or node.compiles[-1] != compile_id:
        node.compiles.append(compile_id)


def _sort(node: FlameNode) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        current.children.sort(key=lambda c: -c.seconds)
        stack.extend(current.children)
