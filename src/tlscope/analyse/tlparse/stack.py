"""Stack tries: where compilations start, as a tree of frames (reference §5).

A trie node maps frames to children in insertion order and lists the compile ids whose
stack ends there. Data only: write/report/stacks.py renders it (tlparse's markup, escaped).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from tlscope.analyse.tlparse.naming import simplify_filename
from tlscope.model.compile_id import CompileId
from tlscope.model.events import Frame
from tlscope.model.record import Record

#: A frame as tlparse compares them: (filename id or text, line, name, loc, uninterned filename).
FrameKey = tuple[object, object, object, object, object]

_CONVERT_FRAME = "torch/_dynamo/convert_frame.py"
_SUFFIXES = (
    ("catch_errors", "_convert_frame", "_convert_frame_assert"),
    ("__call__", "__call__", "__call__"),
)


class ResolvedFrame:
    """A frame with its file name resolved against the string table at the time it was logged."""

    __slots__ = ("__weakref__", "filename", "key", "line", "loc", "name")

    def __init__(self, frame: Frame, record: Record) -> None:
        self.filename = record.frame_filename(frame)
        self.line = frame.line
        self.name = frame.name
        self.loc = frame.loc
        self.key: FrameKey = (frame.filename, frame.line, frame.name, frame.loc, frame.uninterned_filename)


#: Equal frames resolve to one shared object. Every compilation logs its whole stack and the
#: report keeps each compile id's stack until the end, so a long job held thousands of copies
#: of the same few frames (each with the strings of its own log line). Weak values: a frame
#: lives only as long as some stack uses it, never past the run.
_shared: weakref.WeakValueDictionary[tuple[FrameKey, str], ResolvedFrame] = weakref.WeakValueDictionary()


def resolve_stack(frames: Sequence[Frame] | None, record: Record) -> list[ResolvedFrame]:
    return [_shared_frame(ResolvedFrame(f, record)) for f in frames or ()]


def _shared_frame(frame: ResolvedFrame) -> ResolvedFrame:
    # The resolved file name is part of the identity: one interned id can name another file
    # once a later string table reuses it.
    return _shared.setdefault((frame.key, frame.filename), frame)


def drop_convert_frame_suffix(stack: list[ResolvedFrame]) -> list[ResolvedFrame]:
    """Drop Dynamo's own three convert_frame frames at the end (tlparse does, once per group)."""
    for names in _SUFFIXES:
        tail = stack[-3:]
        if len(tail) == 3 and all(
            simplify_filename(f.filename) == _CONVERT_FRAME and f.name == n for f, n in zip(tail, names, strict=True)
        ):
            return stack[:-3]  # tlparse removes at most one group
    return stack


class StackTrie:
    def __init__(self) -> None:
        self.children: dict[FrameKey, tuple[ResolvedFrame, StackTrie]] = {}
        self.terminals: list[CompileId | None] = []

    def insert(self, stack: Sequence[ResolvedFrame], terminal: CompileId | None) -> None:
        node = self
        for frame in stack:
            child = node.children.get(frame.key)
            if child is None:
                child = node.children[frame.key] = (frame, StackTrie())
            node = child[1]
        node.terminals.append(terminal)

    def __bool__(self) -> bool:
        return bool(self.children or self.terminals)
