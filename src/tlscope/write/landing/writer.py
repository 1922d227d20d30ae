"""Write the landing page and the combined cross-rank files into OUT (reference §6.4-§6.10)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec
from jinja2 import Template
from markupsafe import Markup

from tlscope.analyse.ranks import compare, table
from tlscope.analyse.ranks.divergence import Divergence, JobView, job_view
from tlscope.analyse.ranks.job_answers import answer_lines
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.analyse.ranks.straggler_why import explain_stragglers
from tlscope.analyse.ranks.stragglers import straggler_lines, straggler_title
from tlscope.format import layout
from tlscope.format.compiles import CompileEntry
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION
from tlscope.write import templates
from tlscope.write.explorer_note import EXPLORER_NOTE
from tlscope.write.landing.jsonout import pretty
from tlscope.write.outdir import OutputDir
from tlscope.write.timeline_writer import merge as merge_timelines

#: The job's rank lines and divergence, beside the rank folders.
RANKS_FILE = layout.RANKS


def write_landing(
    out: OutputDir,
    summaries: Sequence[RankSummary],
    notes: Sequence[str] = (),
    *,
    info: Sequence[str] = (),
    header: str = "",
) -> dict[str, str]:
    """Write everything beside the rank folders; returns {label: file} of the optional files written.

    `notes` are inputs left out (shown with the problems); `info` what tlscope did to the input
    (a muxed log split by rank), shown as plain text: it is not a problem.
    `header` is the user's --custom-header-html, inserted unescaped (it is theirs, as in tlparse).
    A job's `summaries` (pipeline/rank_store.py) are decoded from a file at each pass over them:
    every step below reads them a rank at a time and keeps what it folds, never the summaries.
    """
    facts = _Facts(summaries)
    ranks = facts.ordered
    written: dict[str, str] = {}
    # Every rank's timeline in one file (the Ranks view's): a job is one trace to a viewer.
    merge_timelines(
        ((n, out.path(layout.rank_file(n, layout.TIMELINE))) for n in facts.parsed),
        out.path(layout.TIMELINE),
    )
    if facts.has_runtime:
        _write_array(out, "runtime_estimations.json", (_estimations(r) for r in ranks), sort_keys=False)
        _write_array(out, "chromium_trace_with_runtime.json", compare.runtime_trace(ranks))
        written["Runtime estimations"] = "runtime_estimations.json"
    if facts.has_schedules:
        _write_array(out, "collective_schedules.json", (_schedules(r) for r in ranks), sort_keys=False)
        written["Collective schedules"] = "collective_schedules.json"
    _write_array(out, "multi_rank_summary.json", ([_behind_the_page(r)] for r in ranks), sort_keys=False)
    overviews = (r.overview for r in ranks if r.parsed and r.overview is not None)
    view = job_view(overviews, _payloads(out), _configs(out)) if facts.overviews else None
    if view is not None:
        if view.stragglers is not None and view.stragglers.ranks:
            explain_stragglers(view.stragglers, _compiles(out), view.divergence.settings)
        _write_ranks_json(out, view)
    # Where ranks number functions differently, a matrix row is one function (ranks.json's columns).
    rows = view.divergence.rows if view is not None else []
    renamed = {rank: row.columns for row in rows if isinstance(row.columns, dict) for rank in row.ranks}
    context = _context(ranks, facts, notes, renamed)
    context["divergence"] = view.divergence if view is not None else None
    context["stragglers"] = view.stragglers if view is not None else None
    context["first_answers"] = view.first_answers if view is not None else None
    context["said_why"] = SAID_WHY
    context.update(_marked_ids(view.divergence if view is not None else None))
    # No OUT/chromium_events.json: the ranks' files hold the events (tlscope serve combines them).
    # Their links keep the page's chromium link working from disk, where no server combines them.
    context["has_chromium"] = bool(facts.chromium)
    context["chromium_ranks"] = facts.chromium
    context["info"] = list(info)
    context["header"] = Markup(header)
    context["explorer_note"] = EXPLORER_NOTE
    with out.path("index.html").open("w", encoding="utf-8") as page:
        page.writelines(_template().generate(**context))
    return written


def _payloads(out: OutputDir) -> Callable[[str], str | None]:
    """The job's payloads (`payloads/<md5>.txt`, one store for every rank) as text, for the
    divergence to say where two ranks' graphs differ; None for another name or a missing file."""

    def read(name: str) -> str | None:
        if not layout.is_payload_name(name):
            return None
        try:
            return out.path(name).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    return read


