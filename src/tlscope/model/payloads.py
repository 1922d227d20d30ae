"""Typed payloads: the structure of the payloads tlscope reads (most payloads are text: graphs,
code; they pass through untouched). Decoded through the JSON boundary with a typed decoder
(`json_boundary.decode(data, msgspec.json.Decoder(type))`), which
checks the shape in the same pass; extra keys are ignored.
"""

from __future__ import annotations

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
