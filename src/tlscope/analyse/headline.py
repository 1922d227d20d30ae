"""The trace's first answers in a line each, said where the user looks first: under the counts
`tlscope LOG` prints as it ends.

The counts ("2 failed, 1 ok; 4 recompiles") say that something needs a look; these lines say
what, at the user's own line, so a first reading needs no second command: the first failure (its
type and reason, where), the graph break met most often, the first recompile's reason in plain
words with its fix, and the compile that took longest (where its time went, a cache it missed).
Each is compiles.json's own (the entry's failure, the distinct break, the recompile's
`explanation` and `fix`, the entry's time and phases), not worded again; `tlscope summary` says
the rest.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from tlscope.analyse.fold.capture import renumbered_why
from tlscope.analyse.fold.export_words import where_text
from tlscope.analyse.fold.phases import PHASES
from tlscope.analyse.phase_words import SLOW_S, backward_s, compile_seconds, innermost, phase_seconds, where_it_went
from tlscope.format.compiles import (
    FIRST_ANSWER_KINDS,
    CompileEntry,
    CompilesFile,
    DistinctGraphBreak,
    Failure,
    FirstAnswer,
    Fix,
    LineNodes,
    SourceLocation,
)
from tlscope.format.status import status_words

#: Characters of a reason or a line of code kept in a headline: its first line whole, as
#: `summary` says it, up to a bound that only a hostile or broken log's text reaches.
CUT = 400
#: How a `slow_compile` line starts, before the compile (`[0/0] fn`) and ` took `.
SLOW_WORDS = "most compile time:"
#: How a slow compile's `regional` fix starts, the last clause of its `slow_compile` line.
REGIONAL_WORDS = "fix: compile each block, not the whole: "
#: How the line a big graph grew from starts, the last clause of a `slow_compile` line without a fix.
_BUSIEST = r"; [\d,]+ of its graph's [\d,]+ nodes are "  # compiled by `re` when a job folds one


class CompileTime(NamedTuple):
    """The run's slowest compile and what it is compared with: the seconds and the number of
    the compiles whose time is logged."""

    slowest: CompileEntry
    total_s: float
    compiles: int


class FirstAnswers:
    """The entries a headline names, met in compile order, one kept of each (a parse meets its
    entries a frame at a time and keeps none of them: this keeps three)."""

    def __init__(self, entries: Iterable[CompileEntry] = ()) -> None:
        self.failed: CompileEntry | None = None
        self.recompiled: CompileEntry | None = None
        self.slowest: CompileEntry | None = None
        self.total_s = 0.0
        self.timed = 0
        self.history = FrameHistory()
        self.nothing = NothingCompiled()
        #: The compile the log ends inside (`unfinished`), while no compile's lines come later.
        self.unfinished: CompileEntry | None = None
        self.last_line = 0
        self.callees = Callees()
        for entry in entries:
            self.add(entry)

    def add(self, entry: CompileEntry) -> None:
        if self.failed is None:
            self.history.add(entry)
        else:
            self.callees.add(entry, self.failed)
        self.nothing.add(entry)
        end = entry.log_lines[-1] if entry.log_lines and entry.status != "outside" else 0
        if end >= self.last_line:
            self.last_line = end
            self.unfinished = entry if isinstance(entry.unfinished, list) and entry.unfinished else None
        # A failed compile followed by a good one of the same id (after torch._dynamo.reset())
        # leaves the entry's status the later one's and its failure set: still the run's failure.
        if entry.failure is not None and self.failed is None:
            self.failed = entry
        if entry.recompile is not None and self.recompiled is None:
            self.recompiled = entry
        seconds = compile_seconds(entry)
        if seconds is not None and entry.status != "outside":
            self.total_s += seconds
            # An id numbered again after torch._dynamo.reset() holds each compile's metrics record.
            self.timed += max(1, sum(r.kind == "compilation_metrics" for r in entry.metrics_records))
            if self.slowest is None or seconds > (compile_seconds(self.slowest) or 0.0):
                self.slowest = entry  # the first met among equals

    def answers(self, breaks: Sequence[DistinctGraphBreak]) -> list[FirstAnswer]:
        timed = CompileTime(self.slowest, self.total_s, self.timed) if self.slowest is not None else None
        filled = self.history.filled(self.failed) + self.callees.text() if self.failed is not None else ""
        cut = unfinished_answer(self.unfinished) if self.unfinished is not None else None
        return first_answers(self.failed, breaks, self.recompiled, timed, filled, self.nothing.answer(), cut)


#: The statuses of a compile that made no graph: a restarted attempt (the next one holds what the
#: compile made), a graph break (with a graph only when it logged one) and an empty graph.
NO_GRAPH_STATUSES = ("restarted", "graph_break", "empty")


class NothingCompiled:
    """Whether no compile of the run made a graph, so every compiled function ran in eager (a
    DDP wrapper whose forward breaks before the model, a function that breaks at its first line):
    the counts say "7 compiles", which reads as work done. A failed compile, one loaded from a
    cache or one without metrics says nothing of it (a failure is its own answer)."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.graphed = False

    def add(self, entry: CompileEntry) -> None:
        if entry.status == "outside":
            return
        self.first = self.first or entry.id
        ops = entry.metrics.graph_op_count if entry.metrics is not None else None
        if entry.status not in NO_GRAPH_STATUSES or entry.graphs or (ops or 0) > 0:
            self.graphed = True

    def answer(self) -> FirstAnswer | None:
        if self.graphed or self.first is None:
            return None
        # The counts are the line above's; without them ranks that made nothing say it alike.
        text = (
            "nothing compiled: no compile made a graph (each restarted, broke before its first op or was "
            "empty), so every compiled function ran in eager"
        )
        return FirstAnswer(kind="no_graph", compile_id=self.first, text=text)


