"""What one rank's report says, folded into its RankSummary: pure functions over what the parse
produced (compile-directory entries, artifact bytes, typed compilation metrics).

Two callers feed them: the parse itself (pipeline/rankfacts.py, as the report registers its
outputs: what multi-rank runs use) and tests/rankdir.py (a rank folder already on disk, e.g.
tlparse's, read back). Every input is untrusted: a malformed artifact becomes an entry in
`errors` and the rest of the rank is still summarised (tlparse aborts the whole run instead).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from tlscope.analyse.config_diff import SECTIONS, configs_of
from tlscope.analyse.ranks import parity
from tlscope.analyse.ranks.divergence import rank_overview
from tlscope.analyse.ranks.rank_summary import CompileInfo, GraphOps, GraphRuntime, ParityGraph, RankSummary
from tlscope.analyse.ranks.settings_divergence import settings_digest
from tlscope.format.compiles import CompileEntry, Dynamic, FirstAnswer, Settings
from tlscope.format.json_boundary import JsonError, decode
from tlscope.format.status import status_from_metrics
from tlscope.model.compile_id import CompileId
from tlscope.model.events import CompilationMetrics

#: The per-compile artifacts the cross-rank analyses read, by file-name prefix (tlparse's).
RUNTIME_PREFIX = "inductor_runtime_and_tensor_meta"
SCHEDULE_PREFIX = "inductor_collective_schedule"
CODE_PREFIX = "inductor_output_code"
#: Artifacts bigger than this are not loaded (a summary must stay cheap; reported instead).
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
_CACHE_PRIORITY = {"miss": 3, "hit": 2, "bypass": 1}


class BadArtifact(Exception):
    """One artifact of the rank is malformed; the message says how."""


def decode_artifact(data: bytes) -> Any:
    """An artifact file's JSON; BadArtifact when too big or invalid."""
    if len(data) > MAX_ARTIFACT_BYTES:
        raise BadArtifact(f"{len(data)} bytes, over the {MAX_ARTIFACT_BYTES} byte limit")
    try:
        return decode(data)
    except JsonError as err:
        raise BadArtifact(f"invalid JSON ({err})") from err


def artifacts(entry: Any) -> list[dict[str, Any]]:
    """The artifact objects of one compile_directory.json member."""
    arts = entry.get("artifacts") if isinstance(entry, dict) else None
    return [a for a in arts if isinstance(a, dict)] if isinstance(arts, list) else []


# -- the compile directory ------------------------------------------------------------------


def note_directory(members: Iterable[tuple[str, Any]], summary: RankSummary) -> None:
    """Compile ids, folder -> compile id, cache marks, from compile_directory.json's members
    (display key, {"artifacts": [...]}) in key order."""
    members = list(members)
    summary.compile_ids = sorted(k for k, _ in members if not k.startswith("unknown"))
    numbered: list[tuple[float, str]] = []
    for key, member in members:
        for art in artifacts(member):
            url, name = art.get("url"), art.get("name")
            if isinstance(url, str) and "/" in url and ":" not in url.split("/", 1)[0]:
                summary.dir_to_cid.setdefault(url.split("/", 1)[0], key)
            suffix, number = art.get("suffix"), art.get("number")
            if isinstance(suffix, str) and suffix and isinstance(number, (int, float)):
                numbered.append((number, suffix))
            if isinstance(name, str) and "cache" in name:
                _note_cache(summary.cache_status, key, name)
    numbered.sort(key=lambda item: item[0])
    summary.cache_pattern = "".join(s for _, s in numbered)


def _note_cache(status: dict[str, str], cid: str, name: str) -> None:
    for word, priority in _CACHE_PRIORITY.items():
        if word in name and priority > _CACHE_PRIORITY.get(status.get(cid, ""), 0):
            status[cid] = word


def is_execution_order_name(name: str) -> bool:
    """A graph-execution-order artifact's file name (the newest one is read)."""
    return "graph_execution" in name and name.endswith(".json")


def execution_order(url: str, data: bytes, summary: RankSummary) -> list[str] | None:
    """Compile ids in execution order (`[0/1]` form) from the artifact at `url`; None without one."""
    try:
        value = decode_artifact(data)
    except BadArtifact as err:
        summary.errors.append(f"{url}: {err}")
        return None
    order = value.get("graph_execution_order") if isinstance(value, dict) else None
    if not isinstance(order, list):
        return None  # another artifact whose name matches (e.g. inductor_graph_execution): not an order
    items: list[str] = []
    for item in order:
        cid = item.get("compile_id") if isinstance(item, dict) else item
        if not isinstance(cid, str):
            summary.errors.append(f"{url}: entry without a string compile_id")
            return None
        items.append(f"[{cid}]")
    return items


# -- per compile folder artifacts -------------------------------------------------------------


