"""Ranks first: a line per rank and how the ranks' compiles diverge, said in one sentence per group.

Beside the compile ids, the collectives: a compile id every rank has can still differ in the
collectives its graph calls. A collective whose tensor shape, dtype or arguments differ between
ranks fails or hangs when it runs (the classic rank desync), so each compile id whose Dynamo
graphs call different collectives on different ranks is a `CollectiveMismatch`, said in a sentence.

Both are folded from each rank's compiles.json entries (the same analysis as `tlscope summary`),
so the job's `ranks.json`, `tlscope summary DIR` and its `--json` say the same. `rank_overview`
runs where a rank is parsed (its result is small and picklable: it travels in `RankSummary`);
`job_view` compares the overviews.
"""

from __future__ import annotations

import functools
import shlex
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import msgspec

from tlscope.analyse.ranks.cache_divergence import CacheFold, CacheMismatch, cache_keys, cache_text
from tlscope.analyse.ranks.frames import FrameFold, FrameShift, Numbering, alignment_keys, column_key, frame_of
from tlscope.analyse.ranks.graph_divergence import (
    CODE,
    GRAPH_DIFF,
    GraphFold,
    GraphMismatch,
    GraphPrint,
    PayloadText,
    compile_label,
    dynamic_inputs,
    function_label,
)
from tlscope.analyse.ranks.job_answers import AnswersFold, JobAnswers, read_job_answers
from tlscope.analyse.ranks.settings_divergence import (
    CompileSettingsFold,
    RankConfigs,
    RankSettingsFold,
    SettingsMismatch,
    settings_changes,
)
from tlscope.analyse.ranks.stragglers import Stragglers, find_stragglers
from tlscope.analyse.ranks.words import NAMED
from tlscope.analyse.ranks.words import count as _count
from tlscope.analyse.ranks.words import ids as _ids
from tlscope.analyse.ranks.words import who as _who
from tlscope.format.compiles import (
    Collective,
    CompileEntry,
    Dynamic,
    FirstAnswer,
    PayloadRef,
    Settings,
)
from tlscope.format.json_boundary import decode
from tlscope.format.layout import is_payload_name

#: Events logged outside any compilation; not a compilation, so never a divergence.
OUTSIDE = "[-/-]"
#: A schedule mismatch's words: the Dynamo graphs' collectives agreed (or were not logged).
SCHEDULED = "Inductor scheduled different collectives on different ranks"
#: How many recompiles a sentence explains.
REASONS = 2
#: Collectives whose tensors must be alike on every rank (one shape and dtype): each rank's input
#: meets the others'. The rest (`all_to_all_single`: split sizes of each rank's own) are compared
#: by their name and process group only.
ALIKE = frozenset(
    {
        "all_reduce",
        "all_reduce_",
        "all_reduce_coalesced",
        "all_reduce_coalesced_",
        "all_gather_into_tensor",
        "all_gather_into_tensor_out",
        "all_gather_into_tensor_coalesced",
        "reduce_scatter_tensor",
        "reduce_scatter_tensor_coalesced",
        "broadcast",
        "broadcast_",
    }
)


T = TypeVar("T")


class RankLine(msgspec.Struct, kw_only=True):
    """One rank at a glance, from its compiles.json."""

    rank: int
    #: Forward `compilation_metrics` records (every compile PyTorch measured; `metrics_records`).
    compiles: int = 0
    #: The sum of those records' `time_s`, seconds.
    compile_time_s: float = 0.0
    #: `dynamo_graph_break_reason` artifacts (each graph break logged).
    graph_breaks: int = 0
    #: Entries explaining a recompile (`recompile` set).
    recompiles: int = 0
    #: Metrics records (any kind) with status `failed`.
    failures: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class RankOverview(msgspec.Struct, kw_only=True):
    """What the divergence needs of one rank: its line, its compile ids, why each recompiled."""

    line: RankLine
    #: Compile ids in compiles.json order, `[-/-]` left out.
    compile_ids: list[str] = []
    #: Compile id -> status (compiles.json's vocabulary).
    statuses: dict[str, str] = {}
    #: Compile id -> why it recompiled, in plain words (the first guard failure's explanation).
    recompiles: dict[str, str] = {}
    #: Compile id -> the collectives its Dynamo graphs call, as compared (`collective_text`), one
    #: per line; only ids that call one.
    collectives: dict[str, str] = {}
    #: Compile id -> its Dynamo graphs' structure (analyse/ranks/graph_divergence.py); only ids
    #: with a Dynamo graph whose structure was read.
    graphs: dict[str, GraphPrint] = {}
    #: Compile id -> the collectives Inductor scheduled for it (`inductor_collective_schedule`, as
    #: `scheduled_text` says them), one per line; only ids whose schedule the rank logged.
    schedules: dict[str, str] = {}
    #: `function\nplaceholder` -> how the rank made that graph input dynamic on its own
    #: (`dynamic_inputs`): why a rank's graph has a symbol where another's has a size.
    dynamic: dict[str, str] = {}
    #: The configs of its first metrics record (`settings_digest`); null when it logged none.
    settings: str | None = None
    #: Dynamo frame number -> its compiled function (`function_label`): how the ranks' comparison
    #: aligns one rank's compile ids with another's by function (analyse/ranks/frames.py).
    frames: dict[int, str] = {}
    #: Compile id -> its cache lookups (`cache_text`), for the ids that looked a cache up. Since 1.36.
    caches: dict[str, str] = {}
    #: Compile id -> its cache keys (`cache_keys`), for the ids whose lookups logged one.
    cache_keys: dict[str, str] = {}
    #: Compile id -> how it ran under other settings than the rank's first compile
    #: (`settings_changes`), for the ids that did. Since 1.38.
    changed_settings: dict[str, str] = {}
    #: The rank's first answers (its compiles.json `first_answers`). Since 1.42.
    first_answers: list[FirstAnswer] = []


