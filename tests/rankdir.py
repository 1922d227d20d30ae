"""Test-only: read a rank's report folder already on disk into a RankSummary (tlscope's or tlparse's).

Multi-rank runs get each rank's summary from the parse itself (pipeline/rankfacts.py); this
reader is for folders made elsewhere: tlparse's rank folders (the multi-rank parity tests compare
them with tlscope's) or a folder edited after its parse. It reads exactly the files tlparse's
landing page reads (`compile_directory.json`, the per-compile artifacts by their tlparse file
names, `raw.jsonl`, `chromium_events.json`) and folds them with the same analyse/ranks/facts.py
functions. Every file is untrusted; folders and files are visited in name order, never
directory order, so results are reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from tlscope.analyse.ranks import facts
from tlscope.analyse.ranks.facts import BadArtifact
from tlscope.analyse.ranks.graph_divergence import structure_digest
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.format.compiles import CompilesFile
from tlscope.format.json_boundary import JsonError, decode
from tlscope.model.compile_id import BadCompileId, compile_id_from_envelope
from tlscope.model.events import CompilationMetrics
from tlscope.model.lenient import lenient

_COMPILES = msgspec.json.Decoder(CompilesFile)


def summarise_folder(rank: int, folder: Path, *, chromium_events: int | None = None) -> RankSummary:
    """Summarise `folder` (a rank's report); never raises for bad content.

    `chromium_events`: the length of its chromium_events.json array when the caller has already
    read it, instead of reading it again.
    """
    summary = RankSummary(rank=rank)
    directory = _load_directory(folder, summary)
    if directory is not None:
        facts.note_directory(((key, directory[key]) for key in sorted(directory)), summary)
        summary.execution_order = _execution_order(folder, directory, summary)
    _from_compile_folders(folder, summary)
    _from_raw_jsonl(folder / "raw.jsonl", summary)
    _from_compiles(folder / "compiles.json", summary)
    if chromium_events is None:
        chromium_events = _count_chromium(folder / "chromium_events.json", summary)
    summary.chromium_events = chromium_events
    return summary


def _load_directory(folder: Path, summary: RankSummary) -> dict[str, Any] | None:
    try:
        value = facts.decode_artifact(_read(folder / "compile_directory.json"))
    except FileNotFoundError:
        summary.errors.append("compile_directory.json is missing")
        return None
    except BadArtifact as err:
        summary.errors.append(f"compile_directory.json: {err}")
        return None
    if not isinstance(value, dict):
        summary.errors.append("compile_directory.json is not an object")
        return None
    return value


def _execution_order(folder: Path, directory: dict[str, Any], summary: RankSummary) -> list[str] | None:
    best: tuple[float, str] | None = None
    for key in directory:
        for art in facts.artifacts(directory[key]):
            name, number, url = art.get("name"), art.get("number"), art.get("url")
            if not (isinstance(name, str) and facts.is_execution_order_name(name)):
                continue
            if isinstance(number, (int, float)) and isinstance(url, str) and (best is None or number > best[0]):
                best = (number, url)
    if best is None:
        return None
    path = _inside(folder, best[1])
    try:
        data = _read(path) if path is not None else b"null"
    except (BadArtifact, FileNotFoundError) as err:
        summary.errors.append(f"{best[1]}: {err}")
        return None
    return facts.execution_order(best[1], data, summary)


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
        runtime = _first(files, facts.RUNTIME_PREFIX, (".json",))
        data = None if runtime is None else _artifact(graph, runtime, summary)
        if runtime is not None and data is not None:
            facts.note_runtime(graph, runtime.name, data, summary)
        schedule_path = _first(files, facts.SCHEDULE_PREFIX, (".json",))
        data = None if schedule_path is None else _artifact(graph, schedule_path, summary)
        schedule = None
        if schedule_path is not None and data is not None:
            schedule = facts.schedule_of(graph, schedule_path.name, data, summary)
        code = _first(files, facts.CODE_PREFIX, (".html", ".txt"))
        if schedule is not None and code is not None:
            try:
                text = code.read_text("utf-8", "replace")
            except OSError as err:
                summary.errors.append(f"{graph}/{code.name}: {err.strerror}")
                continue
            facts.note_parity(graph, schedule, text, summary)
    summary.tensor_meta.sort()


def _artifact(graph: str, path: Path, summary: RankSummary) -> bytes | None:
    try:
        return _read(path)
    except BadArtifact as err:
        summary.errors.append(f"{graph}/{path.name}: {err}")
        return None


def _from_compiles(path: Path, summary: RankSummary) -> None:
    """compiles.json, when the folder has one (tlscope's, not tlparse's): statuses and overview."""
    try:
        data = _read(path)
    except FileNotFoundError:
        return
    except BadArtifact as err:
        summary.errors.append(f"compiles.json: {err}")
        return
    try:
        found = decode(data, _COMPILES)
    except (JsonError, msgspec.ValidationError) as err:
        summary.errors.append(f"compiles.json: {err}")
        return
    facts.note_compiles(
        found.compiles, summary, _structures(path.parent), found.dynamic, found.settings, found.first_answers
    )


def _structures(folder: Path) -> Callable[[str], str | None]:
    """Each Dynamo graph's structure by payload name, from the payloads where the folder's
    manifest says (`payloads.root`: the job's, `..`, for a rank of a job)."""
    try:
        manifest = decode(_read(folder / "manifest.json"))
        root = manifest["payloads"].get("root", ".") if isinstance(manifest.get("payloads"), dict) else "."
    except (OSError, BadArtifact, JsonError, AttributeError, TypeError):
        root = "."

    def digest_of(name: str) -> str | None:
        try:
            text = (folder / str(root) / name).read_text("utf-8", "replace")
        except OSError:
            return None
        return structure_digest(text)

    return digest_of


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
                envelope = decode(line)
            except JsonError:
                continue
            metrics = (
                lenient(envelope.get("compilation_metrics"), CompilationMetrics) if isinstance(envelope, dict) else None
            )
            if metrics is None:
                continue
            try:
                cid = compile_id_from_envelope(envelope)
            except BadCompileId:
                continue
            facts.note_metrics(cid, metrics, summary)


# -- chromium events --------------------------------------------------------------------------


def _count_chromium(path: Path, summary: RankSummary) -> int:
    try:
        value = facts.decode_artifact(_read(path))
    except FileNotFoundError:
        return 0
    except BadArtifact as err:
        summary.errors.append(f"chromium_events.json: {err}")
        return 0
    return len(value) if isinstance(value, list) else 0


# -- helpers ----------------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    """A file's bytes; FileNotFoundError if absent, BadArtifact if unreadable or too big to load."""
    try:
        size = path.stat().st_size
        if size > facts.MAX_ARTIFACT_BYTES:
            raise BadArtifact(f"{size} bytes, over the {facts.MAX_ARTIFACT_BYTES} byte limit")
        return path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as err:
        raise BadArtifact(err.strerror or str(err)) from err


def _inside(folder: Path, rel: str) -> Path | None:
    """`folder/rel` if it stays inside `folder` (urls in a rank folder are untrusted)."""
    try:
        path = (folder / rel).resolve()
        return path if path.is_relative_to(folder.resolve()) else None
    except (OSError, ValueError):
        return None
