"""The per-rank facts every cross-rank analysis needs, small enough to pass between processes."""

from __future__ import annotations

import msgspec

from tlscope.analyse.ranks.divergence import RankLine, RankOverview


class GraphOps(msgspec.Struct, frozen=True):
    """One graph (compile folder) of a rank and a list of op names (collectives or runtime ops)."""

    graph: str
    ops: list[str]


class GraphRuntime(msgspec.Struct, frozen=True):
    graph: str
    #: (op name, estimated runtime in ns) in the artifact's order.
    ops: list[tuple[str, float]]


class ParityGraph(msgspec.Struct, frozen=True):
    """A graph whose scheduled collectives disagree with its generated code (tlparse's struct order)."""

    graph: str
    compile_id: str
    offset: int
    missing_waits: int


class CompileInfo(msgspec.Struct, frozen=True):
    """One compile id of a rank as the compile-id matrix shows it."""

    #: compiles.json's status vocabulary (docs/FORMAT.md): from the rank's compiles.json when it
    #: has one, else from its compilation metrics (failed, graph_break, empty, ok) or
    #: `metrics_missing` for an id with artifacts and no metrics.
    status: str
    compile_time_s: float | None = None


class RankSummary(msgspec.Struct, kw_only=True):
    """What one rank's report folder says, for comparison with the other ranks."""

    rank: int
    #: compile_directory.json keys except `unknown*`; `[-/-]` included (the analysis decides).
    compile_ids: list[str] = []
    #: Cache suffixes (✅/❌/...) of all artifacts in output-counter order.
    cache_pattern: str = ""
    #: compile id -> miss/hit/bypass (miss wins), from artifact names.
    cache_status: dict[str, str] = {}
    #: Compile folder name -> compile id display.
    dir_to_cid: dict[str, str] = {}
    runtimes: list[GraphRuntime] = []
    schedules: list[GraphOps] = []
    #: (graph, canonical JSON of its runtime/tensor-meta artifact), sorted by graph.
    tensor_meta: list[tuple[str, str]] = []
    #: Compile ids in execution order (`[0/1]` form), or None without a readable artifact.
    execution_order: list[str] | None = None
    parity: list[ParityGraph] = []
    compiles: dict[str, CompileInfo] = {}
    chromium_events: int = 0
    #: Malformed inputs or artifacts of this rank: reported, the other ranks still analysed.
    errors: list[str] = []
    #: The configs of the rank's first metrics record, as the ranks compare them
    #: (analyse/ranks/settings_divergence.py); "" when it logs none, None before any record.
    settings: str | None = None
    #: False when the rank's parse itself failed (no report folder to compare).
    parsed: bool = True
    #: The rank's line and compile ids from its compiles.json (ranks.json is made of these); null
    #: for a folder without compiles.json (tlparse's).
    overview: RankOverview | None = None

    @property
    def line(self) -> RankLine:
        """The rank's figures (compiles, compile time, breaks, recompiles, failures, cache): ranks.json's
        line, the one definition every consumer shows; all zero without a compiles.json."""
        return self.overview.line if self.overview is not None else RankLine(rank=self.rank)