class PartialId(msgspec.Struct, kw_only=True):
    """A compile id that not every rank has, and the ranks that have it. When ranks number
    functions differently (`Divergence.frames`), a function not every rank compiled, under its
    column of the matrix (`Numbering.columns`, since 1.33)."""

    id: str
    ranks: list[int]


class RankGroup(msgspec.Struct, kw_only=True):
    """Ranks whose compile id sequences are identical."""

    ranks: list[int]
    #: Ids this group has and no rank outside it has.
    only_here: list[str] = []
    #: Ids some rank outside the group has and this group lacks.
    missing: list[str] = []
    #: The group's divergence in one sentence, e.g. `rank 3: 1 compile no other rank has ([7/0])`.
    sentence: str


class CollectiveGroup(msgspec.Struct, kw_only=True):
    """Ranks whose graphs of one compile id call the same collectives."""

    ranks: list[int]
    #: The collectives, in order, as compared (`collective_text`); empty when the ranks call none.
    collectives: list[str] = []


class CollectiveMismatch(msgspec.Struct, kw_only=True):
    """A compile id whose Dynamo graphs call different collectives on different ranks, or (kind
    `schedule`) whose Inductor schedules run different ones."""

    id: str
    #: The ranks grouped by the collectives they call, the largest group first.
    groups: list[CollectiveGroup]
    #: Where the groups first differ (0-based index in their collectives).
    at: int
    #: The mismatch in one sentence, e.g. `[0/0]: ranks call different collectives: collective 1 is
    #: all_reduce f32[8, 16] 'sum' '0' on rank 0, all_reduce f32[9, 16] 'sum' '0' on rank 1; …`.
    sentence: str
    #: What differs: `graph`, the collectives the Dynamo graphs call; `schedule` (since 1.34), the
    #: Dynamo graphs agree (or none was compared) but Inductor's schedules (what the compiled code
    #: runs, in that order) differ, compared among the ranks that logged one.
    kind: str = "graph"


class MatrixRowGroup(msgspec.Struct, kw_only=True):
    """A row of the job's rank x compile-id matrix: ranks with identical compile id sequences
    whose graphs also call the same collectives."""

    ranks: list[int]
    #: The compile ids where these ranks call other collectives than the most ranks that have the
    #: id (`collectives[].groups[0]`, the lower ranks on a tie), in compile order; empty for the rest.
    collectives: list[str] = []
    #: The row in one sentence: its group's (`groups[]`), with its ranks, and where its collectives differ.
    sentence: str
    #: Own compile id -> the matrix column it is drawn in, for the ids these ranks number otherwise
    #: than the reference ranks (`Numbering.columns`); absent for the rest. Since 1.33.
    columns: dict[str, str] | msgspec.UnsetType = msgspec.UNSET


class SaidList(msgspec.Struct, kw_only=True):
    """One list of the divergence as every view says it: which, and its title."""

    #: `groups`, `frames`, `collectives`, `settings`, `graphs` or `caches`: the list of `divergence`.
    list: str
    #: Its title, e.g. `Collectives differ between ranks`.
    title: str


#: The order every view says a divergence's lists in, with their titles: the compile-id groups
#: (the job's shape) and the functions some ranks compiled alone (what explains them), then the
#: collectives (they fail or hang a job), the settings (a cause), the graphs and output code (its
#: effect), the caches (why a rank compiled longer).
SAID = (
    ("groups", "Ranks diverge"),
    ("frames", "Ranks compiled other functions"),
    ("collectives", "Collectives differ between ranks"),
    ("settings", "Settings differ between ranks"),
    ("graphs", "Graphs differ between ranks"),
    ("caches", "Caches answered differently on different ranks"),
)


