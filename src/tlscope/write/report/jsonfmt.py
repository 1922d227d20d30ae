"""JSON text as tlparse (serde_json) writes it: sorted keys, ryu floats, no trailing newline.

Python's `json` prints floats with `repr` (`1e-05`, `1e+16`), serde_json with ryu's "pretty"
style (`0.00001`, `1e16`); the JSON artifact files must match byte for byte. msgspec prints
floats exactly as serde does (checked on 300,000 random doubles in tests/test_jsonfmt.py) and
parses and pretty-prints in C, about 4x faster than `json` here; the one thing it does
differently is integers beyond i64/u64, which serde_json reads as floats. Those, and strings
msgspec cannot encode (lone surrogates from undecodable names), take the exact slow walk.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import msgspec

from tlscope.format.json_boundary import decode

_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1


def ryu(value: float) -> str:
    """serde_json's float text: `1.0`, `0.00003910064697265625`, `1e16`, `2.5e-7`."""
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    dec = Decimal(repr(abs(value))).normalize()
    _, digit_tuple, exp = dec.as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    n = len(digits)
    kk = n + exp  # value = 0.digits * 10^kk
    if exp >= 0 and kk <= 16:
        text = digits + "0" * exp + ".0"
    elif 0 < kk <= 16:
        text = digits[:kk] + "." + digits[kk:]
    elif -5 < kk <= 0:
        text = "0." + "0" * (-kk) + digits
    else:
        mantissa = digits if n == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{kk - 1}"
    return sign + text


def number(value: Any) -> str:
    """A JSON number as serde prints it; integers outside i64/u64 became floats there."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if _I64_MIN <= value <= _U64_MAX:
            return str(value)
        return ryu(float(value))
    if isinstance(value, float):
        return ryu(value)
    return str(value)


#: Any run of 19 digits: every integer outside i64/u64 has at least that many. A match inside a
#: string only sends the value down the slow (still exact) path. Looked for as 19 zeros once
#: every digit is made a zero (a translation and a substring search at memory speed: a regex
#: for the run read digit-dense artifacts at ~100 MB/s, two thirds of these pages' time).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19


def loads(text: str | bytes) -> Any:
    """Parse like serde_json: NaN, Infinity, lone surrogate escapes, numbers beyond double range
    and nesting 128 deep are errors (JsonError, a ValueError): the JSON decode boundary's rules."""
    return decode(text)


def dumps_pretty(value: Any) -> str:
    """serde_json::to_string_pretty with sorted keys: 2-space indent, `[]`/`{}` when empty."""
    fast = _pretty_fast(value)
    return fast.decode("utf-8") if fast is not None else _dumps_pretty_walk(value)


def pretty_bytes(value: Any) -> bytes:
    """dumps_pretty as UTF-8 bytes (surrogates from undecodable names kept as they were)."""
    fast = _pretty_fast(value)
    return fast if fast is not None else _dumps_pretty_walk(value).encode("utf-8", "surrogateescape")


def _pretty_fast(value: Any) -> bytes | None:
    try:
        compact = msgspec.json.encode(value, order="sorted")
    except (msgspec.EncodeError, UnicodeEncodeError, OverflowError, RecursionError, TypeError):
        return None
    if _LONG_DIGITS in compact.translate(_DIGITS_TO_ZERO) and _has_serde_only_numbers(value):
        return None
    return msgspec.json.format(compact, indent=2)


def _has_serde_only_numbers(value: Any) -> bool:
    """True if a float prints differently in Python (`1e-05`, `1e+16`) or an int is beyond i64/u64."""
    work = [value]
    while work:
        node = work.pop()
        if isinstance(node, dict):
            work.extend(node.values())
        elif isinstance(node, list):
            work.extend(node)
        elif isinstance(node, float):
            if "e" in repr(node) or node != node or node in (math.inf, -math.inf):
                return True
        elif isinstance(node, int) and not isinstance(node, bool) and not _I64_MIN <= node <= _U64_MAX:
            return True
    return False


def _dumps_pretty_walk(value: Any) -> str:
    out: list[str] = []
    # Explicit stack instead of recursion: a hostile artifact may nest arbitrarily deep.
    work: list[tuple[Any, int] | str] = [(value, 0)]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, depth = item
        if isinstance(node, dict) and node:
            pad = "  " * (depth + 1)
            parts: list[tuple[Any, int] | str] = ["{\n"]
            for i, key in enumerate(sorted(node)):
                parts.append(("," if i else "") + ("\n" if i else "") + pad + _string(key) + ": ")
                parts.append((node[key], depth + 1))
            parts.append("\n" + "  " * depth + "}")
            work.extend(reversed(parts))
        elif isinstance(node, list) and node:
            pad = "  " * (depth + 1)
            parts = ["[\n"]
            for i, elem in enumerate(node):
                parts.append(("," if i else "") + ("\n" if i else "") + pad)
                parts.append((elem, depth + 1))
            parts.append("\n" + "  " * depth + "]")
            work.extend(reversed(parts))
        else:
            out.append(_scalar(node))
    return "".join(out)


def _scalar(node: Any) -> str:
    if node is None:
        return "null"
    if isinstance(node, str):
        return _string(node)
    if isinstance(node, dict):
        return "{}"
    if isinstance(node, list):
        return "[]"
    return number(node)


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