def note_runtime(graph: str, name: str, data: bytes, summary: RankSummary) -> None:
    """A graph's runtime-estimation / tensor-meta artifact (`name` its file name)."""
    try:
        value = decode_artifact(data)
        ops = _runtime_ops(value)
    except BadArtifact as err:
        summary.errors.append(f"{graph}/{name}: {err}")
        return
    summary.tensor_meta.append((graph, msgspec.json.encode(value, order="sorted").decode()))
    if ops:
        summary.runtimes.append(GraphRuntime(graph, ops))


def _runtime_ops(value: Any) -> list[tuple[str, float]]:
    ops = value.get("ops") if isinstance(value, dict) else None
    if not isinstance(ops, list):
        raise BadArtifact("no `ops` list")
    out: list[tuple[str, float]] = []
    for op in ops:
        name = op.get("name") if isinstance(op, dict) else None
        ns = op.get("estimated_runtime_ns") if isinstance(op, dict) else None
        if not isinstance(name, str) or isinstance(ns, bool) or not isinstance(ns, (int, float)):
            raise BadArtifact("an op lacks a string `name` or a numeric `estimated_runtime_ns`")
        if not math.isfinite(ns):
            raise BadArtifact("an estimated runtime is not finite")
        out.append((name, float(ns)))
    return out


def schedule_of(graph: str, name: str, data: bytes, summary: RankSummary) -> list[str] | None:
    """A graph's collective schedule (op names); None, and an error, when malformed."""
    try:
        value = decode_artifact(data)
    except BadArtifact as err:
        summary.errors.append(f"{graph}/{name}: {err}")
        return None
    if not isinstance(value, list) or not all(isinstance(op, str) for op in value):
        summary.errors.append(f"{graph}/{name}: not a list of op names")
        return None
    if value:
        summary.schedules.append(GraphOps(graph, value))
    return value


def note_parity(graph: str, schedule: list[str], code: str, summary: RankSummary) -> None:
    """Collectives parity of one graph: its schedule against its output code page's text."""
    offset, missing = parity.compare(schedule, code)
    if offset or missing:
        summary.parity.append(ParityGraph(graph, summary.dir_to_cid.get(graph, "unknown"), offset, missing))


# -- compilation metrics --------------------------------------------------------------------


def note_metrics(cid: CompileId, metrics: CompilationMetrics, summary: RankSummary) -> None:
    """One compilation_metrics event of the rank (cid as logged; `[0/1]` and `[0/1_0]` are one): its
    cell of the compile-id matrix, until the rank's compiles.json says (`note_compiles`). The
    rank's figures are not counted here: they are its compiles.json line (`RankSummary.line`)."""
    cid = cid.normalised()
    summary.compiles[cid.display] = CompileInfo(status=_status(metrics), compile_time_s=_seconds(metrics))
    if summary.settings is None:  # the first record: the settings the rank's first compile ran under
        summary.settings = settings_digest(configs_of({f: getattr(metrics, f, None) for f in SECTIONS}))


def _status(metrics: CompilationMetrics) -> str:
    """The record's status by compiles.json's rule for one record (format/status.py).

    Replaced by the compile id's compiles.json status when the rank has one (`note_compiles`).
    """
    return status_from_metrics(metrics)


def _seconds(metrics: CompilationMetrics) -> float | None:
    if metrics.entire_frame_compile_time_s is not None:
        return float(metrics.entire_frame_compile_time_s)
    if metrics.duration_us is not None:
        return float(metrics.duration_us) / 1e6
    return None


def note_compiles(
    entries: Sequence[CompileEntry],
    summary: RankSummary,
    digest_of: Callable[[str], str | None] | None = None,
    dynamic: Dynamic | None = None,
    changed: Settings | None = None,
    first_answers: Sequence[FirstAnswer] = (),
) -> None:
    """The rank's compiles.json: its overview (ranks.json; `digest_of` gives its Dynamo graphs'
    structure by payload file, `rank_overview`), and every compile id's status in the matrix in
    compiles.json's vocabulary (a restarted attempt is `restarted`, not missing). `dynamic`, its
    compiles.json's answer, says which inputs the rank made dynamic on its own; `changed`, its
    `settings`, which compiles ran under other settings than its first; `first_answers`, its first
    answers (the job's are folded from them)."""
    summary.overview = rank_overview(
        summary.rank, entries, digest_of, summary.settings, dynamic, changed, first_answers
    )
    for entry in entries:
        if entry.status == "outside":
            continue
        times = [r.time_s for r in entry.metrics_records if r.kind == "compilation_metrics" and r.time_s is not None]
        seconds = round(sum(times), 6) if times else None
        summary.compiles[entry.id] = CompileInfo(status=entry.status, compile_time_s=seconds)