#: Functions a failure's line names as compiled on their own from its frame, the rest counted.
CALLEES_SAID = 2


class Callees:
    """The functions compiled, after the run's first failure, from inside the failed function's
    frame (their stack passes through it): what it calls, compiled as frames of their own while it
    ran in eager. FSDP2's hooks breaking a model's loop over its blocks skip the model's frame, and
    each block compiles; a failure's line that said only the failure read as nothing compiled."""

    def __init__(self) -> None:
        #: Each function met (file, name) -> the first compile of it, display form.
        self.found: dict[tuple[str | None, str | None], str] = {}

    def add(self, entry: CompileEntry, failed: CompileEntry) -> None:
        fn = failed.function
        if fn is None or entry.status in ("outside", "failed") or entry.id != entry.frame_compile:
            return
        own = entry.function
        key = (own.file, own.name) if own is not None else (None, None)
        if key in self.found or len(self.found) > CALLEES_SAID:
            return  # the first few functions are said, the rest counted up to one more
        if any((f.file, f.name) == (fn.file, fn.name) for f in entry.stack[:-1]):
            self.found[key] = f"{entry.id} {entry.function_name() or '?'}"

    def text(self) -> str:
        """`; the functions it calls then compiled as frames of their own: [1/0] Block.forward`."""
        said = list(self.found.values())
        if not said:
            return ""
        more = " and more" if len(said) > CALLEES_SAID else ""
        return f"; the functions it calls then compiled as frames of their own: {', '.join(said[:CALLEES_SAID])}{more}"


#: A failure at the recompile limit (torch 2.13's words, and older torch's cache_size_limit);
#: compiled by `re` when a run fails, not at import.
AT_LIMIT = r"(?i)recompile[_ ]limit|cache[_ ]size[_ ]limit"
#: Causes a limit's line names, the rest counted.
CAUSES_SAID = 2


