"""The programmatic entry point: parse a log, a folder of logs or a job's rank logs into OUT.

    from tlscope.pipeline.parse import parse
    parsed = parse(Path("trace.log"), Path("out"), overwrite=True)
    parsed.manifests[0].compile_ids

`tlscope PATH` (commands/parse_command.py), the server's cache, `tlscope run`, `summary`, `diff` and
`tlscope.load` all go through here, so they all see the same output tree. Everything is
written into a temporary sibling of OUT and renamed into place at the end: a failed run leaves
OUT as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

import msgspec

from tlscope.format import layout
from tlscope.format.compiles import Answers, AotInductorCompile, ExportCall, Vllm
from tlscope.format.errors import InputError
from tlscope.format.folder import OutputFolder
from tlscope.format.manifest import Manifest
from tlscope.pipeline.classify import classify
from tlscope.pipeline.single import Tracker, answer, run, untracked
from tlscope.read.inputs import resolve_input
from tlscope.write.context import SinkFactory
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions

if TYPE_CHECKING:  # a job's parse imports it (pipeline/ranks.py); one log's needs no rank module
    from tlscope.analyse.ranks.rank_summary import RankSummary

# The report (Jinja2, Pygments, its templates) and the multi-rank machinery are imported by the
# functions that use them, after `wants_multi_rank`: its muxed-log sniff holds an 8 MiB head
# for a moment, and with every module already loaded that moment was the run's peak RSS
# (+1.3 MB on the big trace); imported afterwards, the modules reuse the memory it freed.


#: The entry point, what it takes and what it gives (ParseOptions is write/run_options.py's).
__all__ = ["ParseOptions", "Parsed", "answer_log", "parse", "parse_job", "parse_log", "wants_multi_rank"]


class Parsed(msgspec.Struct, kw_only=True):
    """What one `parse` wrote."""

    #: The output folder.
    out: str
    #: True when PATH was parsed as the ranks of a job (OUT holds rank_N/ folders and a landing page).
    multi_rank: bool
    #: The manifest of each log parsed: the one log, or each rank that parsed (rank order; read
    #: from the rank folders when asked).
    manifests: Sequence[Manifest]
    #: Multi-rank: every rank's summary, failed ranks included (the landing page's facts), in rank
    #: order; else []. Kept in a temporary file and decoded when read (pipeline/rank_store.py).
    ranks: Sequence[RankSummary] = []
    #: One log: its compile ids per status (most severe first) and its torch.export calls, as its
    #: compiles.json has them (the command says them); empty for a job.
    statuses: dict[str, int] = {}
    recompiles: int = 0
    #: One log: its first answers in a line each (Answers `headline`); empty for a job.
    headline: list[str] = []
    exports: list[ExportCall] = []
    exports_note: str | None = None
    aot_inductor: list[AotInductorCompile] = []
    vllm: list[Vllm] = []


def wants_multi_rank(path: Path, *, all_ranks: bool, latest: bool) -> bool:
    """Whether PATH is parsed as a job's ranks: asked for, or several ranks found (not with --latest)."""
    if all_ranks and latest:
        raise InputError("--latest cannot be used with --all-ranks-html")
    return all_ranks or (not latest and classify(path).multi_rank)


def _quiet(_: str) -> None:
    pass


def _no_rank(_: int) -> None:
    pass


def parse(
    path: Path,
    out: Path,
    options: ParseOptions | None = None,
    *,
    overwrite: bool = False,
    latest: bool = False,
    all_ranks: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    command: Sequence[str] = (),
    track: Tracker = untracked,
    echo: Callable[[str], None] = _quiet,
    report: bool = True,
    on_rank: Callable[[int], None] | None = None,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
) -> Parsed:
    """Parse PATH (a log, a .gz log, a folder, a job's rank logs or a muxed log) into OUT.

    Raises InputError / OutputError (before anything is written) when PATH or OUT is unusable,
    StrictFailure when `options.strict` finds a problem (in a multi-rank run: in any rank,
    the first one named), OSError for an OS error of the input. Otherwise a multi-rank run does
    not raise for a rank that fails: its summary says so and the landing page lists it.
    `command` is recorded in manifest.json; `track` wraps a single log's record stream (a
    progress bar); `echo` gets a multi-rank run's lines of text for a person, `on_rank` each rank's
    number as its parse finishes (a job's progress, counted per rank: what `serve` shows), `on_ranks`
    the job's ranks once, before any is parsed (how many there are to count). Without `report`, a single
    log's OUT holds the format and the answers only (what `tlscope.load`, `summary` and `diff`
    read), not the HTML report; a job's OUT its ranks' format and answers only, with no landing page.
    """
    options = options or ParseOptions()
    if wants_multi_rank(path, all_ranks=all_ranks, latest=latest):
        return parse_job(
            path,
            out,
            options,
            overwrite=overwrite,
            jobs=jobs,
            scheduler=scheduler,
            echo=echo,
            on_rank=on_rank,
            on_ranks=on_ranks,
            landing=report,
        )
    return parse_log(
        path, out, options, overwrite=overwrite, latest=latest, command=command, track=track, report=report
    )