def _compiles(out: OutputDir) -> Callable[[int], Sequence[CompileEntry] | None]:
    """Rank N's compiles.json entries (just written), for the stragglers' `why`; None when unreadable."""

    def read(rank: int) -> Sequence[CompileEntry] | None:
        from tlscope.format.errors import FormatError
        from tlscope.format.folder import OutputFolder

        try:
            return OutputFolder(out.path(layout.rank_dir(rank))).compiles().compiles
        except (OSError, FormatError):
            return None

    return read


def _configs(out: OutputDir) -> Callable[[int], dict[str, dict[str, Any]]]:
    """Rank N's first metrics record's configs (its raw.jsonl, just written), for the divergence
    to say which settings differ between ranks; {} when they cannot be read."""

    def read(rank: int) -> dict[str, dict[str, Any]]:
        # Here, not at the top: only a job whose ranks ran under other settings reads them.
        from tlscope.analyse.config_diff import first_configs
        from tlscope.format.errors import FormatError
        from tlscope.format.folder import OutputFolder

        folder = OutputFolder(out.path(layout.rank_dir(rank)))
        try:
            return first_configs(folder.events("compilation_metrics"))
        except (OSError, FormatError):
            return {}

    return read


class _Facts:
    """One pass over the ranks for the small things every step asks: their numbers, which parsed
    (and logged chromium events, or have an overview), which files are due, and the problems."""

    def __init__(self, summaries: Sequence[RankSummary]) -> None:
        self.numbers: list[int] = []
        self.parsed: list[int] = []
        self.chromium: list[int] = []
        self.problems: list[tuple[int, str]] = []
        self.has_runtime = self.has_schedules = False
        self.overviews = 0
        for r in summaries:
            self.numbers.append(r.rank)
            self.parsed += [r.rank] if r.parsed else []
            self.chromium += [r.rank] if r.parsed and r.chromium_events > 0 else []
            self.overviews += r.parsed and r.overview is not None
            self.has_runtime = self.has_runtime or bool(r.runtimes)
            self.has_schedules = self.has_schedules or bool(r.schedules)
            self.problems.extend((r.rank, e) for e in r.errors)
        ordered = self.numbers == sorted(self.numbers)
        #: The summaries in rank order: as given when they are (a job's always are: read again, not copied).
        self.ordered = summaries if ordered else sorted(summaries, key=lambda s: s.rank)
        if not ordered:
            self.numbers.sort()
            self.parsed.sort()
            self.chromium.sort()
            self.problems.sort(key=lambda p: p[0])


#: What each divergence list means, said beside its title on the landing page (the lists, their
#: order and titles are ranks.json's `said`). Our own text, not the log's: Markup, so the page
#: keeps it as written (an apostrophe, not `&#39;`).
_SAID_WHY = {
    "frames": "a compile id numbers a function in the order its rank first compiled it: one more function early "
    "renumbers every later one; compared by function",
    "collectives": "a collective that differs fails or hangs when it runs",
    "settings": "each rank's first compile's configs, then each compile's own where some ranks changed a setting "
    "after their first; a setting changed on some ranks, or another torch version",
    "graphs": "ranks that compiled the same compile id traced other code: a branch on the rank or on data, or inputs "
    "of other sizes; or Inductor's passes made other post-grad graphs of one graph, or other code from one graph",
    "caches": "a compile's FX graph or AOTAutograd cache hit on some ranks and missed on others: a rank that missed "
    "compiles again what the others loaded, or its graph or settings differ in what the cache key sees",
}
SAID_WHY = {name: Markup(text) for name, text in _SAID_WHY.items()}


