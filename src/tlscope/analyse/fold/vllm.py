"""vLLM's compiles: its config, its split graph and each piecewise compile, by compile range
(compiles.json `vllm`, format 1.22).

vLLM compiles a model with its own backend: Dynamo captures the whole forward once (a compile id,
under which vLLM logs its `vllm_compilation_config` artifact and the `vllm_piecewise_split_graph`
dump), vLLM splits the graph at its attention ops, then compiles each piece (`submod_N`) for each
compile range (every batch size from `compile_range_start` to `compile_range_end`, or one size,
maybe a CUDA graph capture size) through Inductor, logging a `vllm_piecewise_compile_start`
artifact (JSON: `piecewise_index`, `submod_name`, `total_piecewise_compiles`, the range) and the
piece's own dump (`vllm_submod_N`) and Inductor's graphs and code, all outside any compile id.

The fold keeps, per vLLM compile (a config artifact starts one), the config as logged, and each
piecewise compile with the records after its start (until the next start or a record of a compile
id) as references; per range, how many pieces were logged of the total vLLM announced, in one
sentence decided here. tlparse 0.4.3 shows these artifacts as files of `[-/-]` only.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tlscope.analyse.fold.exports import outside_compiles
from tlscope.analyse.fold.graphs import GRAPH_ARTIFACTS, GRAPH_KEYS
from tlscope.analyse.fold.refs import payload_ref
from tlscope.format.compiles import Vllm, VllmPiecewise, VllmRange
from tlscope.format.json_boundary import JsonError, decode
from tlscope.model.events import Artifact, GraphDump
from tlscope.model.record import Record

CONFIG = "vllm_compilation_config"
SPLIT_GRAPH = "vllm_piecewise_split_graph"
PIECE_START = "vllm_piecewise_compile_start"
#: Bounds for an untrusted log: vLLM compiles, pieces per compile, references per piece, config keys
#: and the characters of a config value kept.
MAX_COMPILES = 100
MAX_PIECES = 10_000
MAX_REFS = 20
MAX_KEYS = 200
MAX_VALUE = 2000
#: The keys of vLLM's named records: the fold reads these, and every record while a piece's follow.
VLLM_NAMED = frozenset({"artifact", "graph_dump"})


class _Start(msgspec.Struct):
    piecewise_index: int | None = None
    submod_name: str | None = None
    total_piecewise_compiles: int | None = None
    compile_range_start: int | None = None
    compile_range_end: int | None = None
    is_single_size: bool = False
    is_cudagraph_capture_size: bool = False


_START = msgspec.json.Decoder(_Start)
_OBJECT = msgspec.json.Decoder(dict[str, Any])


class VllmFold:
    """Folds vLLM's artifacts into compiles.json's `vllm` (see the module docstring)."""

    def __init__(self) -> None:
        self.compiles: list[Vllm] = []
        #: The piece whose records follow, else None.
        self._piece: VllmPiecewise | None = None
        #: Whether a piece's records follow (every record is then fed, not only VLLM_NAMED's).
        self.watching = False

    def feed(self, record: Record, raw_line: int | None) -> None:
        if self.watching and not outside_compiles(record.compile_id):
            self._follow(None)  # a record of a compile id: the piece's records are over
        event = record.event
        name = event.name if isinstance(event, (Artifact, GraphDump)) else None
        if name == CONFIG:
            self._config(record, raw_line)
        elif name == SPLIT_GRAPH and self.compiles:
            self.compiles[-1].split_graph = payload_ref(record, record.key, raw_line)
        elif name == PIECE_START:
            self._start(record, raw_line)
        elif self._piece is not None:
            self._piece_record(self._piece, record, name, raw_line)

    def result(self) -> list[Vllm]:
        for found in self.compiles:
            found.ranges = _ranges(found.piecewise)
        return self.compiles

    def _follow(self, piece: VllmPiecewise | None) -> None:
        self._piece, self.watching = piece, piece is not None

    def _config(self, record: Record, raw_line: int | None) -> None:
        self._follow(None)
        if len(self.compiles) >= MAX_COMPILES:
            return
        self.compiles.append(
            Vllm(
                index=len(self.compiles),
                compile_id=None if record.compile_id is None else record.compile_id.normalised().display,
                config=_config_of(record.payload or b""),
                config_event=payload_ref(record, CONFIG, raw_line),
            )
        )

    def _start(self, record: Record, raw_line: int | None) -> None:
        self._follow(None)
        try:
            start = decode(record.payload or b"", _START)
        except (JsonError, msgspec.ValidationError):
            return
        if not self.compiles:  # a start with no config before it (a cut log): a compile of its own
            self.compiles.append(Vllm(index=0, compile_id=None, config={}))
        pieces = self.compiles[-1].piecewise
        if len(pieces) >= MAX_PIECES:
            return
        piece = VllmPiecewise(
            index=start.piecewise_index,
            submod=start.submod_name,
            total=start.total_piecewise_compiles,
            range_start=start.compile_range_start,
            range_end=start.compile_range_end,
            single_size=start.is_single_size,
            cudagraph_size=start.is_cudagraph_capture_size,
            event=payload_ref(record, PIECE_START, raw_line),
        )
        pieces.append(piece)
        self._follow(piece)

    @staticmethod
    def _piece_record(piece: VllmPiecewise, record: Record, name: str | None, raw_line: int | None) -> None:
        if record.payload is None or len(piece.graphs) + len(piece.code) >= MAX_REFS:
            return
        # A payload reference's kind: an artifact's name, else the event key (FORMAT.md).
        ref = payload_ref(record, name if record.key == "artifact" and name else record.key, raw_line)
        submod = record.key == "graph_dump" and name is not None and name.startswith("vllm_submod")
        if submod or record.key in GRAPH_KEYS or (record.key == "artifact" and name in GRAPH_ARTIFACTS):
            piece.graphs.append(ref)
        elif record.key in ("graph_dump", "inductor_output_code"):
            piece.code.append(ref)


def vllm_line(compiles: list[Vllm]) -> str:
    """The vLLM compiles in one line: how many, their pieces and ranges."""
    pieces = sum(len(found.piecewise) for found in compiles)
    ranges = sum(len(found.ranges) for found in compiles)
    count = f"{len(compiles)} vLLM compile{'s' if len(compiles) != 1 else ''}"
    logged = f"{pieces} piecewise compile{'s' if pieces != 1 else ''} logged"
    return f"{count}: {logged} in {ranges} compile range{'s' if ranges != 1 else ''}"


def _config_of(payload: bytes) -> dict[str, Any]:
    """The config as logged: its first MAX_KEYS keys with a scalar value, strings cut at MAX_VALUE."""
    try:
        found = decode(payload, _OBJECT)
    except (JsonError, msgspec.ValidationError):
        return {}
    kept: dict[str, Any] = {}
    for key, value in found.items():
        if len(kept) >= MAX_KEYS:
            break
        if isinstance(value, str):
            kept[key] = value[:MAX_VALUE]
        elif value is None or isinstance(value, (bool, int, float)):
            kept[key] = value
    return kept


def _ranges(pieces: list[VllmPiecewise]) -> list[VllmRange]:
    """Each compile range's pieces: how many were logged of the total vLLM announced."""
    found: dict[tuple[int | None, int | None, bool, bool], VllmRange] = {}
    for piece in pieces:
        key = (piece.range_start, piece.range_end, piece.single_size, piece.cudagraph_size)
        at = found.get(key)
        if at is None:
            start, end = piece.range_start, piece.range_end
            at = found[key] = VllmRange(start=start, end=end, single_size=key[2], cudagraph_size=key[3])
        at.logged += 1
        if piece.total is not None:
            at.total = max(at.total or 0, piece.total)
    for at in found.values():
        at.sentence = _range_sentence(at)
    return list(found.values())


def _range_sentence(at: VllmRange) -> str:
    if at.single_size:
        which = f"size {at.start if at.start is not None else '?'}"
    else:
        which = f"sizes {at.start if at.start is not None else '?'}-{at.end if at.end is not None else '?'}"
    if at.cudagraph_size:
        which += " (a CUDA graph capture size)"
    of = f" of {at.total}" if at.total is not None else ""
    return f"{which}: {at.logged}{of} piecewise compile{'s' if (at.total or at.logged) != 1 else ''} logged"