class FrameHistory:
    """Per frame, how many times it compiled and why it recompiled (each recompile's explanation
    cut to its cause: `self.step changed`), until the run's first failure: a failure at the
    recompile limit then says what filled it. A few counters a frame that recompiled."""

    def __init__(self) -> None:
        self.compiles: Counter[str] = Counter()
        self.causes: dict[str, Counter[str]] = {}

    def add(self, entry: CompileEntry) -> None:
        if entry.status in ("outside", "failed") or entry.id != entry.frame_compile:
            return  # attempts after a restart are one compile; a refused compile filled nothing
        frame = entry.id.rsplit("/", 1)[0]
        self.compiles[frame] += 1
        why = entry.recompile.explanation() if entry.recompile is not None else None
        if why:
            cause = re.split(r": |; ", why, maxsplit=1)[0]
            self.causes.setdefault(frame, Counter())[cause] += 1

    def filled(self, failed: CompileEntry) -> str:
        """`; forward had compiled 8 times: 7 recompiles because self.step changed`, for a failure
        at the recompile limit whose frame recompiled; else nothing."""
        failure, frame = failed.failure, failed.id.rsplit("/", 1)[0]
        causes = self.causes.get(frame)
        if failure is None or not causes or re.search(AT_LIMIT, failure.reason) is None:
            return ""
        name = failed.function_name() or frame + "]"
        (top, count), *others = causes.most_common()
        said = [f"{count} recompile{'s' if count != 1 else ''} because {top}"]
        said += [f"{n} because {cause}" for cause, n in others[: CAUSES_SAID - 1]]
        rest = sum(n for _, n in others[CAUSES_SAID - 1 :])
        if rest:
            said.append(f"{rest} for other reasons")
        return f"; {name} had compiled {self.compiles[frame]} times: {', '.join(said)}"


def read_first_answers(file: CompilesFile) -> list[FirstAnswer]:
    """A compiles.json's first answers as the file says them, a kind this reader does not know
    dropped (the JS client's `readFirstAnswers` reads the same; tests/conformance); found again from
    the entries in a file written before 1.41, which does not hold them (one written by 1.41 or
    1.42 says no slowest compile, as the JS client reads it)."""
    if file.format_minor >= 41:
        return [answer for answer in file.first_answers if answer.kind in FIRST_ANSWER_KINDS]
    return FirstAnswers(c for c in file.compiles if c.status != "outside").answers(file.graph_breaks)


def first_answers(
    failed: CompileEntry | None,
    breaks: Sequence[DistinctGraphBreak],
    recompiled: CompileEntry | None,
    timed: CompileTime | None = None,
    filled: str = "",
    nothing: FirstAnswer | None = None,
    unfinished: FirstAnswer | None = None,
) -> list[FirstAnswer]:
    """Up to five answers (compiles.json `first_answers`): the first failed compile (with
    `filled`, what filled the recompile limit it failed at: FrameHistory), that nothing compiled
    (`nothing`: NothingCompiled), the most frequent distinct graph break, the first recompile,
    the slowest compile (`timed`, said when it took SLOW_S or more); each only when the trace has
    one."""
    found = []
    if failed is not None and failed.failure is not None:
        found.append(_failure_answer(failed, failed.failure, _broken_by(failed, breaks) + filled))
    if unfinished is not None:
        found.append(unfinished)
    if nothing is not None:
        found.append(nothing)
    if breaks:
        top = max(breaks, key=lambda b: b.count)  # the first met among equals: max keeps the first
        ids = len(top.compile_ids)
        times = f"{top.count} time{'s' if top.count != 1 else ''} in {ids} compile{'s' if ids != 1 else ''}"
        # Equals are said: "most frequent" of breaks met once each is only the first of them.
        tied = sum(1 for b in breaks if b.count == top.count) - 1
        times += f"; {tied} other{'s' if tied != 1 else ''} as often" if tied else ""
        text = f"most frequent graph break ({times}): {_cut(top.reason)}{_at(top.user_frame)}"
        text += f"; {_fix(top.fix)}" if isinstance(top.fix, Fix) else ""
        found.append(FirstAnswer(kind="graph_break", compile_id=next(iter(top.compile_ids), None), text=text))
    if recompiled is not None and recompiled.recompile is not None:
        why = recompiled.recompile.explanation()
        fix = recompiled.recompile.fix
        change = f"; {_fix(fix)}" if fix is not None else ""
        text = f"first recompile: {_compile(recompiled)}: {_cut(why or 'no reason logged')}{change}"
        found.append(FirstAnswer(kind="recompile", compile_id=recompiled.id, text=text))
    seconds = compile_seconds(timed.slowest) if timed is not None else None
    if timed is not None and seconds is not None and seconds >= SLOW_S:
        own = [(n, s) for n, s in phase_seconds(timed.slowest).items() if s >= 0.005]
        went, phase = where_it_went(own), innermost(own)
        text = f"{SLOW_WORDS} {_compile_at(timed.slowest)} took {_slow_text(timed, seconds, went[:1], phase)}"
        if isinstance(timed.slowest.time_fix, Fix):
            text += f"; {_fix(timed.slowest.time_fix)}"
        elif (busiest := _busiest(timed.slowest)) is not None:
            text += busiest
        cid = timed.slowest.id
        found.append(
            FirstAnswer(kind="slow_compile", compile_id=cid, text=text, seconds=round(seconds, 6), phase=phase)
        )
    return found


