"""Read one rank's report folder into a RankSummary (the only place that touches rank files).

Every file is untrusted: a malformed artifact becomes an entry in `errors` and the rest of
the rank is still summarised (tlparse aborts the whole multi-rank run instead). Subfolders
and files are visited in name order, never directory order, so results are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from tlscope.analyse.ranks import parity
from tlscope.analyse.ranks.summary import (
    CompileInfo,
    GraphOps,
    GraphRuntime,
    ParityGraph,
    RankSummary,
)
from tlscope.model.compile_id import BadCompileId, compile_id_from_envelope

RUNTIME_PREFIX = "inductor_runtime_and_tensor_meta"
SCHEDULE_PREFIX = "inductor_collective_schedule"
CODE_PREFIX = "inductor_output_code"
#: Artifacts bigger than this are not loaded (a summary must stay cheap; reported instead).
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
_CACHE_PRIORITY = {"miss": 3, "hit": 2, "bypass": 1}
_DECODER = msgspec.json.Decoder()


class _Bad(Exception):
    """One artifact of the rank is malformed."""


def summarise(rank: int, folder: Path, *, chromium_events: int | None = None) -> RankSummary:
    """Summarise `folder` (a rank's report); never raises for bad content.

    `chromium_events`: the length of its chromium_events.json array when the caller has already
    read it (multi-rank workers do, for the combined file), instead of reading it again.
    """
    summary = RankSummary(rank=rank)
    directory = _load_directory(folder, summary)
    if directory is not None:
        _from_directory(directory, summary)
        summary.execution_order = _execution_order(folder, directory, summary)
    _from_compile_folders(folder, summary)
    _from_raw_jsonl(folder / "raw.jsonl", summary)
    if chromium_events is None:
        chromium_events = _count_chromium(folder / "chromium_events.json", summary)
    summary.chromium_events = chromium_events
    return summary


# -- compile_directory.json -------------------------------------------------------------------


def _load_directory(folder: Path, summary: RankSummary) -> dict[str, Any] | None:
    path = folder / "compile_directory.json"
    try:
        value = _read_json(path)
    except FileNotFoundError:
        summary.errors.append("compile_directory.json is missing")
        return None
    except _Bad as err:
        summary.errors.append(f"compile_directory.json: {err}")
        return None
    if not isinstance(value, dict):
        summary.errors.append("compile_directory.json is not an object")
        return None
    return value


def _artifacts(entry: Any) -> list[dict[str, Any]]:
    arts = entry.get("artifacts") if isinstance(entry, dict) else None
    return [a for a in arts if isinstance(a, dict)] if isinstance(arts, list) else []


def _from_directory(directory: dict[str, Any], summary: RankSummary) -> None:
    summary.compile_ids = sorted(k for k in directory if not k.startswith("unknown"))
    numbered: list[tuple[float, str]] = []
    for key in sorted(directory):
        for art in _artifacts(directory[key]):
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
    summary.stats.cache_hits = sum(s.count("✅") for _, s in numbered)
    summary.stats.cache_misses = sum(s.count("❌") for _, s in numbered)


def _note_cache(status: dict[str, str], cid: str, name: str) -> None:
    for word, priority in _CACHE_PRIORITY.items():
        if word in name and priority > _CACHE_PRIORITY.get(status.get(cid, ""), 0):
            status[cid] = word


def _execution_order(folder: Path, directory: dict[str, Any], summary: RankSummary) -> list[str] | None:
    best: tuple[float, str] | None = None
    for key in directory:
        for art in _artifacts(directory[key]):
            name, number, url = art.get("name"), art.get("number"), art.get("url")
            if not (isinstance(name, str) and "graph_execution" in name and name.endswith(".json")):
                continue
            if isinstance(number, (int, float)) and isinstance(url, str) and (best is None or number > best[0]):
                best = (number, url)
    if best is None:
        return None
    path = _inside(folder, best[1])
    try:
        value = _read_json(path) if path is not None else None
    except (_Bad, FileNotFoundError) as err:
        summary.errors.append(f"{best[1]}: {err}")
        return None
    order = value.get("graph_execution_order") if isinstance(value, dict) else None
    if not isinstance(order, list):
        return None  # another artifact whose name matches (e.g. inductor_graph_execution): not an order
    items: list[str] = []
    for item in order:
        cid = item.get("compile_id") if isinstance(item, dict) else item
        if not isinstance(cid, str):
            summary.errors.append(f"{best[1]}: entry without a string compile_id")
            return None
        items.append(f"[{cid}]")
    return items


# -- per compile folder artifacts -------------------------------------------------------------


def _compile_folders(folder: Path) -> Iterator[tuple[str, list[Path]]]:
    try:
        subdirs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and p.name != "payloads")
    except OSError:
        return
    for sub in subdirs:
        try:
            files = sorted((p for p in sub.iterdir() if p.is_file()), key=_artifact_order)
        except OSError:
            continue
        yield sub.name, files


def _artifact_order(path: Path) -> tuple[int, str]:
    """Output-counter order (`name_<N>.ext`), then name: the order the parse wrote them in."""
    tail = path.stem.rsplit("_", 1)[-1]
    return (int(tail) if tail.isdigit() else -1, path.name)


def _first(files: list[Path], prefix: str, suffixes: tuple[str, ...]) -> Path | None:
    return next((p for p in files if p.stem.startswith(prefix) and p.suffix in suffixes), None)


def _from_compile_folders(folder: Path, summary: RankSummary) -> None:
    for graph, files in _compile_folders(folder):
        runtime = _first(files, RUNTIME_PREFIX, (".json",))
        if runtime is not None:
            _runtime_artifact(graph, runtime, summary)
        schedule_path = _first(files, SCHEDULE_PREFIX, (".json",))
        schedule = _schedule_artifact(graph, schedule_path, summary) if schedule_path else None
        if schedule:
            summary.schedules.append(GraphOps(graph, schedule))
        code = _first(files, CODE_PREFIX, (".html", ".txt"))
        if schedule is not None and code is not None:
            _parity(graph, schedule, code, summary)
    summary.tensor_meta.sort()


def _runtime_artifact(graph: str, path: Path, summary: RankSummary) -> None:
    try:
        value = _read_json(path)
        ops = _runtime_ops(value)
    except _Bad as err:
        summary.errors.append(f"{graph}/{path.name}: {err}")
        return
    summary.tensor_meta.append((graph, msgspec.json.encode(value, order="sorted").decode()))
    if ops:
        summary.runtimes.append(GraphRuntime(graph, ops))


def _runtime_ops(value: Any) -> list[tuple[str, float]]:
    ops = value.get("ops") if isinstance(value, dict) else None
    if not isinstance(ops, list):
        raise _Bad("no `ops` list")
    out: list[tuple[str, float]] = []
    for op in ops:
        name = op.get("name") if isinstance(op, dict) else None
        ns = op.get("estimated_runtime_ns") if isinstance(op, dict) else None
        if not isinstance(name, str) or isinstance(ns, bool) or not isinstance(ns, (int, float)):
            raise _Bad("an op lacks a string `name` or a numeric `estimated_runtime_ns`")
        if not math.isfinite(ns):
            raise _Bad("an estimated runtime is not finite")
        out.append((name, float(ns)))
    return out


def _schedule_artifact(graph: str, path: Path, summary: RankSummary) -> list[str] | None:
    try:
        value = _read_json(path)
    except _Bad as err:
        summary.errors.append(f"{graph}/{path.name}: {err}")
        return None
    if not isinstance(value, list) or not all(isinstance(op, str) for op in value):
        summary.errors.append(f"{graph}/{path.name}: not a list of op names")
        return None
    return value


def _parity(graph: str, schedule: list[str], code: Path, summary: RankSummary) -> None:
    try:
        text = code.read_text("utf-8", "replace")
    except OSError as err:
        summary.errors.append(f"{graph}/{code.name}: {err.strerror}")
        return
    offset, missing = parity.compare(schedule, text)
    if offset or missing:
        cid = summary.dir_to_cid.get(graph, "unknown")
        summary.parity.append(ParityGraph(graph, cid, offset, missing))


# -- raw.jsonl: compilation metrics -----------------------------------------------------------


def _from_raw_jsonl(path: Path, summary: RankSummary) -> None:
    try:
        stream = path.open("rb")
    except OSError:
        summary.errors.append("raw.jsonl is missing: no compile metrics")
        return
    with stream:
        for line in stream:
            # Only metrics lines are decoded; the rest of a large raw.jsonl is skipped cheaply.
            if b'"compilation_metrics"' not in line:
                continue
            try:
                envelope = _DECODER.decode(line)
            except (msgspec.DecodeError, UnicodeDecodeError):
                continue
            if isinstance(envelope, dict) and isinstance(envelope.get("compilation_metrics"), dict):
                _metrics(envelope, summary)


def _metrics(envelope: dict[str, Any], summary: RankSummary) -> None:
    metrics: dict[str, Any] = envelope["compilation_metrics"]
    try:
        cid = compile_id_from_envelope(envelope).normalised()
    except BadCompileId:
        return
    display = cid.display
    stats = summary.stats
    status = _status(metrics)
    seconds = _seconds(metrics)
    stats.compilations += 1
    stats.compile_time_s += seconds or 0.0
    stats.graph_breaks += status == "break"
    stats.failures += status == "error"
    stats.recompiles += bool(cid.frame_compile_id)
    summary.compiles[display] = CompileInfo(status=status, compile_time_s=seconds)


def _status(metrics: dict[str, Any]) -> str:
    """tlparse's trie status: error, break (a restart, e.g. a graph break), empty, ok."""
    if metrics.get("fail_type"):
        return "error"
    if metrics.get("restart_reasons"):
        return "break"
    if metrics.get("graph_op_count") == 0:
        return "empty"
    return "ok"


def _seconds(metrics: dict[str, Any]) -> float | None:
    value = metrics.get("entire_frame_compile_time_s")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    micros = metrics.get("duration_us")
    if isinstance(micros, (int, float)) and not isinstance(micros, bool):
        return float(micros) / 1e6
    return None


# -- chromium events --------------------------------------------------------------------------


def _count_chromium(path: Path, summary: RankSummary) -> int:
    try:
        value = _read_json(path)
    except FileNotFoundError:
        return 0
    except _Bad as err:
        summary.errors.append(f"chromium_events.json: {err}")
        return 0
    return len(value) if isinstance(value, list) else 0


# -- helpers ----------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    """Decode a JSON file; FileNotFoundError if absent, _Bad if unreadable, too big or invalid."""
    try:
        size = path.stat().st_size
        if size > MAX_ARTIFACT_BYTES:
            raise _Bad(f"{size} bytes, over the {MAX_ARTIFACT_BYTES} byte limit")
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as err:
        raise _Bad(err.strerror or str(err)) from err
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as err:
        raise _Bad(f"invalid JSON ({err})") from err


def _inside(folder: Path, rel: str) -> Path | None:
    """`folder/rel` if it stays inside `folder` (urls in a rank folder are untrusted)."""
    try:
        path = (folder / rel).resolve()
        return path if path.is_relative_to(folder.resolve()) else None
    except (OSError, ValueError):
        return None