class Divergence(msgspec.Struct, kw_only=True):
    """How the ranks' compiles differ; `diverges` false when every rank compiled the same ids."""

    diverges: bool
    #: Ranks grouped by identical compile id sequences: groups with compile ids of their own first,
    #: then by lowest rank.
    groups: list[RankGroup] = []
    #: Compile ids not present on every rank, in compile order.
    not_on_every_rank: list[PartialId] = []
    #: Compile ids whose graphs call different collectives on different ranks, in compile order
    #: (whether or not `diverges`: the ranks may compile the same ids and still desync).
    collectives: list[CollectiveMismatch] = []
    #: The matrix's rows: `groups` (one group of every rank when none diverges) split where the
    #: ranks' collectives differ, in the groups' order, a group's rows whose collectives differ
    #: first. Since 1.18.
    rows: list[MatrixRowGroup] = []
    #: Compile ids whose Dynamo graphs differ between ranks, in compile order (whether or not
    #: `diverges`). Since 1.30.
    graphs: list[GraphMismatch] = []
    #: The groups of ranks whose first compile ran under other settings than the most ranks'
    #: first compile did. Since 1.30.
    settings: list[SettingsMismatch] = []
    #: The groups of ranks that compiled other functions than the most ranks did, or the same
    #: ones under other compile ids (analyse/ranks/frames.py). Since 1.31.
    frames: list[FrameShift] = []
    #: The compiles whose cache lookups answered differently on different ranks, in compile
    #: order (analyse/ranks/cache_divergence.py). Since 1.36.
    caches: list[CacheMismatch] = []
    #: The lists above that say something, in the order and with the titles every view says them
    #: (`SAID`: the groups only when `diverges`). Since 1.40.
    said: list[SaidList] = []


def said_lists(divergence: Divergence) -> list[SaidList]:
    """The divergence's lists that say something, in `SAID`'s order: ranks.json's `said`, and
    what every text view iterates (an older ranks.json, without `said`, is read as this)."""
    return [
        SaidList(list=name, title=title)
        for name, title in SAID
        if getattr(divergence, name) and (name != "groups" or divergence.diverges)
    ]


def said_of(divergence: Divergence) -> list[SaidList]:
    """The lists a view says, in order: the divergence's `said` as folded or read (ranks.json's,
    `read_ranks_file` keeping the items that name a list with items); `said_lists` for one built
    without it."""
    return divergence.said or said_lists(divergence)


def said_sentences(divergence: Divergence, job: str | None = None) -> list[tuple[SaidList, list[str]]]:
    """Each list `said_of` names, with its sentences as a text view prints them; `job`, the
    folder the user named, which the graphs' and caches' `tlscope diff JOB --ranks A B` names (a
    command to paste)."""
    return [
        (said, [with_job(item.sentence, job) for item in getattr(divergence, said.list)])
        for said in said_of(divergence)
    ]


def with_job(sentence: str, job: str | None) -> str:
    """A graph sentence with its `tlscope diff JOB --ranks A B` naming `job`, the folder the user
    named, quoted for a shell; as written without one."""
    return sentence if job is None else sentence.replace(GRAPH_DIFF, f"tlscope diff {shlex.quote(job)} --ranks ")


def scheduled_text(entry: CompileEntry) -> str:
    """A compile's Inductor collective schedules (compiles.json's `collective_schedules`, in log
    order) as the ranks' comparison sees them: each collective's op, in order, one per line
    (`all_gather_into_tensor`); the waits left out (a rank waits for its own collectives: where it
    waits cannot make another rank hang). "" when it logged none."""
    ops = (op for ops in entry.collective_schedules or [] for op in ops)
    short = (op.removeprefix("torch.ops.").removeprefix("_c10d_functional.").removesuffix(".default") for op in ops)
    return "\n".join(op for op in short if op != "wait_tensor")


def forward_time_s(entry: CompileEntry) -> float:
    """A compile's time as ranks.json counts it: its forward `compilation_metrics` records' `time_s`."""
    return sum(r.time_s or 0.0 for r in entry.metrics_records if r.kind == "compilation_metrics")


def frame_functions(entries: Iterable[CompileEntry]) -> dict[int, str]:
    """Dynamo frame number -> its compiled function (`function_label` of the frame's first compile):
    how the ranks' comparisons align one rank's compile ids with another's (analyse/ranks/frames.py)."""
    found: dict[int, str] = {}
    for entry in entries:
        frame = frame_of(entry.id)
        if frame is not None and frame not in found:
            found[frame] = compile_label(entry)
    return found


