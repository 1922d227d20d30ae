"""manifest.json: what was read, what was written, and what went wrong. Versioned.

The Structs here are the manifest's schema (docs/schema/manifest.schema.json is generated
from them); FORMAT.md documents each field.
"""

from __future__ import annotations

import msgspec

from tlscope.model.clock import ClockInfo

#: Bump on any incompatible change to an output file (FORMAT.md, "Versioning").
FORMAT_VERSION = 1
#: Bump on an addition (a new file or field): 1 added compiles.json, log_size.json and this field;
#: 2 the recompiling call's Python values in compiles.json (guard_failures[].actual, changes value/length);
#: 3 compiles.json metrics_records (every metrics record of a compile id);
#: 4 manifest `notes` (known torch quirks, no longer counted as problems).
#: 5 a multi-rank job's ranks.json; 6 timeline.bin (every chromium event packed, a job's ranks together).
#: 7 compiles.json graph_breaks[].stack/.stopped_at (the user-code frames); 8 torch's fix hints of a break;
#: 9 compiles.json's rules: `status_order` and each recompile's `recommended` guard failure;
#: 10 compiles.json `symbols`, a size recompile's `fix`, `input_shapes`;
#: 11 graphs/<md5>.json (each FX graph payload as data) and manifest `graphs`;
#: 12 compiles.json failures' `hints` and `docs_url` (torch's fix hints of a failed compile);
#: 13-15: FORMAT.md section 12; 16 timeline.bin's layout version 2 (varints, ~8 bytes an event).
#: 19 compiles.json exports' issue kind `dynamo_error` (strict torch.export's Dynamo failure).
#: 50 compiles.json graph breaks' `fix` (a logging call, a training step compiled whole).
FORMAT_MINOR = 50


class InputFile(msgspec.Struct, kw_only=True):
    """One log that was read."""

    path: str
    size: int
    sha256: str
    compressed: bool
    lines: int
    #: The rank its lines carry (the first one seen), None for a single-process run.
    rank: int | None
    #: The rank in the file name (`dedicated_log_torch_trace_rank_N_*.log`), if any.
    name_rank: int | None


class KeyStats(msgspec.Struct, kw_only=True):
    count: int = 0
    payload_bytes: int = 0


class CompileIdEntry(msgspec.Struct, kw_only=True):
    """One compile id: display form, folder form, first and last event time, event count."""

    id: str
    dir: str
    first: str
    last: str
    events: int


class ProblemEntry(msgspec.Struct, kw_only=True):
    kind: str
    line: int
    message: str
    file: str | None = None


class ProblemSummary(msgspec.Struct, kw_only=True):
    total: int
    counts: dict[str, int]
    #: The first problems of each kind (at most 20 per kind), in line order.
    first: list[ProblemEntry]


class PayloadStats(msgspec.Struct, kw_only=True):
    #: Distinct payload files in payloads/.
    files: int
    #: Their total size in bytes.
    bytes: int
    #: Payload occurrences in the log (>= files: identical payloads are stored once).
    occurrences: int
    #: Where `payload_filename`s resolve, relative to this folder: "." (its own payloads/), or
    #: ".." for a rank of a job (the job's payloads/, shared by its ranks); since 1.6.
    root: str = "."


class GraphStats(msgspec.Struct, kw_only=True):
    #: Files in graphs/ (beside payloads/, under the same root): one per distinct graph payload.
    files: int
    #: Their total size in bytes.
    bytes: int
    #: Of them, payloads that look like a graph but could not be read as one (problem `bad_graph`).
    failed: int


class Manifest(msgspec.Struct, kw_only=True):
    """Top-level object of manifest.json."""

    #: Always "tlscope"; required, like the versions, so a reader can tell what it holds.
    format: str
    format_version: int
    format_minor: int
    tlscope_version: str
    command: list[str]
    inputs: list[InputFile]
    torch_version: str | None
    ranks: list[int]
    processes: list[int]
    clock: ClockInfo
    events: dict[str, KeyStats]
    unknown_event_keys: list[str]
    artifacts: dict[str, KeyStats]
    compile_ids: list[CompileIdEntry]
    #: Events whose compile-id fields were malformed (tlparse's "unknown").
    unknown_compile_id_events: int
    payloads: PayloadStats
    #: graphs/ summarised (since 1.11; absent before: no graphs/).
    graphs: GraphStats | None = None
    chromium_events: int
    raw_jsonl_events: int
    #: The process whose string table is the first line of raw.jsonl.
    string_table_process: int | None
    problems: ProblemSummary
    #: Known torch quirks met, recognised exactly (never problems, never a --strict failure); 1.4.
    notes: ProblemSummary = msgspec.field(default_factory=lambda: ProblemSummary(total=0, counts={}, first=[]))
    #: Output files, relative to the output folder, sorted (payloads/ summarised above).
    files: list[str]
