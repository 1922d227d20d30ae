"""raw.jsonl: one event a line, the envelope's keys plus the fields tlscope adds (FORMAT.md section 3).

What a line means is decided here, once: which key is its event key, and how its compile id
displays. The events API (serve), `tlscope.load` and the tests' oracle call these; the JS
client's `lib/format.js` renders the same (a conformance test holds them together).
"""

from __future__ import annotations

from typing import Any

import msgspec

from tlscope.model.compile_id import display_of_envelope

#: Envelope keys that are context, not the event (PyTorch reserves these names).
CONTEXT_KEYS = frozenset(
    {
        "rank",
        "compiled_autograd_id",
        "frame_id",
        "frame_compile_id",
        "attempt",
        "has_payload",
        "stack",
        "severity",
        "timestamp",
        "pathname",
        "thread",
    }
)


class RawEventFields(msgspec.Struct, kw_only=True):
    """The fields tlscope adds to each raw.jsonl event line, beside the envelope's own keys."""

    #: ISO-8601 local time of the glog prefix; year (and UTC offset) fitted, see manifest `clock`.
    timestamp: str
    #: Process id from the glog prefix (tlparse calls it `thread`).
    process: int
    #: Emitting module path from the glog prefix (no leading space).
    pathname: str
    #: Line number in the emitting module.
    lineno: int
    #: 1-based line number of the envelope in the input log.
    log_line: int
    #: `payloads/<md5>.txt`, present only when the event has a payload; md5 computed by tlscope.
    payload_filename: str | msgspec.UnsetType = msgspec.UNSET
    #: Payload size in bytes, present exactly when `payload_filename` is.
    payload_size: int | msgspec.UnsetType = msgspec.UNSET


#: Fields tlscope adds to each raw.jsonl event line (see FORMAT.md for each).
RAW_ADDED_FIELDS: tuple[str, ...] = RawEventFields.__struct_fields__
#: Keys of a raw.jsonl line that are not its event key.
NOT_EVENT_KEYS = CONTEXT_KEYS | frozenset(RAW_ADDED_FIELDS)
#: What `event_key` says of a line with no event key (as log_size.json's `by_event_key`).
NO_EVENT_KEY = "(none)"


def event_key(event: dict[str, Any]) -> str:
    """The one key of a raw.jsonl event that is neither context nor added by tlscope."""
    return next((k for k in event if k not in NOT_EVENT_KEYS), NO_EVENT_KEY)


def artifact_name(event: dict[str, Any]) -> str | None:
    """The `name` of an `artifact` event, None for any other."""
    artifact = event.get("artifact")
    name = artifact.get("name") if isinstance(artifact, dict) else None
    return name if isinstance(name, str) else None


def display_compile_id(event: dict[str, Any]) -> str:
    """FORMAT.md section 7's display form of a raw.jsonl event's compile id.

    A runtime event with no attempt displays as attempt 0; a malformed id (`"frame_id": "x"`, -1,
    2^32) as `unknown`: it belongs to no compile id (the manifest counts it apart), so it is not
    made into one such as `[-/1]`. The JS client's `compileIdOf` answers the same
    (tests/conformance/cases.json).
    """
    return display_of_envelope(event)