def _broken_by(failed: CompileEntry, breaks: Sequence[DistinctGraphBreak]) -> str:
    """`; the graph break at a.py:22 ran it in eager, and that break's fix avoids it`: a library's
    function compiled on its own from a user's line that broke the graph, where that break has a
    fix (logging's `_log` after `log.info(...)`), so the failure's cause is said beside it."""
    user = _caller(failed)
    if user is None:
        return ""
    at = (user.file, user.line)
    fixed = any(isinstance(b.fix, Fix) and (b.user_frame.file, b.user_frame.line) == at for b in breaks)
    return f"; the graph break at {where_text(user)} ran it in eager, and that break's fix avoids it" if fixed else ""


def _caller(entry: CompileEntry) -> SourceLocation | None:
    """The user's line that called the compiled function when that function is not the user's own
    (a library's, compiled on its own: logging's `_log`, torch's wrapper `inner`), else None."""
    fn, user = entry.function, entry.user_frame
    if fn is None or user is None or user.line is None or user.file == fn.file:
        return None
    return user


def _failure_answer(failed: CompileEntry, failure: Failure, filled: str) -> FirstAnswer:
    """`first failure: [0/0] f failed at a.py:17 (`x.item()`): Unsupported: …` and `filled` (what
    filled the recompile limit, the functions its frame then compiled on their own)."""
    where = _at(failure.user_frame)
    # No line of the user's where it failed (a backend's failure), or a line in a function it
    # called (`forward` failing in another class's `forward`): where its function is.
    inside = where and _inside(failure.user_frame, failed.function)
    # A library function compiled on its own (logging's `_log`, run by a user's line after its
    # break) is named with the user's line that called it, as the slowest compile's line is.
    named = _compile(failed) if inside and _caller(failed) is None else _compile_at(failed)
    reason = _cut(failure.reason)
    reason = reason.removesuffix(".") if filled else reason  # `…not supported; the functions…`
    text = f"first failure: {named} failed{where}: {failure.type}: {reason}{filled}"
    if failed.status != "failed":
        renumbered = renumbered_why(failed.capture)
        text += f"; a later compile numbered {failed.id} ended {status_words(failed.status)} ({renumbered})"
    return FirstAnswer(kind="failure", compile_id=failed.id, text=text)


def unfinished_answer(entry: CompileEntry) -> FirstAnswer | None:
    """`the log ends inside [0/0] forward (train.py:8), in inductor_compile, Inductor …`: the
    compile whose lines end the log and that never logged its metrics (`unfinished`)."""
    phases = entry.unfinished if isinstance(entry.unfinished, list) else []
    if not phases:
        return None
    last = phases[-1]
    words = f", {PHASES[last]}" if last in PHASES else ""
    text = (
        f"unfinished: the log ends inside {_compile_at(entry)}, in {last}{words}: it logged no metrics, "
        f"which a compile does when it ends, failed or not: the process stopped (killed, out of memory, "
        f"a crash) or the log was cut"
    )
    return FirstAnswer(kind="unfinished", compile_id=entry.id, text=text)


def slow_label(answer: FirstAnswer) -> str | None:
    """The compile a `slow_compile` line names (`[4/0] forward (_ranks.py:40)`), as its text says
    it before ` took ` (a compiled function's name has no space, nor does a file's base name in
    practice); None for a text not written so."""
    head = f"{SLOW_WORDS} "
    end = answer.text.find(" took ", len(head))
    return answer.text[len(head) : end] if answer.text.startswith(head) and end > 0 else None


def _busiest(entry: CompileEntry) -> str | None:
    """`; 900 of its graph's 901 nodes are unroll.py:4 (`x = …`), …`: the line a big Dynamo
    graph was mostly traced from (Graph.busiest_line, 1.49), what made the compile slow."""
    for graph in entry.graphs:
        line = graph.busiest_line
        if isinstance(line, LineNodes) and graph.nodes:
            at = where_text(SourceLocation(file=line.file, line=line.line))
            return (
                f"; {line.nodes:,} of its graph's {graph.nodes:,} nodes are {at} (`{_cut(line.code)}`), one line "
                f"traced again and again (a Python loop Dynamo unrolls, or a function called in one): its "
                f"compile grows with the iterations"
            )
    return None


