"""The compile-time flame graph: the stack trie of every compile, each node weighted by compile time.

Each compile with a time (the entry holding its frame compile's metrics) adds its duration to
every frame of its user stack (`dynamo_start`, outermost first) and, as the leaf, to its compiled
function; a node's time is the compile time spent below it, its `compiles` the ids that reached
it. A compile with no stack hangs under a `(no stack)` root child. The tlparse author's notes
ask for "sort of like a flame graph… could use compilation time": this is that, as data; the
report draws it (compile_time.html).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from tlscope.format.compiles import CompileEntry, SourceLocation


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


def flame_tree(entries: Iterable[CompileEntry]) -> FlameNode:
    """The root (`all compiles`) of the weighted trie; children ordered by time, biggest first."""
    root = FlameNode(name="all compiles")
    index: dict[int, dict[tuple[str, str | None, int | None], FlameNode]] = {}
    for entry in entries:
        if entry.time is None or entry.time.duration_s is None:
            continue
        seconds = entry.time.duration_s
        frames = list(entry.stack) or [SourceLocation(name="(no stack)")]
        if entry.function is not None and _label(entry.function)[:2] != _label(frames[-1])[:2]:
            frames.append(SourceLocation(name=entry.function.name, file=entry.function.file, line=entry.function.line))
        node = root
        _add(node, seconds, entry.id)
        for frame in frames:
            children = index.setdefault(id(node), {})
            key = _label(frame)
            child = children.get(key)
            if child is None:
                child = children[key] = FlameNode(name=key[0], file=key[1], line=key[2])
                node.children.append(child)
            node = child
            _add(node, seconds, entry.id)
    _sort(root)
    return root


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