def collective_text(c: Collective) -> str:
    """A collective as the ranks' comparison sees it: name, tensor dtype and sizes (not strides nor
    device: every rank has its own device) and literal arguments, e.g. `all_reduce f32[4] 'sum' '0'`;
    for one whose tensors may differ by rank (`ALIKE`), its name and string arguments only."""
    if c.op not in ALIKE:
        return " ".join([c.op, *(a for a in c.args if a.startswith("'"))])
    # Here, not at the top: a rank's parse has the graph reader loaded already, and a job's summary
    # read from its ranks.json never comes here.
    from tlscope.analyse.fold.graphs import dtype_and_sizes

    return " ".join([c.op, dtype_and_sizes(c.tensor) or c.tensor or "?", *c.args])


class JobView(msgspec.Struct, kw_only=True):
    """`ranks.json` (FORMAT.md) and `tlscope summary DIR --json`'s `ranks` and `divergence`."""

    ranks: list[RankLine]
    divergence: Divergence
    #: The ranks markedly slower to compile than the median rank (analyse/ranks/stragglers.py).
    stragglers: Stragglers | None = None
    #: The ranks' first answers, each line once with the ranks that say it (analyse/ranks/
    #: job_answers.py); null in a ranks.json written before 1.42. Since 1.42.
    first_answers: JobAnswers | None = None


class RanksFile(JobView, kw_only=True):
    """Top-level object of ranks.json: the job view under the format's header (the landing
    writer's `ranks_json` writes it so); what docs/schema/ranks.schema.json describes."""

    format: str = "tlscope"
    format_version: int
    format_minor: int


def read_ranks_file(data: bytes) -> RanksFile:
    """ranks.json's bytes as its typed object: the one Python reader of the file (`Trace.job_view`,
    `tlscope JOB`'s closing lines; the JS client's `readRanks` answers the same conformance
    cases). A job's folder may be someone else's: decoded through the JSON boundary's checks, a
    field of the wrong shape a JsonError (format/json_boundary.py)."""
    found: RanksFile = decode(data, _ranks_decoder())
    # `said` as written where it names lists that say something; else (written before 1.40, or
    # by another writer) the lists in the order every view says them. As the JS client's `saidOf`.
    saying = said_lists(found.divergence)
    names = {said.list for said in saying}
    found.divergence.said = [said for said in found.divergence.said if said.list in names] or saying
    if found.first_answers is not None:
        found.first_answers = read_job_answers(found.first_answers)
    return found


@functools.cache
def _ranks_decoder() -> msgspec.json.Decoder[RanksFile]:
    return msgspec.json.Decoder(RanksFile)


def rank_overview(
    rank: int,
    entries: Sequence[CompileEntry],
    digest_of: Callable[[str], str | None] | None = None,
    settings: str | None = None,
    dynamic: Dynamic | None = None,
    changed: Settings | None = None,
    first_answers: Sequence[FirstAnswer] = (),
) -> RankOverview:
    """One rank's line and compile ids from its compiles.json entries; `digest_of` gives a Dynamo
    graph's structure from its payload (`payloads/<md5>.txt`), when the graphs are compared;
    `settings` its first configs' digest (`settings_digest`; "" or None: not compared),
    `dynamic` its compiles.json's answer, which inputs the rank made dynamic on its own, and
    `changed` its compiles.json's `settings`, the compiles run under other settings than its first;
    `first_answers` its compiles.json's."""
    line = RankLine(rank=rank)
    frames = frame_functions(entries)  # `[-/-]`, the outside entry, is no frame
    overview = RankOverview(
        line=line,
        settings=settings or None,
        dynamic=dynamic_inputs(dynamic),
        frames=frames,
        changed_settings=settings_changes(changed),
        first_answers=list(first_answers),
    )
    for entry in entries:
        if entry.status == "outside":
            continue
        overview.compile_ids.append(entry.id)
        overview.statuses[entry.id] = entry.status
        line.compiles += sum(r.kind == "compilation_metrics" for r in entry.metrics_records)
        line.compile_time_s += forward_time_s(entry)
        line.failures += sum(r.status == "failed" for r in entry.metrics_records)
        line.graph_breaks += len(entry.graph_breaks)
        line.cache_hits += sum(c.outcome == "hit" for c in entry.cache)
        line.cache_misses += sum(c.outcome == "miss" for c in entry.cache)
        calls = [collective_text(c) for g in entry.graphs if g.kind == "dynamo_output_graph" for c in g.collectives]
        if calls:
            overview.collectives[entry.id] = "\n".join(calls)
        if entry.collective_schedules:
            overview.schedules[entry.id] = scheduled_text(entry)
        if entry.cache:
            overview.caches[entry.id] = cache_text(entry)
            keys = cache_keys(entry)
            if keys:
                overview.cache_keys[entry.id] = keys
        found = _graph_print(entry, digest_of) if digest_of is not None else None
        if found is not None:
            overview.graphs[entry.id] = found
        if entry.recompile is not None:
            line.recompiles += 1
            overview.recompiles[entry.id] = entry.recompile.explanation() or "no reason logged"
    line.compile_time_s = round(line.compile_time_s, 6)
    return overview