def slow_fix(answer: FirstAnswer) -> str | None:
    """The clause a `slow_compile` line ends with, as its text says it (1.49): the compile's
    `time_fix` (`fix: compile each block, …`), else the line its big graph grew from (`600 of its
    graph's 601 nodes are …`); None for a line without one."""
    if answer.kind != "slow_compile":
        return None
    at = answer.text.rfind(f"; {REGIONAL_WORDS}")
    if at < 0:
        found = re.search(_BUSIEST, answer.text)
        at = found.start() if found is not None else -1
    return answer.text[at + 2 :] if at > 0 else None


def _slow_text(timed: CompileTime, seconds: float, went: list[str], phase: str | None) -> str:
    """`38.23 s of 64.10 s in 15 compiles (60 %), in compile_file (27.90 s of backend_compile's
    37.97 s), compiling generated C++; its fx_graph cache missed`: the compile's time against the
    run's, where it went (phase_words' chain), the caches it missed or that were bypassed."""
    backward = backward_s(timed.slowest)
    said = f"{seconds:.2f} s" + (f" ({backward:.2f} s of it its backward)" if backward >= 0.005 else "")
    if timed.compiles > 1:
        # A ratio first: 100 * a huge logged time is inf (a damaged log's 1e308 s), a ratio is not.
        ratio = seconds / timed.total_s if timed.total_s > 0 else 1.0
        share = round(100 * ratio) if math.isfinite(ratio) else 100
        said += f" of {timed.total_s:.2f} s in {timed.compiles} compiles ({share} %)"
    else:
        said += ", the run's only timed compile"
    if went and phase is not None:
        said += f", in {went[0]}" + (f", {PHASES[phase]}" if phase in PHASES else "")
    return said + _caches(timed.slowest)


def _caches(entry: CompileEntry) -> str:
    """`; its fx_graph and aotautograd caches missed`, `; its fx_graph cache was bypassed: reason`,
    or nothing: where a warm or usable cache would have saved the compile's time."""
    bypassed = next((c for c in entry.cache if c.outcome == "bypass"), None)
    said = "".join(f"; its {_missed(caches, counts)}" for counts, caches in _misses(entry).items())
    if bypassed is not None:
        why = f": {_cut(bypassed.reason)}" if bypassed.reason and bypassed.reason.strip() else ""
        said += f"; its {bypassed.cache} cache was bypassed{why}"
    return said


def _misses(entry: CompileEntry) -> dict[tuple[int, int], list[str]]:
    """The caches that missed, by (misses, lookups), (0, 0) for those whose every lookup missed: a
    compile id numbered again after torch._dynamo.reset() holds each compile's lookups, the
    first's misses and the next's hits."""
    counts: dict[str, list[int]] = {}
    for c in entry.cache:
        if c.outcome in ("hit", "miss"):
            n = counts.setdefault(c.cache, [0, 0])
            n[0] += c.outcome == "miss"
            n[1] += 1
    grouped: dict[tuple[int, int], list[str]] = {}
    for cache, (misses, lookups) in sorted(counts.items()):
        if misses:  # every lookup missed: one group whatever the number (fx_graph's fw and bw)
            grouped.setdefault((misses, lookups) if misses < lookups else (0, 0), []).append(cache)
    return grouped


def _missed(caches: list[str], counts: tuple[int, int]) -> str:
    """`fx_graph cache missed`, `aotautograd and fx_graph caches missed 1 of 2 lookups each`."""
    misses, lookups = counts
    plural = "s" if len(caches) > 1 else ""
    some = f" {misses} of {lookups} lookups" + (" each" if plural else "") if lookups else ""
    return f"{' and '.join(caches)} cache{plural} missed{some}"


