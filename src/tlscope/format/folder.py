"""The reader of the format: one output folder on disk, its ranks and its files, typed.

Everything that reads an output folder (`tlscope.load`, summary, diff, pack, serve and the
tests' oracle) opens it here, so what a folder is, which ranks it holds, what a raw.jsonl line's
event key and compile id are, and which payload names are allowed are decided once (with the
pure rules of format/layout.py and format/raw.py, which a remote store applies too). Output
folders are files like any other (maybe someone else's): every file is decoded through the JSON
boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tlscope.format import layout
from tlscope.format.compiles import CompilesFile
from tlscope.format.errors import FormatError
from tlscope.format.graph_file import GraphFile
from tlscope.format.json_boundary import JsonError, decode
from tlscope.format.logsize import LogSize
from tlscope.format.manifest import Manifest
from tlscope.format.raw import artifact_name, display_compile_id, event_key

T = TypeVar("T")
_OBJECT = msgspec.json.Decoder(dict[str, Any])
#: The format files read typed. Each one's decoder is made on first use: making them walks the
#: Structs' annotations (CompilesFile's alone ~4 ms), which a parse that reads no folder never needs.
_TYPED = (Manifest, CompilesFile, LogSize, GraphFile)
_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


def _decoder(kind: type) -> msgspec.json.Decoder[Any]:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        if kind not in _TYPED:
            raise KeyError(kind)
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return decoder


class LocalFiles:
    """A folder on disk, for the layout rules (format/layout.py)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def is_file(self, rel: str) -> bool:
        return (self.path / rel).is_file()

    def read(self, rel: str) -> bytes | None:
        try:
            return (self.path / rel).read_bytes()
        except OSError:
            return None

    def subfolders(self) -> list[str]:
        return [p.name for p in self.path.iterdir() if p.is_dir()] if self.path.is_dir() else []


def is_output_folder(path: Path) -> bool:
    """A folder holding a manifest.json (one log's output) or a multi_rank_summary.json (a job's)."""
    return path.is_dir() and layout.run(layout.is_output_folder_rule(), LocalFiles(path))


def decode_typed(data: bytes, kind: type[T], where: str | Path) -> T:
    """A format file's bytes (a Manifest, CompilesFile or LogSize), checked against its schema;
    FormatError naming `where` when they are not. Local folders and remote stores read through it."""
    try:
        value: T = decode(data, _decoder(kind))
    except JsonError as err:
        raise FormatError(f"{err}", path=where) from None
    return value


