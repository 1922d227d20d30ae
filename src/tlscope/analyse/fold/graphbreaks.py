"""Graph breaks: reading a `dynamo_graph_break_reason` payload, and grouping breaks (tlparse PR #182).

A torch 2.x payload reads:

    Graph break in user code at /path/model.py:23
    Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, ...:

    Failed to trace builtin operator
      Explanation: ...
    User code traceback:
      File "/path/model.py", line 23, in fn
        print("x")
    Traceback (most recent call last): ...

Older torch writes the reason on the `Graph Break Reason:` line itself and may lack the first line;
the location then comes from the last frame of the user traceback. Where tracing stopped can be
library code (`contextlib.py`, DDP's forward): the break is then attributed to the innermost frame
of that traceback in the user's own code (analyse/fold/usercode.py), the place stopped at kept beside.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from tlscope.analyse.fold.break_fixes import break_fix, step_fixes, user_hints
from tlscope.analyse.fold.restart_breaks import RestartBreaks
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import CompileEntry, DistinctGraphBreak, Fix, GraphBreak, SourceLocation

_AT = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$")
#: `(?P<name>.+?)\s*$` (what it means) retried the trailing whitespace at each character of the name:
#: quadratic on a long line of spaces. The last non-space character ends the name instead.
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<name>.*\S|.)\s*$')
_REASON = "Graph Break Reason:"
#: The generic headlines newer torch puts before the reason proper: a break while tracing, and
#: a break Dynamo could not resume from (the whole function falls back to eager).
_ENCOUNTERED = ("Encountered graph break when attempting to trace", "Failed to handle graph break gracefully")
#: An exception the user's code raised while Dynamo traced it: torch names it only in the debug
#: context (`Observed exception` ... `Developer debug context: raised exception KeyError('k')`).
OBSERVED = "Observed exception"
_RAISED = "Developer debug context: raised exception "
#: A call of a function Dynamo skips: torch names the function only in the debug context
#: (`Developer debug context: module: <unknown module>, qualname: Random.random, skip reason: …`).
_SKIPPED = "Attempted to call function marked as skipped"
#: The break at a call of a `torch.compiler.disable`d function, whose debug context names it.
_DISABLED = "Skip calling `torch.compiler.disable()`d function"
_CONTEXT = "Developer debug context: module: "
#: Breaks at an operator fake tensors cannot trace, whose debug context is the op (`aten.nonzero.default`).
_OPERATOR_BREAKS = frozenset(
    {"Data dependent operator", "Dynamic shape operator", "Dynamic shape operator (no meta kernel)"}
)
#: torch's own fix hints in a break's text: `  Hint: Set `...capture_scalar_outputs = True` ...`.
_HINT = re.compile(r"^\s*Hint:\s*(?P<hint>\S.*?)\s*$")
#: Hints that fix nothing in the user's program.
_NOT_A_FIX = ("Please report an issue to PyTorch", "Please file an issue to PyTorch")
#: The graph-break site's page for this break: `For more details ..., please visit: <url>`.
_DOCS = re.compile(r"please visit:\s*(?P<url>https://\S+)")


class ParsedBreak(msgspec.Struct, kw_only=True):
    """What one graph-break payload says (see `parse_graph_break`)."""

    reason: str
    #: The innermost frame in the user's own code (analyse/fold/usercode.py), else where tracing stopped.
    user_frame: SourceLocation
    #: Where tracing stopped (`Graph break in user code at`), when that is not `user_frame`.
    stopped_at: SourceLocation | None = None
    #: The `User code traceback:` frames, outermost first.
    stack: list[SourceLocation] = []
    #: torch's fix hints (its `Hint:` lines, but "report an issue"), and its docs page for the break.
    hints: list[str] = []
    docs_url: str | None = None
    #: What to change so the break goes away (analyse/fold/break_fixes.py), when tlscope knows.
    fix: Fix | None = None


def fix_hints(lines: list[str]) -> tuple[list[str], str | None]:
    """torch's `Hint:` lines that suggest a fix, in order and once each, and the docs link, if any."""
    hints: list[str] = []
    url = None
    for line in lines:
        hint = _HINT.match(line)
        if hint is not None and not hint["hint"].startswith(_NOT_A_FIX) and hint["hint"] not in hints:
            hints.append(hint["hint"])
        docs = _DOCS.search(line) if url is None and "please visit" in line else None
        if docs is not None:
            url = docs["url"]
    return hints, url


