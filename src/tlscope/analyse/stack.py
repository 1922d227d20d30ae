"""Stack tries: where compilations start, as a tree of frames (reference §5).

A trie node maps frames to children in insertion order and lists the compile ids whose
stack ends there. Rendering is tlparse's markup (nested lists, a toggle marker where stacks
diverge) but every log-derived string is escaped.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

from markupsafe import Markup

from tlscope.analyse.naming import eval_with_key_id, simplify_filename
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

    def html(self) -> Markup:
        """`file:line in name` (+ the source line), or a link into an FX module's dump_file page."""
        short = simplify_filename(self.filename)
        line = "" if self.line is None else str(self.line)
        name = self.name or ""
        eval_id = eval_with_key_id(self.filename)
        if eval_id is not None:
            return Markup("<a href='dump_file/eval_with_key_{}.html#L{}'>{}:{}</a> in {}").format(
                eval_id, line, short, line, name
            )
        return Markup("{}:{} in {}<br>&nbsp;&nbsp;&nbsp;&nbsp;{}").format(short, line, name, self.loc or "")


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


#: Status class of a trie terminal (a compile id, or None for unknown stacks).
StatusOf = Callable[[CompileId | None], str]


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

    def render(self, status: StatusOf, caption: str = "Stack", open_: bool = False) -> Markup:
        parts: list[str] = []
        self._render_inner(status, parts)
        return details(caption, Markup("".join(parts)), open_=open_)

    def _render_inner(self, status: StatusOf, out: list[str]) -> None:
        # An explicit work list, not recursion: a hostile log may hold a stack of any depth.
        work: list[StackTrie | str] = [self]
        while work:
            item = work.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            branching = len(item.children) > 1
            pending: list[StackTrie | str] = []
            for frame, child in item.children.values():
                star = Markup("").join(_terminal(cid, status) for cid in child.terminals)
                if branching:
                    opening = "<li><span onclick='toggleList(this)' class='marker'></span>{}\n{}<ul>\n"
                    pending += [Markup(opening).format(star, frame.html()), child, "</ul></li>"]
                else:
                    pending += [Markup("<li>{}{}</li>\n").format(star, frame.html()), child]
            work.extend(reversed(pending))


def _terminal(cid: CompileId | None, status: StatusOf) -> Markup:
    if cid is None:
        return Markup("(unknown) ")
    return Markup("<a href='#{}' class='{}'>{}</a> ").format(cid.display, status(cid), cid.display)


def details(caption: str, inner: Markup, *, open_: bool = False) -> Markup:
    return Markup("<details{}><summary>{}</summary><div class='stack-trie'><ul>{}</ul></div></details>").format(
        Markup(" open") if open_ else "", caption, inner
    )


def format_stack(stack: Sequence[ResolvedFrame], caption: str, open_: bool = False) -> Markup:
    """One stack as a box, no compile ids (metrics and export pages)."""
    parts: list[str] = []
    for frame in stack:
        parts.append(Markup("<li>{}</li>\n").format(frame.html()))
    return details(caption, Markup("".join(parts)), open_=open_)
