"""JSON as tlparse writes it: 2-space pretty, `": "`, raw UTF-8, no trailing newline.

The text is exactly `json.dumps(value, indent=2, ensure_ascii=False, sort_keys=..., allow_nan=False)`
(Python's float repr, not tlparse's), made faster: with `indent` set, `json` falls back to its
pure-Python encoder, which spent most of the landing page's time on the combined chromium
events. Here the C encoder writes compact JSON and `msgspec.json.format` indents it; that
reformatter copies every number and string token verbatim, so the text is the same.
"""

from __future__ import annotations

import json
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


def array_body(items: Sequence[Any], *, sort_keys: bool = True) -> bytes:
    """`pretty(items)` without its brackets, as UTF-8: each item as an element of an outer array.

    "[\n  a,\n  b\n]" gives "\n  a,\n  b": bodies of several lists joined with "," between "["
    and "\n]" are the pretty array of all their items, so a big array can be written a list at
    a time. An empty list gives b"".
    """
    if not items:
        return b""
    return pretty(list(items), sort_keys=sort_keys)[1:-2].encode("utf-8")