def parse_graph_break(text: str, user: UserCode | None = None) -> ParsedBreak:
    """Reason headline, user location and stack of one graph-break payload; never raises."""
    lines = text.splitlines()
    location = _first_line_location(lines) or SourceLocation()
    stack = _user_traceback(lines)
    frame = stack[-1] if stack else None
    if frame is not None and (location.file is None or (frame.file, frame.line) == (location.file, location.line)):
        location = frame if location.file is None else _with_code(location, frame)
    rule = user or UserCode()
    mine = location if rule.is_user(location.file) else rule.innermost(stack)
    hints, url = fix_hints(lines)
    reason = _headline(lines)
    stopped = None if mine is None or mine is location else location
    frame = mine if mine is not None else location
    # A break whose stack holds no line of the user's (a library's function compiled on its own)
    # has no line of theirs to change: no fix.
    fix = break_fix(reason, frame, stopped, hints, lines) if mine is not None else None
    hints = user_hints(hints, stopped)
    return ParsedBreak(
        reason=reason, user_frame=frame, stopped_at=stopped, stack=stack, hints=hints, docs_url=url, fix=fix
    )


def _first_line_location(lines: list[str]) -> SourceLocation | None:
    match = _AT.match(lines[0]) if lines else None
    if match is None:
        return None
    return SourceLocation(file=match["file"], line=int(match["line"]))


def _with_code(location: SourceLocation, frame: SourceLocation) -> SourceLocation:
    return SourceLocation(file=location.file, line=location.line, name=frame.name, code=frame.code)


def _headline(lines: list[str]) -> str:
    for i, line in enumerate(lines):
        if not line.startswith(_REASON):
            continue
        rest = line[len(_REASON) :].strip()
        if rest and not rest.startswith(_ENCOUNTERED):
            return rest
        at, following = next(((k, t.strip()) for k, t in enumerate(lines[i + 1 :], i + 1) if t.strip()), (i, ""))
        if following == OBSERVED:
            raised = next((t.strip()[len(_RAISED) :] for t in lines[at + 1 :] if t.strip().startswith(_RAISED)), "")
            return f"{following}: {raised}" if raised else following
        return named_reason(following, lines[at + 1 :]) or rest or "(no reason given)"
    # No `Graph Break Reason:` line: the first line that is not the location.
    body = [t.strip() for t in lines if t.strip() and not _AT.match(t)]
    return body[0] if body else "(no reason given)"


def named_reason(reason: str, after: list[str]) -> str:
    """A break's (or a failure's) reason line, with the function its debug context names when the
    line names none (`Attempted to call function marked as skipped: time.time`); `after`: the
    lines that follow it."""
    if reason == _SKIPPED:
        return _skipped(after)
    if reason == _DISABLED:
        return _disabled(after)
    if reason in _OPERATOR_BREAKS:
        return _operator(reason, after)
    return reason


def _context(lines: list[str], lead: str) -> str | None:
    """What follows `lead` on the break's own `Developer debug context:` line (up to its
    traceback), where torch names what the break is about; None without one."""
    for text in lines:
        if text.strip().startswith(("User code traceback", "Traceback")):
            break
        _, found, after = text.partition(lead)
        if found:
            return after
    return None


def _operator(reason: str, lines: list[str]) -> str:
    """`Dynamic shape operator: aten._unique2.default`: the operator its debug context names
    (torch/_dynamo/utils.py gives the op as the context of these breaks), so two breaks of one
    kind at other ops (torch.unique, torch.nonzero) say which is which."""
    op = re.match(r"[\w.]+", (_context(lines, "Developer debug context: ") or "").strip())
    return f"{reason}: {op[0]}" if op is not None else reason


