"""Stacks as the report shows them: tlparse's markup (nested lists, a toggle marker where stacks
diverge, links into FX modules' dump_file pages), every log-derived string escaped.

The data (resolved frames, the stack trie) is analyse/tlparse/stack.py's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from markupsafe import Markup

from tlscope.analyse.tlparse.naming import eval_with_key_id, simplify_filename
from tlscope.analyse.tlparse.stack import ResolvedFrame, StackTrie
from tlscope.model.compile_id import CompileId

#: Status class of a trie terminal (a compile id, or None for unknown stacks).
StatusOf = Callable[[CompileId | None], str]


def frame_html(frame: ResolvedFrame) -> Markup:
    """`file:line in name` (+ the source line), or a link into an FX module's dump_file page."""
    return _frame_html(frame.filename, frame.line, frame.name, frame.loc)


def _frame_html(filename: str, line_no: int | None, name_: str | None, loc: str | None) -> Markup:
    short = simplify_filename(filename)
    line = "" if line_no is None else str(line_no)
    name = name_ or ""
    eval_id = eval_with_key_id(filename)
    if eval_id is not None:
        return Markup("<a href='dump_file/eval_with_key_{}.html#L{}'>{}:{}</a> in {}").format(
            eval_id, line, short, line, name
        )
    return Markup("{}:{} in {}<br>&nbsp;&nbsp;&nbsp;&nbsp;{}").format(short, line, name, loc or "")


def render_trie(trie: StackTrie, status: StatusOf, caption: str = "Stack", open_: bool = False) -> Markup:
    parts: list[str] = []
    _render_inner(trie, status, parts)
    return details(caption, Markup("".join(parts)), open_=open_)


def _render_inner(trie: StackTrie, status: StatusOf, out: list[str]) -> None:
    # An explicit work list, not recursion: a hostile log may hold a stack of any depth.
    work: list[StackTrie | str] = [trie]
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
                pending += [Markup(opening).format(star, frame_html(frame)), child, "</ul></li>"]
            else:
                pending += [Markup("<li>{}{}</li>\n").format(star, frame_html(frame)), child]
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
    key = tuple((f.filename, f.line, f.name, f.loc) for f in stack)
    return _stack_box(key, caption, open_)


#: A stack's box is a function of its frames' texts: a job's ranks log the same stacks (each
#: compilation's metrics page shows its stack), so a rank worker renders each one once, not once
#: per rank (~0.25 ms a page). Bounded; the texts are the log's, kept while cached.
@functools.lru_cache(maxsize=1024)
def _stack_box(frames: tuple[tuple[str, int | None, str | None, str | None], ...], caption: str, open_: bool) -> Markup:
    parts: list[str] = []
    for filename, line, name, loc in frames:
        parts.append(Markup("<li>{}</li>\n").format(_frame_html(filename, line, name, loc)))
    return details(caption, Markup("".join(parts)), open_=open_)