class OutputFolder:
    """An output folder: a single log's, or a job's with one output folder per rank."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._root: str | None = None
        #: The job's ranks, read once (a written folder does not change): `rank(n)` over every rank
        #: of a 1,000-rank job decoded its whole multi_rank_summary.json 1,000 times.
        self._ranks: tuple[int, ...] | None = None
        self._known: frozenset[int] = frozenset()

    @classmethod
    def open(cls, path: Path) -> OutputFolder:
        """The output folder at `path`, or FormatError saying why it is none."""
        if not is_output_folder(path):
            markers = " or ".join(layout.MARKERS)
            raise FormatError(f"holds no {markers}: not a tlscope output folder", path=path)
        return cls(path)

    def __repr__(self) -> str:
        return f"OutputFolder({str(self.path)!r})"

    @property
    def multi_rank(self) -> bool:
        return layout.run(layout.multi_rank_rule(), LocalFiles(self.path))

    def ranks(self) -> list[int]:
        """The ranks of a multi-rank folder in its summary's order ([] for a single log's folder),
        by `layout.ranks_rule` (the rule a store's folder follows too); read on the first call."""
        return list(self._listed())

    def _listed(self) -> tuple[int, ...]:
        if self._ranks is None:
            self._ranks = tuple(layout.run(layout.ranks_rule(), LocalFiles(self.path)))
            self._known = frozenset(self._ranks)
        return self._ranks

    def rank(self, rank: int) -> OutputFolder:
        """Rank `rank`'s output folder (FormatError if the folder has no such rank)."""
        ranks = self._listed()
        if rank not in self._known:
            raise FormatError(f"has no rank {rank} (ranks: {sorted(ranks)})", path=self.path)
        return OutputFolder(self.path / layout.rank_dir(rank))

    def parts(self) -> list[tuple[int | None, OutputFolder]]:
        """(rank, single-log folder) of each part: the folder itself, or each rank in order."""
        parts = layout.run(layout.parts_rule(), LocalFiles(self.path))
        return [(r, self if not rel else OutputFolder(self.path / rel)) for r, rel in parts]

    def file(self, name: str) -> Path:
        return self.path / name

    def _typed(self, name: str, kind: type[T]) -> T:
        path = self.path / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise FormatError(f"has no {name}", path=self.path) from None
        return decode_typed(data, kind, path)

    def manifest(self) -> Manifest:
        return self._typed(layout.MANIFEST, Manifest)

    def compiles(self) -> CompilesFile:
        return self._typed(layout.COMPILES, CompilesFile)

    def log_size(self) -> LogSize:
        return self._typed(layout.LOG_SIZE, LogSize)

    def raw_path(self) -> Path:
        return self.path / layout.RAW

    def events(self, kind: str | None = None, compile_id: str | None = None) -> Iterator[dict[str, Any]]:
        """raw.jsonl's events in log order (streamed), each the JSON object of its line.

        `kind` is an event key or an artifact name; `compile_id` a display form (format/raw.py).
        """
        with self.raw_path().open("rb") as lines:
            next(lines, None)  # the string table
            for line in lines:
                try:
                    event: dict[str, Any] = decode(line, _OBJECT)
                except JsonError as err:
                    raise FormatError(f"{err}", path=self.raw_path()) from None
                if kind is not None and kind not in (event_key(event), artifact_name(event)):
                    continue
                if compile_id is not None and display_compile_id(event) != compile_id:
                    continue
                yield event

    def payload_path(self, name: str) -> Path:
        """The file of payload `name` (`payloads/<md5>.txt`); FormatError for any other name.

        A rank of a job has no payloads/ of its own: its manifest's `payloads.root` is `..`,
        the job's folder, whose payloads/ every rank shares.
        """
        base = self.path.parent if self._payload_root() == ".." else self.path
        path = (base / name).resolve()
        if not layout.is_payload_name(name) or not path.is_relative_to((base / layout.PAYLOADS).resolve()):
            raise FormatError(f"{name!r} is not a payload file", path=self.path)
        return path

    def payloads_shared(self) -> bool:
        """A rank of a job whose payloads are the job's (`payloads.root` is `..`)."""
        return self._payload_root() == ".."

    def _payload_root(self) -> str:
        """The manifest's `payloads.root` (only "." or ".."; anything else reads as ".")."""
        if self._root is None:
            self._root = ".." if self.manifest().payloads.root == ".." else "."
        return self._root

    def payload(self, name: str) -> str:
        return self.payload_path(name).read_bytes().decode("utf-8", "replace")

    def graph(self, payload_name: str) -> GraphFile | None:
        """The graphs file of payload `payload_name` (`graphs/<md5>.json`, under the payloads
        root); None when there is none (not a graph, or a folder written before 1.11)."""
        name = layout.graph_name(payload_name)
        if name is None:
            raise FormatError(f"{payload_name!r} is not a payload file", path=self.path)
        base = self.path.parent if self._payload_root() == ".." else self.path
        path = base / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        return decode_typed(data, GraphFile, path)


class StoredOutputFolder:
    """An output folder read asynchronously (in a remote store: serve/stores.py gives its files),
    by the same layout rules as OutputFolder and with the same typed decoding."""

    def __init__(self, files: layout.AsyncFiles, where: str) -> None:
        self.files = files
        #: What error messages name: the folder's URL.
        self.where = where

    async def is_output_folder(self) -> bool:
        return await layout.run_async(layout.is_output_folder_rule(), self.files)

    async def multi_rank(self) -> bool:
        return await layout.run_async(layout.multi_rank_rule(), self.files)

    async def ranks(self) -> list[int]:
        return await layout.run_async(layout.ranks_rule(), self.files)

    async def parts(self) -> list[tuple[int | None, str]]:
        """(rank, folder relative to this one) of each single-log part (layout.parts_rule)."""
        return await layout.run_async(layout.parts_rule(), self.files)

    async def manifest(self, part: str = "") -> Manifest:
        """The typed manifest of a part (`""` or `rank_N`); FormatError when absent or invalid."""
        rel = f"{part}/{layout.MANIFEST}" if part else layout.MANIFEST
        data = await self.files.read(rel)
        if data is None:
            raise FormatError(f"has no {rel}", path=self.where)
        return decode_typed(data, Manifest, f"{self.where.rstrip('/')}/{rel}")
