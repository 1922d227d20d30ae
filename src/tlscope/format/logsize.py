"""log_size.json: where the input's bytes went, every byte attributed.

These Structs are the file's schema (docs/schema/log_size.schema.json is generated from them);
analyse/logsize_fold.py fills them and FORMAT.md documents them.
"""

from __future__ import annotations

import msgspec


class SizeStats(msgspec.Struct, kw_only=True):
    """Bytes and physical lines of the input taken by some events (envelope and payload lines)."""

    bytes: int = 0
    lines: int = 0
    #: Events counted (0 for `other`).
    events: int = 0
    #: Of `bytes`, the payloads' own bytes (without PyTorch's tab and newline per line).
    payload_bytes: int = 0


class BigPayload(msgspec.Struct, kw_only=True):
    """One of the biggest payloads of the log, and what makes PyTorch write it."""

    #: The event key, or for an `artifact` its name.
    kind: str
    compile_id: str
    bytes: int
    log_line: int
    #: `payloads/<md5>.txt`, or null for a chromium_event (its payload is in chromium_events.json).
    payload_filename: str | None = None
    #: The setting that produces this kind of payload, and how to get less of it.
    setting: str


class SettingSize(msgspec.Struct, kw_only=True):
    """The bytes due to one setting (every event kind it produces)."""

    setting: str
    bytes: int
    kinds: list[str]


class LogSize(msgspec.Struct, kw_only=True):
    """Top-level object of log_size.json.

    Invariant: the `bytes` of `by_event_key` plus `other.bytes` equal `total_bytes`, and the same
    for lines; `by_compile_id` and `by_module` also sum to `total_bytes - other.bytes`.
    """

    format: str = "tlscope"
    format_version: int
    format_minor: int
    #: The input log (the first one read), as manifest `inputs[0].path`.
    path: str
    #: Bytes of the log as text (after gzip decompression for a `.gz` input).
    total_bytes: int
    #: Physical lines of the log as text.
    total_lines: int
    #: Size of the file on disk (the compressed size for a `.gz` input).
    file_bytes: int
    compressed: bool
    #: Per event key (`(none)` for an envelope with no event key), biggest first.
    by_event_key: dict[str, SizeStats]
    #: Lines that are not part of any event: unparsable lines, orphan payload lines, blank lines, over-long lines.
    other: SizeStats
    #: Per `artifact` name, biggest first.
    by_artifact: dict[str, SizeStats]
    #: Per compile id (display form; `unknown` for malformed ids), biggest first.
    by_compile_id: dict[str, SizeStats]
    #: Per logging module (the glog prefix's path, e.g. `torch/_dynamo/utils.py`), biggest first.
    by_module: dict[str, SizeStats]
    #: Per setting that produced the events, biggest first.
    by_setting: list[SettingSize]
    #: The biggest payloads, biggest first (at most 20).
    biggest_payloads: list[BigPayload]