def _graph_print(entry: CompileEntry, digest_of: Callable[[str], str | None]) -> GraphPrint | None:
    """The entry's Dynamo graphs (and Inductor's post-grad graphs and output code) as compared
    between ranks; None without a Dynamo graph, or one unread."""
    found = _digests(entry.graphs, "dynamo_output_graph", digest_of)
    if found is None:
        return None
    post = _digests(entry.graphs, "inductor_post_grad_graph", digest_of)
    code = _payloads(entry.code, CODE)
    return GraphPrint(
        function=function_label(entry.function),  # as dynamic_inputs keys it (DynamicSource.function)
        digest=found[0],
        payload=found[1][-1],
        post_grad=post[0] if post is not None else "",
        post_grad_payload=post[1][-1] if post is not None else None,
        code_payloads=" ".join(code) if code is not None else "",
    )


def _digests(
    refs: Sequence[PayloadRef], kind: str, digest_of: Callable[[str], str | None]
) -> tuple[str, list[str]] | None:
    """The structure of the entry's graphs of `kind` (`refs`: its graphs), joined, and their
    payloads; None without one, or one unread."""
    names = _payloads(refs, kind)
    if names is None:
        return None
    digests = [digest_of(p) for p in names]
    if None in digests:
        return None
    return "+".join(d for d in digests if d), names


def _payloads(refs: Sequence[PayloadRef], kind: str) -> list[str] | None:
    """The payloads of `refs` of `kind`, in order; None without one, or one not a payload name."""
    payloads = [g.payload_filename for g in refs if g.kind == kind]
    # Only `payloads/<md5>.txt` names: a compiles.json read back is untrusted, and the name is a link.
    names = [p for p in payloads if p is not None and is_payload_name(p)]
    return names if names and len(names) == len(payloads) else None


def job_view(
    overviews: Iterable[RankOverview], read: PayloadText | None = None, configs: RankConfigs | None = None
) -> JobView:
    """The ranks' lines and their divergence (ranks ascending), whatever order `overviews` come in.

    Folded as they come (`_Fold`): a job's overviews are decoded one at a time, and only each
    rank's line and what the divergence needs of it are kept. `read` gives the job's payloads,
    to say where ranks' graphs differ (without it, only which ranks); `configs` each rank's
    first configs, to say which settings differ.
    """
    fold = _Fold()
    for overview in overviews:
        fold.add(overview)
    lines = sorted(fold.lines, key=lambda line: line.rank)
    slow = find_stragglers([(line.rank, line.compile_time_s) for line in lines])
    found = fold.divergence(read, configs)
    return JobView(ranks=lines, divergence=found, stragglers=slow, first_answers=fold.answers.result())


def divergence(
    overviews: Iterable[RankOverview], read: PayloadText | None = None, configs: RankConfigs | None = None
) -> Divergence:
    fold = _Fold()
    for overview in overviews:
        fold.add(overview)
    return fold.divergence(read, configs)


