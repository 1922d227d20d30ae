"""JSON as tlparse writes it: 2-space pretty, `": "`, raw UTF-8, no trailing newline."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO


def pretty(value: Any, *, sort_keys: bool = True) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys, allow_nan=False)


def write_array(stream: TextIO, items: Iterable[Any], *, sort_keys: bool = True) -> int:
    """Stream a pretty JSON array item by item (memory bounded by one item); returns the count."""
    count = 0
    for item in items:
        body = pretty(item, sort_keys=sort_keys).replace("\n", "\n  ")
        stream.write(("[\n  " if count == 0 else ",\n  ") + body)
        count += 1
    stream.write("\n]" if count else "[]")
    return count
