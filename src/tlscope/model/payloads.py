"""Typed payloads: the structure of the payloads tlscope reads (most payloads are text: graphs,
code; they pass through untouched). Decoded through the JSON boundary with a typed decoder
(`json_boundary.decode(data, msgspec.json.Decoder(type))`), which
checks the shape in the same pass; extra keys are ignored.
"""

from __future__ import annotations

from typing import Any

import msgspec


class GuardEntry(msgspec.Struct):
    """One guard of a `dynamo_guards` payload (older torch): `{code, stack, user_stack}`."""

    code: str


#: A `dynamo_guards` payload.
DynamoGuardsPayload = list[GuardEntry]


class TorchVersionInfo(msgspec.Struct, kw_only=True):
    """The `torch_version` artifact's payload as an object (newer torch; older ones log a string)."""

    pytorch_version: str | None = None


#: A `torch_version` artifact's payload.
TorchVersionPayload = str | TorchVersionInfo


class ChromiumPayload(msgspec.Struct, frozen=True):
    """A `chromium_event`'s payload (one Chrome trace event), decoded once, by the reader: the format
    writer (chromium_events.json, timeline.bin, the clock fit) and the compile fold (compile phases)
    read this value, never the payload's JSON text again."""

    #: The payload's JSON value as the boundary decodes it (an object for a real event).
    value: Any
    #: Why the payload is not JSON tlscope accepts (the boundary's message); None when it is.
    error: str | None = None