def _fix(fix: Fix) -> str:
    """A recompile's fix in one clause, as `summary` words it: a line to change (`change_code`,
    `code` being that line), the setting at the call (`dynamic_false`), else a line to add before
    the call that passed the input."""
    where = where_text(fix.where) if fix.where is not None else None
    if fix.kind == "regional":  # a slow compile's (`time_fix`): what to compile instead
        return f"{REGIONAL_WORDS}`{_cut(fix.code)}`" + (f" before {where}" if where else "")
    if fix.kind == "change_code":
        return f"fix: change the line {where} (`{_cut(fix.code)}`)" if where else f"fix: change `{_cut(fix.code)}`"
    at = "at" if fix.kind == "dynamic_false" else "before"
    return f"fix: {_cut(fix.code)}" + (f" {at} {where}" if where else "")


def _compile(entry: CompileEntry) -> str:
    """`[0/0] fn`: the compile id and its function's name; a capture that logs no function (strict
    torch.export, `aot_compile`) says what it is: `[0/0] (export)`."""
    name = entry.function_name()
    if name:
        return f"{entry.id} {name}"
    return f"{entry.id} ({entry.capture})" if entry.capture else entry.id


def _inside(frame: SourceLocation | None, function: SourceLocation | None) -> bool:
    """Whether `frame` may be a line of `function` itself: the same function name in the same
    file, at or after its first line (unknown parts count as the same)."""
    if frame is None or function is None:
        return True
    if frame.file != function.file or (frame.name and function.name and frame.name != function.name):
        return False
    return frame.line is None or function.line is None or frame.line >= function.line


def _compile_at(entry: CompileEntry) -> str:
    """`[0/0] fn (train.py:12)`: the compile id, its function's name and where the user's code
    defines it, as the ranks' sentences name a compiled function; `[0/0] inner (called from
    train.py:30)` where the function is not the user's own (a torch wrapper): the user's line
    that reached it (`user_frame`). No code: a job folds these lines by what precedes ` took `."""
    caller = _caller(entry)
    if caller is not None:
        return f"{_compile(entry)} (called from {where_text(caller)})"
    fn, user = entry.function, entry.user_frame
    if fn is None and user is not None and user.line is not None:
        # A fullgraph capture logs no function: the user's line that asked for it (`.aot_compile(...)`).
        how = f"{entry.capture} at" if entry.capture else "called from"
        return f"{entry.id} ({how} {where_text(user)})"  # the capture said once, with its line
    if fn is None or fn.line is None or fn.file in (None, "(unknown)"):
        return _compile(entry)
    return f"{_compile(entry)} ({where_text(fn)})"


def _at(frame: SourceLocation | None) -> str:
    """` at file.py:17 (`print(x)`)`, or nothing without a frame."""
    if frame is None:
        return ""
    code = f" (`{_cut(frame.code.strip())}`)" if frame.code and frame.code.strip() else ""
    return f" at {where_text(frame)}{code}"


def _cut(text: str) -> str:
    """The text's first line, up to CUT characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= CUT else first[: CUT - 1] + "…"


#: What each kind's line starts with (`first_answers`' texts): how a diff names it. Not the
#: slowest compile: no two runs take the same time, and a diff compares the runs' compile times
#: compile by compile in its own section (time_diff.py).
_KIND_WORDS = {"failure": "first failure", "graph_break": "most frequent graph break", "recompile": "first recompile"}
#: The first answer kinds two runs are compared by (`answer_changes`, and a job diff's ranks' lines).
COMPARED_KINDS = frozenset(_KIND_WORDS)


def answer_changes(
    a: Sequence[FirstAnswer], b: Sequence[FirstAnswer], sides: tuple[str, str] = ("A", "B")
) -> list[str]:
    """How two runs' first answers differ, a line a kind (`tlscope diff`'s first lines: a failure
    fixed, a break that moved, a recompile that appeared), [] when they say the same; `sides` name
    the two (`A`, `rank 1`)."""
    lines = []
    where = [f"on {side}" if side.startswith("rank ") else f"in {side}" for side in sides]
    for kind, word in _KIND_WORDS.items():
        said = [next((x.text for x in side if x.kind == kind), None) for side in (a, b)]
        if said[0] == said[1]:
            continue
        rest = [text[len(word) :] if text is not None and text.startswith(word) else f": {text}" for text in said]
        if said[0] is None or said[1] is None:
            one = 0 if said[1] is None else 1
            lines.append(f"{word} only {where[one]}{rest[one]}")
        else:
            lines.append(f"{word} differs: {where[0]}{rest[0]}; {where[1]}{rest[1]}")
    return lines
