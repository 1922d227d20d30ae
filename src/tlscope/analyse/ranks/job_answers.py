"""A job's first answers, all ranks first: each rank's first failure, most frequent graph break,
first recompile and slowest compile (compiles.json `first_answers`), the ranks that say the same
line said once, with their ranks: ranks.json's `first_answers`. A rank's slowest compile took its
own time, so its line is folded by the compile it names, and said with the ranks' range of
seconds and the phases their time went to: `every rank: most compile time: [4/0] forward
(_ranks.py:40) took 25.12 to 59.30 s a rank (median 29.20 s), in code_gen on 700 ranks,
compile_file on 300` (the stragglers say slow ranks).

At a thousand ranks a failure every rank met is one line `ranks 0-999: first failure: …`, and a
rank that failed alone stands out beside it; decided here once, for `tlscope JOB`, `summary JOB`,
the landing page and the explorer alike.
"""

from __future__ import annotations

import statistics
from array import array
from collections import Counter
from collections.abc import Iterable

import msgspec

from tlscope.analyse.headline import SLOW_WORDS, slow_fix, slow_label
from tlscope.analyse.ranks.words import who
from tlscope.format.compiles import FIRST_ANSWER_KINDS, FirstAnswer

#: Lines kept a kind: the most ranks' first; the rest are counted (`more`).
SHOWN = 5
#: Phases a slowest-compile line names where its ranks' time went to several.
PHASES_SAID = 2
#: Distinct lines a kind is folded with: past it, a line no rank said yet is only counted, so the
#: parent's memory stays bounded when every rank fails its own way.
KEPT = 200


class JobAnswer(msgspec.Struct, kw_only=True):
    """One line of the job's first answers: the rank line (compiles.json's `text`) and the ranks
    that said it. Since 1.42."""

    #: One of compiles.json's first answer kinds (`failure`, `graph_break`, `recompile`).
    kind: str
    #: The compile it is about, on the lowest of `ranks`.
    compile_id: str | None = None
    text: str
    #: The ranks whose compiles.json says this line, ascending.
    ranks: list[int]
    #: The ranks in words: `every rank`, `rank 3`, `ranks 0-6`.
    who: str


class JobAnswers(msgspec.Struct, kw_only=True):
    """ranks.json's `first_answers`: the lines, in kind order, then the most ranks' first (the
    lower ranks first among equals); `more`, the distinct lines left out (SHOWN a kind)."""

    lines: list[JobAnswer] = []
    more: int = 0


class AnswersFold:
    """The ranks' first answers, folded a rank at a time."""

    def __init__(self) -> None:
        #: kind -> (compile id, text) -> the ranks saying it.
        self.said: dict[str, dict[tuple[str | None, str], array[int]]] = {
            k: {} for k in FIRST_ANSWER_KINDS if k != "slow_compile"
        }
        #: The slowest compiles: (compile id, the compile as the line names it) -> the ranks, each
        #: one's seconds, how many ranks' time went to each phase (a handful of names) and how many
        #: said each last clause (1.49: `time_fix`'s, or the line a big graph grew from; one
        #: program's ranks say one).
        self.slow: dict[tuple[str | None, str], tuple[array[int], array[float], Counter[str | None], Counter[str]]] = {}
        self.ranks = 0
        self.unkept = 0

    def add(self, rank: int, answers: Iterable[FirstAnswer]) -> None:
        self.ranks += 1
        for answer in answers:
            if answer.kind == "slow_compile":
                self._add_slow(rank, answer)
                continue
            lines = self.said.get(answer.kind)
            if lines is None:
                continue
            key = (answer.compile_id, answer.text)
            ranks = lines.get(key)
            if ranks is None:
                if len(lines) >= KEPT:
                    self.unkept += 1
                    continue
                ranks = lines[key] = array("q")
            ranks.append(rank)

    def _add_slow(self, rank: int, answer: FirstAnswer) -> None:
        label = slow_label(answer)
        if label is None or answer.seconds is None:
            return  # not as tlscope writes it: no compile or time to fold by
        key = (answer.compile_id, label)
        found = self.slow.get(key)
        if found is None:
            if len(self.slow) >= KEPT:
                self.unkept += 1
                return
            found = self.slow[key] = (array("q"), array("d"), Counter(), Counter())
        found[0].append(rank)
        found[1].append(answer.seconds)
        found[2][answer.phase] += 1
        fix = slow_fix(answer)
        if fix is not None and (fix in found[3] or len(found[3]) < KEPT):
            found[3][fix] += 1

    def result(self) -> JobAnswers:
        found = JobAnswers(more=self.unkept)
        for kind, lines in self.said.items():
            ordered = sorted(lines.items(), key=lambda item: (-len(item[1]), min(item[1])))
            for (cid, text), ranks in ordered[:SHOWN]:
                mine = sorted(ranks)
                found.lines.append(JobAnswer(kind=kind, compile_id=cid, text=text, ranks=mine, who=self._who(mine)))
            found.more += max(0, len(ordered) - SHOWN)
        slow = sorted(self.slow.items(), key=lambda item: (-len(item[1][0]), min(item[1][0])))
        for (cid, label), (ranks, seconds, phases, fixes) in slow[:SHOWN]:
            mine = sorted(ranks)
            text = _slow_text(label, phases, seconds)
            if fixes:  # the most ranks' (the first met among equals)
                text += f"; {fixes.most_common(1)[0][0]}"
            found.lines.append(
                JobAnswer(kind="slow_compile", compile_id=cid, text=text, ranks=mine, who=self._who(mine))
            )
        found.more += max(0, len(slow) - SHOWN)
        return found

    def _who(self, ranks: list[int]) -> str:
        return "every rank" if len(ranks) == self.ranks and self.ranks > 1 else who(ranks)


