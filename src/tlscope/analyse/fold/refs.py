"""A record's payload as compiles.json points at it (`PayloadRef`): the compile fold's and the
export fold's one rule for the payload file's name, its size and the event's lines."""

from __future__ import annotations

import msgspec

from tlscope.format.compiles import PayloadRef
from tlscope.model.events import GraphDump
from tlscope.model.record import Record


def payload_ref(record: Record, kind: str, raw_line: int | None) -> PayloadRef:
    """`record` as `kind` (its key, or an artifact's name), at raw.jsonl line `raw_line`; a
    graph_dump's reference carries its name (`name`)."""
    has = record.payload is not None and record.payload_md5 is not None
    event = record.event
    return PayloadRef(
        kind=kind,
        payload_filename=f"payloads/{record.payload_md5}.txt" if has else None,
        payload_size=len(record.payload) if has and record.payload is not None else None,
        raw_line=raw_line,
        log_line=record.line,
        name=event.name if isinstance(event, GraphDump) and event.name else msgspec.UNSET,
    )