def _marked_ids(divergence: Divergence | None) -> dict[str, set[str]]:
    """The compile ids the matrix marks (ranks.json's): those whose collectives differ between
    ranks, whose Dynamo graphs differ, whose cache lookups answered differently, and those some
    ranks compiled under other settings (format 1.38: a change after the first compile)."""
    if divergence is None:
        return {name: set() for name in ("collective_ids", "graph_ids", "cache_ids", "settings_ids")}
    return {
        "collective_ids": {m.id for m in divergence.collectives},
        "graph_ids": {m.id for m in divergence.graphs},
        "cache_ids": {m.id for m in divergence.caches},
        "settings_ids": {m.id for m in divergence.settings if isinstance(m.id, str)},
    }


def _behind_the_page(rank: RankSummary) -> dict[str, Any]:
    """A rank's object in multi_rank_summary.json: its summary, with `stats` after `compiles` as the
    file has always had it. `stats` is the rank's line (ranks.json's, `RankSummary.line`) under the
    names it had when the page counted its own figures; kept so readers of the file do not break."""
    body: dict[str, Any] = msgspec.to_builtins(rank)
    # The digests of the rank's graphs and settings, the inputs it made dynamic, its frames'
    # functions, its cache lookups and its compiles' settings changes are how ranks.json's
    # `divergence.graphs`, `.settings`, `.frames` and `.caches` were decided, not facts of the
    # page: a thousand ranks' worth of them would be noise in this file.
    body.pop("settings", None)
    overview = body.get("overview")
    if isinstance(overview, dict):
        for internal in ("graphs", "settings", "dynamic", "frames", "caches", "cache_keys", "changed_settings"):
            overview.pop(internal, None)
    line = rank.line
    stats = {
        "compilations": line.compiles,
        "compile_time_s": line.compile_time_s,
        "graph_breaks": line.graph_breaks,
        "recompiles": line.recompiles,
        "cache_hits": line.cache_hits,
        "cache_misses": line.cache_misses,
        "failures": line.failures,
    }
    keys = list(body)
    at = keys.index("compiles") + 1 if "compiles" in keys else len(keys)
    return {**{k: body[k] for k in keys[:at]}, "stats": stats, **{k: body[k] for k in keys[at:]}}


def ranks_json(view: JobView) -> str:
    """ranks.json's text (docs/FORMAT.md): the format's header, then the job view's fields."""
    return pretty({**_RANKS_HEADER, **msgspec.to_builtins(view)}, sort_keys=False) + "\n"


_RANKS_HEADER = {"format": "tlscope", "format_version": FORMAT_VERSION, "format_minor": FORMAT_MINOR}
#: Stands for the lines of ranks.json while the rest of it is made (`_write_ranks_json`).
_LINES = "tlscope: the ranks' lines"


def _write_ranks_json(out: OutputDir, view: JobView) -> None:
    """ranks.json, `ranks_json(view)`'s very text, written a rank line at a time: the file is
    made with one placeholder line for the lines, split there, and each line's pretty text,
    indented as the array's items are, goes in between (a job's whole text at once, with its
    copies, grew with the ranks)."""
    body = msgspec.to_builtins(msgspec.structs.replace(view, ranks=[]))
    body["ranks"] = [_LINES]
    # The placeholder comes before the divergence (log-derived text): the first match is it.
    head, tail = pretty({**_RANKS_HEADER, **body}, sort_keys=False).split(f'\n    "{_LINES}"\n', 1)
    with out.path(RANKS_FILE).open("w", encoding="utf-8") as stream:
        stream.write(head)
        for i, line in enumerate(view.ranks):
            item = pretty(msgspec.to_builtins(line), sort_keys=False).replace("\n", "\n    ")
            stream.write(("\n    " if i == 0 else ",\n    ") + item)
        stream.write("\n" + tail + "\n")


