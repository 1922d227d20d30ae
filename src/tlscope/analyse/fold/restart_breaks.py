"""Graph breaks of an older torch, known only from the metrics' `restart_reasons`.

torch before the `dynamo_graph_break_reason` artifact (2024) logged a graph break only as the
reason its compile restarted, in `compilation_metrics.restart_reasons`
(`'skip function graph_break in file …/decorators.py'`), with no place. The place is in a name:
Dynamo compiles the rest of `fn` after a break at line N as `torch_dynamo_resume_in_fn_at_N`, a
frame of its own, compiled after the break. So a break of `fn` (or of one of its resume
functions) is at the line of the first resume function of `fn` compiled after it.

`RestartBreaks` is fed every entry (in any order) and says the breaks only for a log that holds
no break artifact at all: a newer torch's `restart_reasons` repeat its artifacts' reasons.
"""

from __future__ import annotations

from tlscope.analyse.fold.resume import base_name, resumed
from tlscope.format.compiles import CompileEntry, DistinctGraphBreak, SourceLocation

#: Kept at most (the log is untrusted: a million restarts must not make a million tuples).
MAX_KEPT = 10_000

#: (first log line, reason, compile id, the compiled function).
_Restart = tuple[int, str, str, SourceLocation]


def _reason(text: str) -> str:
    """The reason's first line, without the quotes an older torch put around it."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.strip().strip("'\"").strip() or "(no reason given)"


class RestartBreaks:
    """Compiles that restarted for a reason, and the resume functions that place their breaks."""

    def __init__(self) -> None:
        self._restarts: list[_Restart] = []
        #: (function's own name, file) -> (first log line, line) of each of its resume functions.
        self._resumes: dict[tuple[str, str | None], list[tuple[int, int]]] = {}

    def add(self, entry: CompileEntry) -> None:
        fn = entry.function
        if fn is None or not fn.name:
            return
        first = entry.log_lines[0] if entry.log_lines else 0
        resume = resumed(fn.name)
        if resume is not None and len(self._resumes) < MAX_KEPT:
            self._resumes.setdefault((resume[0], fn.file), []).append((first, resume[1]))
        if entry.restart_reasons and not entry.graph_breaks and len(self._restarts) < MAX_KEPT:
            for text in dict.fromkeys(entry.restart_reasons):
                self._restarts.append((first, _reason(text), entry.id, fn))

    def result(self) -> list[DistinctGraphBreak]:
        """The breaks grouped by (reason, file, line), most frequent first, then first seen."""
        groups: dict[tuple[str, str | None, int | None], DistinctGraphBreak] = {}
        for first, reason, cid, fn in sorted(self._restarts, key=lambda r: r[0]):
            name = base_name(fn.name or "")
            line = self._line_after(name, fn.file, first)
            at = SourceLocation(file=fn.file, line=line, name=name) if line is not None else fn
            group = groups.get((reason, at.file, at.line))
            if group is None:
                group = groups[(reason, at.file, at.line)] = DistinctGraphBreak(
                    reason=reason, user_frame=at, count=0, compile_ids=[]
                )
            group.count += 1
            group.compile_ids.append(cid)
        return sorted(groups.values(), key=lambda g: -g.count)

    def _line_after(self, name: str, file: str | None, first: int) -> int | None:
        """The line of the first resume function of `name` compiled after log line `first`."""
        later = [r for r in self._resumes.get((name, file), ()) if r[0] > first]
        return min(later)[1] if later else None
