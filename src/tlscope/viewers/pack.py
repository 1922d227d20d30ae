"""`tlscope pack`: one HTML file holding the explorer and a trace, that opens from file://.

The explorer's modules are bundled into one inline script (viewers/build.py), its stylesheet
inlined, and the trace's files put in a `<script type="application/json" id="tlscope-pack">`
element as base64 of their gzip (decompressed in the browser by DecompressionStream). Payloads
go in smallest first until the budget is spent; the file lists the ones left out.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tlscope.format import layout
from tlscope.format.errors import FormatError
from tlscope.format.folder import OutputFolder
from tlscope.format.json_boundary import JsonError, decode
from tlscope.viewers.build import BuildError, packed_page

#: Payload bytes (uncompressed) a pack holds by default.
DEFAULT_BUDGET = 32 * 1024 * 1024
#: Index files copied when present (payloads aside); chromium_events.json stays out: Perfetto
#: cannot be reached from file://.
INDEX_FILES = (layout.MANIFEST, layout.RAW, layout.COMPILES, layout.COMPILE_DIRECTORY)
#: A multi-rank job's own files: its rank facts, its ranks and divergence, its timeline (with
#: ranks.json and each rank's compiles.json, what the Ranks view reads: `FILE?view=ranks`), and
#: the landing page (the packed explorer's Report link opens it).
JOB_FILES = (layout.MULTI_RANK_SUMMARY, layout.RANKS, layout.TIMELINE, "index.html")


class PackError(FormatError, ValueError):
    """The folder is not a tlscope output folder."""


@dataclass
class PackResult:
    """What went into the file."""

    files: int = 0
    payloads: int = 0
    payload_bytes: int = 0
    omitted: list[dict[str, object]] = field(default_factory=list)
    size: int = 0


def _parts(folder: Path) -> list[str]:
    """'' for a single-log folder, or each rank_N/ prefix of a multi-rank folder."""
    try:
        parts = OutputFolder.open(folder).parts()
    except FormatError as err:
        raise PackError(str(err), path=folder) from None
    return [layout.rank_file(rank, "") if rank is not None else "" for rank, _ in parts]


def _payload_refs(raw: Path) -> Iterator[tuple[str, int]]:
    """(payload path, size) of each event of raw.jsonl that has one, first occurrence only."""
    seen: set[str] = set()
    with raw.open("rb") as lines:
        next(lines, None)  # the string table
        for line in lines:
            if b'"payload_filename"' not in line:
                continue  # most lines: not decoded at all
            try:
                event = decode(line)
            except JsonError as err:
                raise PackError(str(err), path=raw) from None
            name = event.get("payload_filename") if isinstance(event, dict) else None
            if isinstance(name, str) and layout.is_payload_name(name) and name not in seen:
                seen.add(name)
                size = event.get("payload_size")
                yield name, size if type(size) is int and size >= 0 else 0


def _encode(data: bytes) -> str:
    return base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")


def collect(folder: Path, budget: int) -> tuple[dict[str, str], PackResult]:
    """The files to inline (path -> base64 of gzip), and what was left out."""
    files: dict[str, str] = {}
    result = PackResult()
    parts = _parts(folder)
    if parts != [""]:
        for name in JOB_FILES:
            if (folder / name).is_file():
                files[name] = _encode((folder / name).read_bytes())
    refs: list[tuple[int, str]] = []
    for prefix in parts:
        for name in INDEX_FILES:
            path = folder / prefix / name
            if path.is_file():
                files[prefix + name] = _encode(path.read_bytes())
        store = _payload_prefix(folder, prefix)
        refs.extend((size, store + name) for name, size in _payload_refs(folder / prefix / layout.RAW))
    for size, name in sorted(set(refs)):
        path = folder / name
        if not path.is_file():
            continue
        if result.payload_bytes + size > budget:
            result.omitted.append({"path": name, "size": size})
            continue
        files[name] = _encode(path.read_bytes())
        result.payloads += 1
        result.payload_bytes += size
        _add_graph(folder, name, files, result)
    result.files = len(files)
    return files, result


def _add_graph(folder: Path, payload: str, files: dict[str, str], result: PackResult) -> None:
    """The graphs file beside a packed payload (format 1.11), when it has one: the Graph view's data."""
    store, _, rel = payload.rpartition(layout.PAYLOADS + "/")
    graph = layout.graph_name(f"{layout.PAYLOADS}/{rel}")
    path = folder / store / graph if graph is not None else None
    if path is not None and graph is not None and path.is_file():
        data = path.read_bytes()
        files[store + graph] = _encode(data)
        result.payload_bytes += len(data)


def _payload_prefix(folder: Path, prefix: str) -> str:
    """Where a part's `payloads/` is in the pack: its own, or the job's (manifest `payloads.root` "..")."""
    try:
        shared = prefix != "" and OutputFolder(folder / prefix).payloads_shared()
    except (OSError, FormatError):
        shared = False
    return "" if shared else prefix


def _json_for_script(value: object) -> str:
    # `<` escaped, so nothing in the data can close the script element.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def render(
    folder: Path, budget: int = DEFAULT_BUDGET, title: str = "", source: tuple[str, str] | None = None
) -> tuple[str, PackResult]:
    """The packed HTML page for `folder`, and what it holds; `source`: (`--source-url`, `--source-root`),
    checked by the caller (http(s) only), for the Graph view's links to user lines."""
    files, result = collect(folder, budget)
    data: dict[str, object] = {
        "format": "tlscope-pack",
        "version": 1,
        "title": title,
        "files": files,
        "omitted": result.omitted,
    }
    if source is not None:
        data["source_url"], data["source_root"] = source
    try:
        page = packed_page(_json_for_script(data))
    except BuildError as err:
        raise PackError(str(err)) from None
    result.size = len(page.encode("utf-8"))
    return page, result