class _Fold:
    """What the divergence needs of every rank, kept a rank at a time.

    The result is what walking the ranks in ascending order gives: a compile id's place in
    `order` is where that walk first meets it (the lowest (rank, position) it is at), and a
    group speaks with its lowest rank's reasons.
    """

    def __init__(self) -> None:
        self.lines: list[RankLine] = []
        #: Compile id -> the ranks that have it.
        self.having: dict[str, array[int]] = {}
        #: Compile id -> the lowest (rank, position in that rank's ids) it is at.
        self.first: dict[str, tuple[int, int]] = {}
        #: A compile id sequence -> the lowest rank's overview with it, and every rank with it.
        self.keyed: dict[tuple[str, ...], tuple[RankOverview, array[int]]] = {}
        #: A compile id's name by function (`alignment_keys`) -> its collectives (one text per
        #: rank, shared) -> the ranks calling them; and each name's ids on each rank.
        self.calls: dict[str, dict[str, array[int]]] = {}
        #: The same of Inductor's collective schedules.
        self.scheduled: dict[str, dict[str, array[int]]] = {}
        self.numbering = Numbering()
        self.graphs = GraphFold()
        self.settings = RankSettingsFold()
        self.frames = FrameFold()
        self.caches = CacheFold()
        self.compile_settings = CompileSettingsFold()
        self.answers = AnswersFold()
        #: (compile ids, frames) -> the ids' names by function (`alignment_keys`).
        self.names: dict[tuple[tuple[str, ...], tuple[tuple[int, str], ...]], dict[str, str]] = {}

    def add(self, overview: RankOverview) -> None:
        rank = overview.line.rank
        self.lines.append(overview.line)
        for at, cid in enumerate(overview.compile_ids):
            self.having.setdefault(cid, array("q")).append(rank)
            if cid not in self.first or (rank, at) < self.first[cid]:
                self.first[cid] = (rank, at)
        # Most ranks share their ids and frames with many others: named once per distinct pair.
        key = tuple(overview.compile_ids)
        frames = self.frames.add(rank, overview.frames)
        names = self.names.get((key, frames))
        if names is None:
            names = self.names[(key, frames)] = alignment_keys(key, overview.frames)
        self.numbering.add(rank, (key, frames), names)
        for cid, calls in overview.collectives.items():
            self.calls.setdefault(names.get(cid, cid), {}).setdefault(calls, array("q")).append(rank)
        for cid, calls in overview.schedules.items():
            self.scheduled.setdefault(names.get(cid, cid), {}).setdefault(calls, array("q")).append(rank)
        self.graphs.add(rank, overview.graphs, overview.dynamic, names)
        self.settings.add(rank, overview.settings)
        self.caches.add(rank, overview.caches, overview.cache_keys, names)
        self.compile_settings.add(rank, overview.changed_settings, names)
        self.answers.add(rank, overview.first_answers)
        known = self.keyed.get(key)
        if known is None:
            self.keyed[key] = (overview, array("q", [rank]))
            return
        known[1].append(rank)
        if rank < known[0].line.rank:
            self.keyed[key] = (overview, known[1])

    def divergence(self, read: PayloadText | None = None, configs: RankConfigs | None = None) -> Divergence:
        count = len(self.lines)
        having = {cid: sorted(ranks) for cid, ranks in self.having.items()}
        order = sorted(self.first, key=self.first.__getitem__)
        at = {cid: n for n, cid in enumerate(order)}
        shifts = self.frames.shifts()
        # Ranks that number functions otherwise: the matrix's columns, and what is not on every
        # rank, are by function (a rank's [3/0] is the others' [2/0]).
        columns = self.numbering.columns(frozenset(shifts[0].than)) if shifts else None
        if columns is None:
            partial = [PartialId(id=cid, ranks=having[cid]) for cid in order if len(having[cid]) < count]
        else:
            partial = self._partial(columns, count)
        renamed = self._renamed(columns) if columns else {}
        calls = self._collective_mismatches(at)
        found = Divergence(
            diverges=len(self.keyed) > 1,
            not_on_every_rank=partial,
            collectives=calls,
            graphs=self.graphs.mismatches(at, read, self.numbering),
            settings=self.settings.mismatches(configs) + self._compile_settings(at),
            frames=shifts,
            caches=self._cache_mismatches(at),
        )
        if not found.diverges:
            every = sorted(r for _, ranks in self.keyed.values() for r in ranks)
            found.rows = _rows([(every, None)], calls, renamed)
            found.said = said_lists(found)
            return found
        if shifts:
            groups = [self._named_group(first, sorted(ranks), at) for first, ranks in self.keyed.values()]
        else:
            groups = [_group(first, sorted(ranks), having, order) for first, ranks in self.keyed.values()]
        # The groups with compiles of their own first (what the reader is looking for), then the rest.
        groups.sort(key=lambda g: (not g.only_here, g.ranks[0]))
        found.groups = groups
        found.rows = _rows([(g.ranks, g) for g in groups], calls, renamed)
        found.said = said_lists(found)
        return found

    def _partial(self, columns: dict[str, str], count: int) -> list[PartialId]:
        """The functions (names by `alignment_keys`) not every rank compiled, under their matrix
        columns, in their columns' order (`column_key`)."""
        numbering = self.numbering
        names = [name for name in numbering.ids if len(numbering.having(name)) < count]
        names.sort(key=lambda name: column_key(columns[name]))
        return [PartialId(id=columns[name], ranks=sorted(numbering.having(name))) for name in names]

    def _renamed(self, columns: dict[str, str]) -> dict[int, dict[str, str]]:
        """Rank -> its compile ids drawn under another column (own id -> column), for the ranks
        with any; one dict shared by the ranks of one naming."""
        found: dict[int, dict[str, str]] = {}
        for names, ranks in self.numbering.namings():
            moved = {cid: columns[name] for cid, name in names.items() if columns[name] != cid}
            if moved:
                found.update(dict.fromkeys(ranks, moved))
        return found

    def _named_group(self, first: RankOverview, ranks: list[int], at: dict[str, int]) -> RankGroup:
        """`_group` by function (`alignment_keys`), for a job whose ranks number some functions
        differently: `only_here` the group's own ids of the functions no rank outside compiled,
        `missing` the lowest other rank's ids of the functions the group did not compile."""
        members = set(ranks)
        mine = alignment_keys(first.compile_ids, first.frames)
        only = [cid for cid, name in mine.items() if self.numbering.having(name) <= members]
        names = set(mine.values())
        firsts = {n: self.numbering.first(n) for n in self.numbering.ids if n not in names}
        lacking = sorted(firsts, key=lambda n: at[firsts[n][1]])
        missing = [firsts[n][1] for n in lacking]
        said_only = [_named(cid, mine[cid]) for cid in only]
        said_missing = [f"{_named(cid, n)} on rank {rank}" for n in lacking for rank, cid in [firsts[n]]]
        why = {cid: first.recompiles[cid] for cid in only if cid in first.recompiles}
        sentence = _sentence(ranks, said_only, said_missing, why)
        return RankGroup(ranks=ranks, only_here=only, missing=missing, sentence=sentence)

    def _collective_mismatches(self, at: dict[str, int]) -> list[CollectiveMismatch]:
        """The compile ids whose Dynamo graphs' collectives differ between ranks, and those whose
        Inductor schedules do where the Dynamo graphs' did not, in compile order."""
        found = [m for m in map(self._mismatch, self.calls) if m is not None]
        said = {name for name, _ in found}
        found += [m for name in self.scheduled if name not in said if (m := self._mismatch(name, "schedule"))]
        found.sort(key=lambda m: at[self.numbering.first(m[0])[1]])
        return [mismatch for _, mismatch in found]

    def _cache_mismatches(self, at: dict[str, int]) -> list[CacheMismatch]:
        """The compiles whose cache lookups differ between ranks, in compile order."""
        return self._in_order(self.caches.mismatches(self._said_name), at)

    def _compile_settings(self, at: dict[str, int]) -> list[SettingsMismatch]:
        """The compiles run under other settings on some of the ranks whose first compiles agree,
        in compile order."""
        found = self.compile_settings.mismatches(self.settings.reference(), self.numbering.having, self._said_name)
        return self._in_order(found, at)

    def _said_name(self, name: str) -> tuple[str, str]:
        """A compile's name by function as its compile id (the most ranks') and as a sentence says
        it: `[4/0] forward (train.py:40)`, with the other ranks' ids where they number it otherwise."""
        cid = self.numbering.usual(name)
        return cid, _named(cid, name) + self.numbering.others(name)

    def _in_order(self, found: list[tuple[str, T]], at: dict[str, int]) -> list[T]:
        """(name, mismatch) pairs' mismatches in compile order (a stable sort: a compile's own order kept)."""
        found.sort(key=lambda m: at[self.numbering.first(m[0])[1]])
        return [mismatch for _, mismatch in found]

    def _mismatch(self, name: str, kind: str = "graph") -> tuple[str, CollectiveMismatch] | None:
        """The ranks of a compile id (named by function: `alignment_keys`) grouped by their
        collectives (for a Dynamo graph's, a rank that has the id and calls none is a group too;
        a schedule is compared among the ranks that logged one: a cache hit logs none), or None
        when every rank compared calls the same. Said under the compile id the most ranks give it."""
        source = self.calls if kind == "graph" else self.scheduled
        by_calls = {calls: sorted(ranks) for calls, ranks in source[name].items()}
        calling = {rank for ranks in by_calls.values() for rank in ranks}
        silent = sorted(rank for rank in self.numbering.having(name) if rank not in calling)
        if silent and kind == "graph":
            by_calls[""] = silent
        if len(by_calls) <= 1:
            return None
        groups = [
            CollectiveGroup(ranks=ranks, collectives=calls.split("\n") if calls else [])
            for calls, ranks in by_calls.items()
        ]
        groups.sort(key=lambda g: (-len(g.ranks), g.ranks[0]))
        at = _first_difference([g.collectives for g in groups])
        cid = self.numbering.usual(name)
        sentence = _collective_sentence(cid + self.numbering.others(name), groups, at, kind)
        return name, CollectiveMismatch(id=cid, groups=groups, at=at, sentence=sentence, kind=kind)