def _disabled(lines: list[str]) -> str:
    """`Skip calling `torch.compiler.disable()`d function: logger`: the function its debug context
    names (`<function logger at 0x7f...>`)."""
    name = re.match(r"[\w.<>]+", _context(lines, "Developer debug context: <function ") or "")
    return f"{_DISABLED}: {name[0]}" if name is not None else _DISABLED


def _skipped(lines: list[str]) -> str:
    """`Attempted to call function marked as skipped: Random.random`: the function its debug
    context names. A method by its class (`DistributedDataParallel._inside_ddp_forward`); a
    module's function with its module (`time.time`, whose qualname alone, `time`, reads as the
    module)."""
    module, _, rest = (_context(lines, _CONTEXT) or "").partition(", qualname: ")
    name = re.match(r"[\w.<>]+", rest)
    if name is None:
        return _SKIPPED
    plain = "." not in name[0] and re.fullmatch(r"[\w.]+", module) is not None
    return f"{_SKIPPED}: {f'{module}.' if plain else ''}{name[0]}"


def _user_traceback(lines: list[str]) -> list[SourceLocation]:
    """The frames of the `User code traceback:` block, outermost first, with their source lines."""
    try:
        start = next(i for i, t in enumerate(lines) if t.strip().startswith("User code traceback"))
    except StopIteration:
        return []
    found: list[SourceLocation] = []
    for i in range(start + 1, len(lines)):
        text = lines[i]
        if text.startswith("Traceback (most recent call last)"):
            break
        match = _FRAME.match(text)
        if match is not None:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) else None
            found.append(
                SourceLocation(file=match["file"], line=int(match["line"]), name=match["name"], code=code or None)
            )
    return found


def distinct_graph_breaks(entries: Iterable[CompileEntry]) -> list[DistinctGraphBreak]:
    """Breaks grouped by (reason headline, user file, user line); most frequent first, then first seen."""
    groups = BreakGroups()
    for entry in entries:
        groups.add(entry)
    return groups.result()


_Key = tuple[str, str | None, int | None]


class BreakGroups:
    """`distinct_graph_breaks` folded one entry at a time, entries in any order (compiles.json's
    are written a frame at a time): a group keeps its first break by log line, and its compile ids
    by log line; the result is the same whatever the order entries came in."""

    def __init__(self) -> None:
        #: Per group: (log line of its first break, that break) and its (log line, compile id)s.
        self._first: dict[_Key, tuple[int, GraphBreak]] = {}
        self._ids: dict[_Key, list[tuple[int, str]]] = {}
        #: An older torch's breaks, said only when the log holds no break artifact.
        self._restarts = RestartBreaks()

    def add(self, entry: CompileEntry) -> None:
        self._restarts.add(entry)
        for gb in entry.graph_breaks:
            key = (gb.reason, gb.user_frame.file, gb.user_frame.line)
            line = gb.event.log_line
            first = self._first.get(key)
            if first is None or line < first[0]:
                self._first[key] = (line, gb)
            self._ids.setdefault(key, []).append((line, entry.id))

    def result(self) -> list[DistinctGraphBreak]:
        if not self._first:
            return self._restarts.result()
        groups = []
        for key, (_, gb) in sorted(self._first.items(), key=lambda item: item[1][0]):
            ids = sorted(self._ids[key], key=lambda pair: pair[0])
            groups.append(
                DistinctGraphBreak(
                    reason=gb.reason,
                    user_frame=gb.user_frame,
                    stopped_at=gb.stopped_at,
                    count=len(ids),
                    compile_ids=[cid for _, cid in ids],
                    hints=gb.hints,
                    docs_url=gb.docs_url,
                    fix=gb.fix,
                )
            )
        step_fixes(groups)  # a training step compiled whole: its optimizer's breaks too
        return sorted(groups, key=lambda g: -g.count)