def _write_array(out: OutputDir, name: str, parts: Iterable[list[Any]], *, sort_keys: bool = True) -> None:
    """`pretty(every part's items, one array)` written a part (a rank's items) at a time: a job's
    arrays (multi_rank_summary.json, the runtime estimations, their chromium trace) made as one
    text with their copies grew with the ranks (multi_rank_summary.json's was the parent's peak,
    ~6 MB at 256 ranks). `pretty(part)` is "[\n  a,\n  b\n]": its text between the brackets is
    its items as the whole array's, indented as they are there, so the parts' texts joined with
    "," between "[" and "\n]" are the whole array's text."""
    with out.path(name).open("w", encoding="utf-8") as stream:
        first = True
        for items in parts:
            if items:
                stream.write(("[" if first else ",") + pretty(items, sort_keys=sort_keys)[1:-2])
                first = False
        stream.write("[]" if first else "\n]")


def _schedules(rank: RankSummary) -> list[dict[str, Any]]:
    """collective_schedules.json's items of a rank: its graphs' collectives."""
    return [{"rank": rank.rank, "graph": g.graph, "ops": g.ops} for g in rank.schedules]


def _estimations(rank: RankSummary) -> list[dict[str, Any]]:
    """runtime_estimations.json's items of a rank: its graphs' ops with their estimated runtimes."""
    return [
        {
            "rank": rank.rank,
            "graph": g.graph,
            "ops": [{"name": name, "estimated_runtime_ns": ns} for name, ns in g.ops],
        }
        for g in rank.runtimes
    ]


class _ParsedRanks:
    """The ranks that parsed, read again at each iteration (a list of them would hold them all)."""

    def __init__(self, ranks: Sequence[RankSummary]) -> None:
        self._ranks = ranks

    def __iter__(self) -> Iterator[RankSummary]:
        return (r for r in self._ranks if r.parsed)


def _context(
    ranks: Sequence[RankSummary], facts: _Facts, notes: Sequence[str], renamed: dict[int, dict[str, str]]
) -> dict[str, Any]:
    parsed = _ParsedRanks(ranks)
    cid_groups = compare.compile_id_divergence(parsed)
    cache_groups = compare.cache_divergence(parsed)
    collective_groups = compare.collective_divergence(parsed)
    meta_groups = compare.tensor_meta_divergence(parsed)
    has_runtime = facts.has_runtime
    return {
        "ranks": facts.numbers,
        "cid_groups": cid_groups,
        "cid_diverges": len(cid_groups) > 1,
        "cache_groups": cache_groups,
        "cache_diverges": len(cache_groups) > 1,
        "collective_groups": collective_groups,
        "collective_diverges": len(collective_groups) > 1,
        "meta_groups": meta_groups,
        "meta_diverges": len(meta_groups) > 1,
        "has_runtime": has_runtime,
        "deltas": compare.runtime_deltas(parsed) if has_runtime else [],
        "order": compare.execution_order_summary(parsed),
        "table": table.rank_table(ranks),
        "matrix": table.compile_id_matrix(ranks, renamed),
        "problems": facts.problems,
        "notes": list(notes),
    }


def _ms(value: float) -> str:
    return repr(float(value))


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _rank_list(ranks: Sequence[int]) -> str:
    return ", ".join(str(r) for r in ranks)


def prepare_landing() -> None:
    """Compile the landing page's template now (e.g. while the ranks are parsed), not at the end."""
    _template()


@functools.cache
def _template() -> Template:
    filters: dict[str, Callable[..., str | list[str]]] = {
        "ms": _ms,
        "seconds": _seconds,
        "rank_list": _rank_list,
        "straggler_title": straggler_title,
        "straggler_lines": straggler_lines,
        "answer_lines": answer_lines,
    }
    return templates.environment("tlscope.write.landing", filters).get_template("landing.html.jinja")