def parse_log(
    path: Path,
    out: Path,
    options: ParseOptions,
    *,
    overwrite: bool = False,
    latest: bool = False,
    command: Sequence[str] = (),
    track: Tracker = untracked,
    report: bool = True,
) -> Parsed:
    """`parse` of one log (PATH a log file, or a folder holding one log or, with `latest`, several)."""
    log = resolve_input(path, latest=latest)
    target = OutputDir(out, overwrite=overwrite)
    target.check()
    sinks: SinkFactory | None = None
    if report:
        from tlscope.write.report.assembly import report_sinks

        sinks = report_sinks
    told: list[Answers] = []
    manifest = run(log, target, options, command=command, track=track, sinks=sinks, told=told.append)
    if not told:
        return Parsed(out=str(out), multi_rank=False, manifests=[manifest])
    found = told[0]
    return Parsed(
        out=str(out),
        multi_rank=False,
        manifests=[manifest],
        statuses=found.statuses,
        recompiles=found.recompiles,
        headline=found.headline,
        exports=found.exports,
        exports_note=found.exports_note,
        aot_inductor=found.aot_inductor,
        vllm=found.vllm,
    )


def answer_log(
    path: Path,
    options: ParseOptions | None = None,
    *,
    latest: bool = False,
    command: Sequence[str] = (),
    track: Tracker = untracked,
) -> tuple[Answers, Manifest] | None:
    """PATH's answers and manifest, computed in memory (pipeline/single.py's `answer`), when PATH
    is one log (a log file, or a folder holding one log or, with `latest`, several); None when
    `parse` would parse it as a job's ranks. Raises what `parse_log` raises, before writing nothing.
    """
    options = options or ParseOptions()
    if wants_multi_rank(path, all_ranks=False, latest=latest):
        return None
    return answer(resolve_input(path, latest=latest), options, command=command, track=track)


def parse_job(
    path: Path,
    out: Path,
    options: ParseOptions,
    *,
    overwrite: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    echo: Callable[[str], None] = _quiet,
    on_rank: Callable[[int], None] | None = None,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
    landing: bool = True,
) -> Parsed:
    """`parse` of a job's ranks (PATH a folder of rank logs, or one muxed log); without `landing`,
    the ranks' format and answers only (pipeline/ranks.py's `parse_ranks`)."""
    from tlscope.pipeline.ranks import parse_ranks

    strict = options.strict or options.strict_compile_id
    summaries = parse_ranks(
        path,
        out,
        options,
        overwrite=overwrite,
        jobs=jobs,
        scheduler=scheduler,
        echo=echo,
        strict_job=strict,
        on_rank=on_rank or _no_rank,
        on_ranks=on_ranks,
        landing=landing,
    )
    manifests = RankManifests(out, [s.rank for s in summaries if s.parsed])
    return Parsed(out=str(out), multi_rank=True, manifests=manifests, ranks=summaries)


class RankManifests(Sequence[Manifest]):
    """The manifest of each rank that parsed, read from its rank_N/manifest.json when asked:
    the parse's process holds none of them, so its memory does not grow with the ranks'.

    The ranks are the parse's own, so a rank's folder is opened directly: asked through
    `OutputFolder.rank`, each manifest read decoded the job's multi_rank_summary.json to check
    the rank (2.8 MB at 1,000 ranks: ~17 MB of objects each time, and O(ranks²) CPU after the
    landing page when the command went through every rank's manifest).
    """

    def __init__(self, out: Path, ranks: list[int]) -> None:
        self._out = out
        self._ranks = ranks

    def _manifest(self, rank: int) -> Manifest:
        return OutputFolder(self._out / layout.rank_dir(rank)).manifest()

    def __len__(self) -> int:
        return len(self._ranks)

    @overload
    def __getitem__(self, index: int) -> Manifest: ...
    @overload
    def __getitem__(self, index: slice) -> list[Manifest]: ...
    def __getitem__(self, index: int | slice) -> Manifest | list[Manifest]:
        if isinstance(index, slice):
            return [self._manifest(r) for r in self._ranks[index]]
        return self._manifest(self._ranks[index])
