"""The answers in the report: index.html's sections (distinct graph breaks, recompiles explained,
log size), the badges on its compile-id rows that link to them, and compile_time.html (the
compile-time flame graph). All of it is compiles.json's and log_size.json's data (RunContext
`answers`), rendered by templates with autoescape; the flame graph's data goes in via `tojson`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import msgspec

from tlscope.analyse.caches import grouped, logged_sum, missed_time, time_saved
from tlscope.analyse.flame import flame_tree
from tlscope.analyse.fold.capture import renumbered_why
from tlscope.format.compiles import INSTRUCTION_KINDS, Answers, CompileEntry, SourceLocation
from tlscope.format.status import status_words
from tlscope.write.outdir import OutputDir
from tlscope.write.report.render import render
from tlscope.write.source_link import source_href

#: Rows of each ranking shown in index.html (the files hold all).
TOP = 20


class Badge(msgspec.Struct, frozen=True):
    """A link after a compile id's label in index.html's list of build products."""

    href: str
    text: str
    css: str


def anchor(entry: CompileEntry | AnswerRow) -> str:
    """The id of a compile's row in the recompiles section (path-safe, like its folder)."""
    return f"recompile-{entry.dir}"


class AnswerRow(msgspec.Struct, frozen=True):
    """What index.html shows of a compile outside its recompiles section: a compile's entry read
    once for the badges, the statuses line and the recovered ids (after a parse the entries are
    decoded from compiles.json each time they are read: write/answers_sink.py `WrittenItems`)."""

    id: str
    dir: str
    status: str
    #: An earlier compile of the id failed (its status is its last compile's).
    recovered: bool
    recompiled: bool
    #: The functions of its forward compiles when it held several (ids numbered again after
    #: torch._dynamo.reset()), in log order; empty when it held one.
    held: tuple[str, ...] = ()
    #: Its bypassed cache lookups: (cache, torch's reason).
    bypassed: tuple[tuple[str, str | None], ...] = ()
    #: Why it held several compiles, when it did (analyse/fold/capture.py `renumbered_why`).
    why: str = ""
    #: The compile time its cache hits saved, and its misses' compile time (analyse/caches.py).
    saved_s: float | None = None
    missed_s: float | None = None


def rows(compiles: Iterable[CompileEntry]) -> list[AnswerRow]:
    return [
        AnswerRow(
            e.id,
            e.dir,
            e.status,
            e.status != "failed" and bool(_failed_records(e)),
            e.recompile is not None,
            _held(e),
            tuple((c.cache, c.reason) for c in e.cache if c.outcome == "bypass"),
            renumbered_why(e.capture),
            time_saved(e.cache),
            missed_time(e.cache),
        )
        for e in compiles
    ]


def _held(entry: CompileEntry) -> tuple[str, ...]:
    forward = [r.co_name or "?" for r in entry.metrics_records if r.kind == "compilation_metrics"]
    return tuple(forward) if len(forward) > 1 else ()


def badges(answers: Answers, found_rows: Sequence[AnswerRow] | None = None) -> dict[str, list[Badge]]:
    """Per compile-id label (`[0/1]`): its status and links to the sections that explain it."""
    group_of = {cid: i for i, group in enumerate(answers.graph_breaks) for cid in group.compile_ids}
    size = answers.log_size.by_compile_id
    found: dict[str, list[Badge]] = {}
    for entry in rows(answers.compiles) if found_rows is None else found_rows:
        if entry.status == "outside":
            continue
        row = [Badge(href="#compiles", text=entry.status.replace("_", " "), css=f"answer-{entry.status}")]
        if entry.recovered:
            row.append(Badge(href="#compiles", text="an earlier compile failed", css="answer-failed"))
        if entry.id in group_of:
            row.append(Badge(href=f"#graph-break-{group_of[entry.id]}", text="where it broke", css="answer-link"))
        if entry.recompiled:
            row.append(Badge(href=f"#{anchor(entry)}", text="why recompiled", css="answer-link"))
        if entry.id in size:
            row.append(Badge(href="#log-size", text=f"{size[entry.id].bytes / 1024:.0f} KB of log", css="answer-link"))
        found[entry.id] = row
    return found


