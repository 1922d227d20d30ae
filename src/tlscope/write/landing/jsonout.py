"""JSON as tlparse writes it: 2-space pretty, `": "`, raw UTF-8, no trailing newline.

The text is exactly `json.dumps(value, indent=2, ensure_ascii=False, sort_keys=..., allow_nan=False)`
(Python's float repr, not tlparse's), made faster: with `indent` set, `json` falls back to its
pure-Python encoder, which spent most of the landing page's time on the combined chromium
events. Here the C encoder writes compact JSON and `msgspec.json.format` indents it; that
reformatter copies every number and string token verbatim, so the text is the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import msgspec

_COMPACT = {
    sort_keys: json.JSONEncoder(ensure_ascii=False, sort_keys=sort_keys, allow_nan=False, separators=(",", ":"))
    for sort_keys in (False, True)
}


def pretty(value: Any, *, sort_keys: bool = True) -> str:
    compact = _COMPACT[sort_keys].encode(value)
    try:
        data = compact.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a hostile escape) has no UTF-8 form: keep json's own text for it.
        return _pretty_slow(value, sort_keys=sort_keys)
    return msgspec.json.format(data, indent=2).decode("utf-8")


def _pretty_slow(value: Any, *, sort_keys: bool) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys, allow_nan=False)


def _python_float(text: str) -> msgspec.Raw:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("Number out of range")  # msgspec's own words for it
    return msgspec.Raw(repr(value).encode())


#: Decodes JSON for `array_body`: every float becomes raw JSON text of its Python repr, so msgspec
#: writes it as json does (msgspec's own float text differs in the exponent range: 0.00001 for
#: 1e-05, 1e16 for 1e+16). Strings, integers and key order msgspec writes as json does.
JSON_AS_PYTHON = msgspec.json.Decoder(float_hook=_python_float)
_SORTED = msgspec.json.Encoder(order="sorted")


def array_body(items: Sequence[Any]) -> bytes:
    """`pretty(items)` (sorted keys) without its brackets, in UTF-8: the items as elements of an array.

    `items` must hold no float objects: decode them with JSON_AS_PYTHON. Encoded by msgspec, ~5x
    faster than json for the long strings of chromium events (cache-key components).
    "[\n  a,\n  b\n]" gives "\n  a,\n  b": bodies of several lists joined with "," between "["
    and "\n]" are the pretty array of all their items, so a big array can be written a list at
    a time. An empty list gives b"".
    """
    if not items:
        return b""
    return msgspec.json.format(_SORTED.encode(items), indent=2)[1:-2]
