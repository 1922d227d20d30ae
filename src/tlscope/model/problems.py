"""Parse problems: counted by kind, the first few of each kept with their line numbers.

A bad line is never a crash: the reader records a Problem and moves on. `--strict` turns any
recorded problem into a failure that names the first one.

A note is not a problem: a known quirk of torch's own logging, recognised exactly (NOTE_DOCS;
docs/DEVIATIONS.md), that every log of that torch version shows. Notes are kept beside the
problems (`Problems.notes`, manifest.json `notes`) and never fail `--strict`.
"""

from __future__ import annotations

from collections import Counter
from enum import Enum

import msgspec


class ProblemKind(str, Enum):
    """Every kind of problem tlscope reports; the value is the name used in manifest.json."""

    BLANK_LINE = "blank_line"
    INVALID_UTF8 = "invalid_utf8"
    GLOG_PREFIX = "glog_prefix"
    ORPHAN_PAYLOAD = "orphan_payload"
    INVALID_JSON = "invalid_json"
    TRUNCATED_LINE = "truncated_line"
    NOT_AN_OBJECT = "not_an_object"
    LINE_TOO_LONG = "line_too_long"
    NO_EVENT_KEY = "no_event_key"
    MULTIPLE_EVENT_KEYS = "multiple_event_keys"
    SCHEMA = "schema"
    BAD_COMPILE_ID = "bad_compile_id"
    BAD_RANK = "bad_rank"
    OTHER_RANK = "other_rank"
    PAYLOAD_MD5 = "payload_md5"
    MISSING_PAYLOAD = "missing_payload"
    BAD_STRING_TABLE = "bad_string_table"
    KEY_CONFLICT = "key_conflict"
    BAD_PAYLOAD_JSON = "bad_payload_json"
    REPORT = "report"
    CORRUPT_INPUT = "corrupt_input"
    BAD_GRAPH = "bad_graph"


#: Problems of a file tlscope writes beside the answers (the HTML report, graphs/), not of reading
#: the log and computing its answers: `tlscope summary` (which writes neither) does not count them,
#: for a log or an output folder alike (manifest.json still does).
OUTPUT_KINDS: frozenset[ProblemKind] = frozenset({ProblemKind.REPORT, ProblemKind.BAD_GRAPH})


#: One line for FORMAT.md and `--help`: what each kind means.
PROBLEM_DOCS: dict[ProblemKind, str] = {
    ProblemKind.BLANK_LINE: "An empty line (skipped; real logs have none, payload blank lines are a lone tab).",
    ProblemKind.INVALID_UTF8: "A line that is not valid UTF-8 (skipped, or payload decoded with replacement).",
    ProblemKind.GLOG_PREFIX: "A line with no glog prefix `Lmmdd hh:mm:ss.uuuuuu pid path:line] ` (skipped).",
    ProblemKind.ORPHAN_PAYLOAD: "A tab-indented payload line with no envelope before it (skipped).",
    ProblemKind.INVALID_JSON: "The envelope after the prefix is not valid JSON (line skipped).",
    ProblemKind.TRUNCATED_LINE: "The last line ends without a newline and does not parse (cut-off log).",
    ProblemKind.NOT_AN_OBJECT: "The envelope is valid JSON but not an object (line skipped).",
    ProblemKind.LINE_TOO_LONG: "A line longer than the reader's limit (skipped without being held in memory).",
    ProblemKind.NO_EVENT_KEY: "The envelope has only context fields and no event key.",
    ProblemKind.MULTIPLE_EVENT_KEYS: "The envelope has several event keys (the first is used).",
    ProblemKind.SCHEMA: "A known event's metadata has the wrong shape (kept raw, untyped).",
    ProblemKind.BAD_COMPILE_ID: "A compile-id field is present but not a non-negative integer.",
    ProblemKind.BAD_RANK: "The `rank` field is present but not a non-negative integer.",
    ProblemKind.OTHER_RANK: "A line of another rank than the log's own (a muxed log).",
    ProblemKind.PAYLOAD_MD5: "A payload whose MD5 differs from the envelope's `has_payload`.",
    ProblemKind.MISSING_PAYLOAD: "`has_payload` is set but no payload lines follow (or it is not a string).",
    ProblemKind.BAD_STRING_TABLE: "A `str` entry that is not `[string, index]`.",
    ProblemKind.KEY_CONFLICT: "The envelope already has a key tlscope adds to raw.jsonl (line left out of raw.jsonl).",
    ProblemKind.BAD_PAYLOAD_JSON: "A payload that must be JSON is not: a chromium_event, or an artifact that "
    "declares `encoding: json` (but not torch's bare-text recompile reason: a note, see below).",
    ProblemKind.REPORT: "The HTML report could not render an event (e.g. guards that are not JSON, unknown encoding).",
    ProblemKind.CORRUPT_INPUT: "A .gz input that is cut off or corrupt: reading stops there, earlier records are kept.",
    ProblemKind.BAD_GRAPH: "A payload holding a `class ...(torch.nn.Module):` block that cannot be read as an FX "
    "graph: its `graphs/<md5>.json` says why, its text stays in payloads/.",
}


class NoteKind(str, Enum):
    """Every known torch quirk tlscope recognises; the value is the name used in manifest.json."""

    RECOMPILE_REASONS_TEXT = "recompile_reasons_text"


#: One line for FORMAT.md: what each note means.
NOTE_DOCS: dict[NoteKind, str] = {
    NoteKind.RECOMPILE_REASONS_TEXT: "A `recompile_reasons` artifact declared `encoding: json` that holds one "
    "reason as bare text (`0/0: tensor 'x' size mismatch ...`): torch writes the reason list's only item "
    "unquoted when a frame has one earlier cache entry (torch 2.x, `guards.py`). Read as that one reason.",
}


class Problem(msgspec.Struct, frozen=True):
    kind: ProblemKind | NoteKind
    line: int
    message: str
    #: The input file, when a run reads several.
    file: str | None = None


class Problems:
    """Counts problems by kind and keeps the first `keep_per_kind` of each kind."""

    def __init__(self, keep_per_kind: int = 20) -> None:
        self.counts: Counter[ProblemKind | NoteKind] = Counter()
        self.first: list[Problem] = []
        self._keep = keep_per_kind
        #: The known torch quirks met (never counted in `total`, never a `--strict` failure).
        self.notes: Problems | None = None

    def note(self, kind: NoteKind, line: int, message: str, file: str | None = None) -> None:
        """Record a known torch quirk (see NoteKind) beside the problems."""
        if self.notes is None:
            self.notes = Problems(self._keep)
        self.notes.add(kind, line, message, file)

    def add(self, kind: ProblemKind | NoteKind, line: int, message: str, file: str | None = None) -> None:
        self.counts[kind] += 1
        if self.counts[kind] <= self._keep:
            self.first.append(Problem(kind, line, message, file))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def earliest(self) -> Problem | None:
        """The problem with the lowest line number (what `--strict` names)."""
        return min(self.first, key=lambda p: p.line, default=None)