def _rows(
    groups: list[tuple[list[int], RankGroup | None]],
    calls: list[CollectiveMismatch],
    renamed: dict[int, dict[str, str]],
) -> list[MatrixRowGroup]:
    """Each group's ranks split by the collective groups they are in at each mismatching id
    (`calls`), and by the columns their ids are drawn in (`renamed`): ranks of one row are in the
    same collective group at every one of them and draw each id in the same column. A group of
    None is every rank, when none diverges."""
    member: list[dict[int, int]] = [
        {rank: at for at, group in enumerate(m.groups) for rank in group.ranks} for m in calls
    ]
    rows: list[MatrixRowGroup] = []
    for ranks, group in groups:
        split: dict[tuple[tuple[int, ...], tuple[tuple[str, str], ...]], list[int]] = {}
        for rank in ranks:
            key = (tuple(where.get(rank, -1) for where in member), tuple(renamed.get(rank, {}).items()))
            split.setdefault(key, []).append(rank)
        mine = [_row(key[0], row, group, calls, dict(key[1])) for key, row in split.items()]
        mine.sort(key=lambda r: (not r.collectives, r.ranks[0]))
        rows.extend(mine)
    return rows


def _row(
    key: tuple[int, ...],
    ranks: list[int],
    group: RankGroup | None,
    calls: list[CollectiveMismatch],
    columns: dict[str, str],
) -> MatrixRowGroup:
    differ = [m for m, at in zip(calls, key, strict=True) if at > 0]
    if group is not None:
        what = group.sentence.split(": ", 1)[-1]
    else:
        what = "the same compile ids" + ("" if calls else " and collectives")
    if len(differ) == 1:
        what += f"; calls other collectives at {differ[0].id} than {_who(differ[0].groups[0].ranks)}"
    elif differ:
        what += f"; calls other collectives than the most ranks at {_ids([m.id for m in differ])}"
    sentence = f"{_who(ranks)}: {what}"
    moved = columns or msgspec.UNSET
    return MatrixRowGroup(ranks=ranks, collectives=[m.id for m in differ], sentence=sentence, columns=moved)


