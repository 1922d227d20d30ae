"""graphs/<md5>.json beside payloads/<md5>.txt: each FX graph payload as data (issue 23).

Fed by the format writer with each payload it writes for the first time, so a payload logged
many times is parsed once, and only payloads that are printed graphs are parsed at all. One
graph is held in memory at a time. A payload that looks like a graph but cannot be read as one
is a problem (`bad_graph`) and still gets its file, holding why; its text stays in payloads/.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from tlscope.analyse.fxgraph import FxGraphFailure, looks_like_graph, parse_graph, to_stored
from tlscope.format import layout
from tlscope.format.graph_file import GraphFile
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION, GraphStats
from tlscope.model.problems import ProblemKind, Problems
from tlscope.write.outdir import OutputDir

_ENCODER = msgspec.json.Encoder()


def graph_file(md5: str, payload: bytes) -> GraphFile | None:
    """The graphs file of a payload, None when the payload is no printed graph."""
    if not looks_like_graph(payload):
        return None
    parsed = parse_graph(payload.decode("utf-8", "replace"))
    failed = isinstance(parsed, FxGraphFailure)
    return GraphFile(
        format_version=FORMAT_VERSION,
        format_minor=FORMAT_MINOR,
        payload=f"{layout.PAYLOADS}/{md5}.txt",
        graph=None if isinstance(parsed, FxGraphFailure) else to_stored(parsed),
        failure=parsed.reason if failed and isinstance(parsed, FxGraphFailure) else None,
    )


class GraphTally:
    """Each graph payload parsed and counted (manifest.json's `graphs`, its `bad_graph` problems),
    nothing written: the format's facts without its files (`tlscope summary`)."""

    def __init__(self, problems: Problems) -> None:
        self._problems = problems
        self.files = 0
        self.bytes = 0
        self.failed = 0

    def add(self, md5: str, payload: bytes, line: int) -> None:
        """A payload met for the first time: its graphs file when it is a graph."""
        stored = graph_file(md5, payload)
        if stored is None:
            return
        if stored.failure is not None:
            self.failed += 1
            self._problems.add(ProblemKind.BAD_GRAPH, line, f"payloads/{md5}.txt: {stored.failure}")
        data = _ENCODER.encode(stored)
        self._write(md5, data)
        self.files += 1
        self.bytes += len(data)

    def _write(self, md5: str, data: bytes) -> None:
        """Nothing to write for a tally."""

    def stats(self) -> GraphStats:
        return GraphStats(files=self.files, bytes=self.bytes, failed=self.failed)


class GraphStore(GraphTally):
    """graphs/<md5>.json, in the folder that holds payloads/ (a job's, for its ranks: `shared`)."""

    def __init__(self, out: OutputDir, problems: Problems, shared: Path | None = None) -> None:
        super().__init__(problems)
        self._out = out
        self._shared = shared
        if shared is not None:
            (shared / layout.GRAPHS).mkdir(exist_ok=True)

    def _write(self, md5: str, data: bytes) -> None:
        if self._shared is None:
            self._out.path(f"{layout.GRAPHS}/{md5}.json").write_bytes(data)
            return
        path = self._shared / layout.GRAPHS / f"{md5}.json"
        # A job's ranks write into the same graphs/ at once: under a name of this process's, then
        # renamed into place, so a reader never sees half a file (the same bytes either way).
        part = path.with_name(f".{md5}.{os.getpid()}.part")
        part.write_bytes(data)
        os.replace(part, path)
