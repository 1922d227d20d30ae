"""A Record is one envelope of the log, with its prefix, typed event and payload."""

from __future__ import annotations

from typing import Any

import msgspec

from tlscope.model.compile_id import CompileId
from tlscope.model.events import Event, Frame
from tlscope.model.payloads import ChromiumPayload


class GlogPrefix(msgspec.Struct, frozen=True):
    """The glog prefix `V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] `.

    The time is local time with no year and no time zone (see model.clock for the fit).
    """

    level: str
    month: int
    day: int
    hour: int
    minute: int
    second: int
    microsecond: int
    #: The process id (tlparse calls it `thread`).
    process: int
    #: The emitting module's path, without tlparse's leading space.
    pathname: str
    lineno: int

    @property
    def sort_key(self) -> tuple[int, int, int, int, int, int]:
        return (self.month, self.day, self.hour, self.minute, self.second, self.microsecond)


class Record(msgspec.Struct):
    """One log envelope: what every analysis and writer consumes. Never re-parse the log."""

    #: 1-based physical line number of the envelope line in its file.
    line: int
    prefix: GlogPrefix
    #: The event key ("" when the envelope has none).
    key: str
    #: The decoded envelope, untouched: unknown keys and fields pass through.
    envelope: dict[str, Any]
    #: The typed metadata, or None for unknown keys and metadata of the wrong shape.
    event: Event | None
    #: None when a compile-id field is malformed ("unknown" in tlparse).
    compile_id: CompileId | None
    #: The line's own rank, else the rank of its process, else the log's rank.
    rank: int | None
    #: True when this line belongs to another rank than the log's own.
    foreign: bool
    payload: bytes | None
    #: MD5 of the payload as tlscope computed it (hex), None without payload.
    payload_md5: str | None
    #: The string table of this record's process (shared, grows as the log is read).
    strings: dict[int, str]
    #: Bytes of the (uncompressed) input this record takes: its envelope line and payload lines,
    #: newlines and the blank lines inside its payload included.
    size: int = 0
    #: Physical lines of the input this record takes (its envelope line and payload lines).
    lines: int = 0
    #: A chromium_event's payload, decoded once by the reader; None for other records.
    chromium: ChromiumPayload | None = None

    @property
    def metadata(self) -> Any:
        return self.envelope.get(self.key)

    @property
    def payload_text(self) -> str:
        """The payload as text; undecodable bytes become U+FFFD (the problem is counted once)."""
        return "" if self.payload is None else self.payload.decode("utf-8", "replace")

    def frame_filename(self, frame: Frame) -> str:
        """Resolve an interned frame file name; `(unknown)` as tlparse does for a missing index."""
        if frame.uninterned_filename is not None:
            return frame.uninterned_filename
        if isinstance(frame.filename, str):
            return frame.filename
        if frame.filename is None:
            return "(unknown)"
        return self.strings.get(frame.filename, "(unknown)")