def sections(
    answers: Answers, source_url: str = "", source_root: str = "", found_rows: Sequence[AnswerRow] | None = None
) -> dict[str, object]:
    """The template context of index.html's answers sections; a user line links to its source
    when `source_url` is given (`--source-url`, write/source_link.py)."""
    size = answers.log_size
    found = rows(answers.compiles) if found_rows is None else found_rows

    def source(frame: SourceLocation | None) -> str | None:
        return None if frame is None else source_href(source_url, source_root, frame.file, frame.line)

    return {
        "answers_source": source,
        # A fix whose `code` is words, not a line to add (format/compiles.py).
        "answers_instructions": INSTRUCTION_KINDS,
        "answers_statuses": _statuses(found),
        # The first answers in a line each (analyse/headline.py), as `tlscope LOG` prints them.
        "answers_headline": answers.headline,
        "answers_recovered": [r.id for r in found if r.recovered],
        # An id said above as recovered is said here only when it held other functions too.
        "answers_held": [(r.id, r.held) for r in found if r.held and (not r.recovered or len(set(r.held)) > 1)],
        # Why those ids held several compiles, each reason once.
        "answers_renumbered": "; ".join(dict.fromkeys(r.why for r in found if r.recovered or len(r.held) > 1)),
        "answers_bypassed": grouped((r.id, cache, why) for r in found for cache, why in r.bypassed),
        "answers_cache_saved": logged_sum(r.saved_s for r in found),
        "answers_cache_missed": logged_sum(r.missed_s for r in found),
        "answers_breaks": answers.graph_breaks[:TOP],
        "answers_more_breaks": max(len(answers.graph_breaks) - TOP, 0),
        "answers_recompiles": _Recompiles(answers.compiles, any(r.recompiled for r in found)),
        "answers_size": size,
        "answers_size_keys": list(size.by_event_key.items())[:TOP],
        "answers_size_ids": list(size.by_compile_id.items())[:TOP],
        "answers_anchor": anchor,
        "answers_exports": answers.exports,
        "answers_exports_note": answers.exports_note,
        "answers_aot_inductor": answers.aot_inductor,
        "answers_vllm": answers.vllm,
        "answers_dynamic": answers.dynamic,
        "answers_settings": answers.settings,
        # An export call's status drawn in the colour of the compile status that means the same.
        "answers_export_css": {
            "failed": "failed",
            "exported_with_issues": "graph_break",
            "exported": "ok",
            "traced": "metrics_missing",
        },
    }


def _failed_records(entry: CompileEntry) -> int:
    """Failed compiles of an id whose status is its last compile's (compiles.json `metrics_records`)."""
    return sum(r.status == "failed" for r in entry.metrics_records)


class _Recompiles:
    """The entries with a `recompile`, read from the answers as the template iterates them (a big
    log's do not all fit in memory: after a parse they are decoded one at a time from
    compiles.json); true when there is one."""

    def __init__(self, compiles: Sequence[CompileEntry], some: bool) -> None:
        self._compiles = compiles
        self._any = some

    def __bool__(self) -> bool:
        return self._any

    def __iter__(self) -> Iterator[CompileEntry]:
        return (e for e in self._compiles if e.recompile is not None)


def _statuses(compiles: Iterable[AnswerRow]) -> list[tuple[str, int, str]]:
    """(status, count, words) for the index's statuses line, most frequent first."""
    counts: dict[str, int] = {}
    for entry in compiles:
        if entry.status != "outside":
            counts[entry.status] = counts.get(entry.status, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    return [(status, n, status_words(status, n)) for status, n in ordered]


def write_flame_page(out: OutputDir, answers: Answers) -> bool:
    """compile_time.html, when some compile has a time; True if written."""
    root = flame_tree(answers.compiles, answers.aot_inductor)
    if not root.children:
        return False
    page = render("compile_time.html.jinja", tree=msgspec.to_builtins(root))
    out.path("compile_time.html").write_text(page, encoding="utf-8")
    return True