def _group(first: RankOverview, ranks: list[int], having: dict[str, list[int]], order: list[str]) -> RankGroup:
    """The group of `ranks`, whose lowest rank's overview is `first`."""
    mine = set(first.compile_ids)
    members = set(ranks)
    only = [cid for cid in order if cid in mine and set(having[cid]) <= members]
    missing = [cid for cid in order if cid not in mine]
    why = {cid: first.recompiles[cid] for cid in only if cid in first.recompiles}
    return RankGroup(ranks=ranks, only_here=only, missing=missing, sentence=_sentence(ranks, only, missing, why))


def _named(cid: str, name: str) -> str:
    """`[1/0] log_stats (train.py:22)`: a compile id and the function of its name by function
    (`alignment_keys`); the id alone when it is named by its number."""
    return cid if name == cid else f"{cid} {name.rsplit('#', 1)[0]}"


def _sentence(ranks: list[int], only: list[str], missing: list[str], why: dict[str, str]) -> str:
    who = _who(ranks)
    nobody = "no other rank has" if len(ranks) == 1 else "no rank outside them has"
    parts = []
    if only:
        parts.append(f"{_count(len(only), 'compile')} {nobody} ({_ids(only)})")
    if missing:
        verb = "lacks" if len(ranks) == 1 else "lack"
        parts.append(f"{verb} {_count(len(missing), 'compile')} other ranks have ({_ids(missing)})")
    parts.extend(f"recompiled {cid} because {reason}" for cid, reason in list(why.items())[:REASONS])
    if len(why) > REASONS:
        parts.append(f"{_count(len(why) - REASONS, 'more recompile')} of its own")
    return f"{who}: {'; '.join(parts)}" if parts else f"{who}: the same compile ids in another order"


def _first_difference(sequences: list[list[str]]) -> int:
    """The first index where the sequences are not all alike (one running out counts)."""
    at = 0
    while all(at < len(seq) for seq in sequences) and len({seq[at] for seq in sequences}) == 1:
        at += 1
    return at


def _collective_sentence(cid: str, groups: list[CollectiveGroup], at: int, kind: str = "graph") -> str:
    """`[0/0]: ranks call different collectives: collective 1 is all_reduce f32[4] 'sum' '0' on
    rank 0, all_reduce f32[5] 'sum' '0' on rank 1; a collective that differs between ranks
    fails or hangs when it runs`; of a schedule, `[0/0]: Inductor scheduled different collectives
    on different ranks: collective 3 is reduce_scatter_tensor on ranks 0, 2, none on rank 1; …`."""
    said = []
    for group in groups[:NAMED]:
        call = group.collectives[at] if at < len(group.collectives) else "none"
        said.append(f"{call} on {_who(group.ranks)}")
    more = f", … ({len(groups) - NAMED} more groups)" if len(groups) > NAMED else ""
    what = "ranks call different collectives" if kind == "graph" else SCHEDULED
    return (
        f"{cid}: {what}: collective {at + 1} is {', '.join(said)}{more}; "
        f"a collective that differs between ranks fails or hangs when it runs"
    )