def _slow_text(label: str, phases: Counter[str | None], seconds: array[float]) -> str:
    """`most compile time: [4/0] forward (_ranks.py:40) took 25.12 to 59.30 s a rank (median
    29.20 s), in code_gen`; `took 5.10 s` said by one rank, or by ranks that took the same."""
    low, high = min(seconds), max(seconds)
    took = f"{low:.2f} s" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f} s a rank"
    if len(seconds) > 2 and took.endswith("a rank"):
        took += f" (median {statistics.median(seconds):.2f} s)"
    return f"{SLOW_WORDS} {label} took {took}{_phases(phases)}"


def _phases(phases: Counter[str | None]) -> str:
    """`, in code_gen` where the ranks' time went to one phase; `, in code_gen on 3 ranks,
    compile_file on 1` where it split (a rank's innermost phase is code_gen or the compile_file
    inside it by how much compile_file took), the most ranks' first, PHASES_SAID of them."""
    named = sorted(((n, c) for n, c in phases.items() if n is not None), key=lambda nc: (-nc[1], nc[0]))
    if not named:
        return ""
    if len(named) == 1:
        return f", in {named[0][0]}"
    said = [f"{name} on {count} rank{'s' if count != 1 else ''}" for name, count in named[:PHASES_SAID]]
    said[1:] = [s.removesuffix(" ranks").removesuffix(" rank") for s in said[1:]]
    rest = sum(c for _, c in named[PHASES_SAID:])
    return ", in " + ", ".join(said) + (f", other phases on {rest}" if rest else "")


def read_job_answers(found: JobAnswers) -> JobAnswers:
    """ranks.json's `first_answers` as a reader keeps them (the JS client's `readRanks` alike;
    tests/conformance): the lines of a kind it knows that some rank says, SHOWN a kind at most
    (a file may be someone else's), those beyond counted in `more`."""
    kept: list[JobAnswer] = []
    more = found.more
    for kind in FIRST_ANSWER_KINDS:
        lines = [line for line in found.lines if line.kind == kind and line.ranks]
        kept += lines[:SHOWN]
        more += max(0, len(lines) - SHOWN)
    return JobAnswers(lines=kept, more=more)


def answer_lines(answers: JobAnswers) -> list[str]:
    """The job's first answers as text views print them: `ranks 0-7: first failure: …`."""
    lines = [f"{line.who}: {line.text}" for line in answers.lines]
    if answers.more:
        lines.append(f"and {answers.more} more line{'s' if answers.more != 1 else ''} on some ranks (--rank N)")
    return lines
