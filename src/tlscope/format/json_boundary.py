"""The JSON decode boundary: the one way tlscope decodes JSON that came from a log.

Envelopes, JSON payloads (chromium events, json artifacts, torch_version, guards, provenance
mappings), the lines `split` and `redact` look into, and the files a parse wrote from them
(which multi-rank reads back) are all untrusted. Everything that decodes them calls `decode`,
which accepts exactly what tlparse's JSON parser (serde_json) accepts in two respects:

* **Nesting depth.** serde_json refuses a document nested 128 levels deep (its recursion limit);
  so does `decode` (MAX_DEPTH = 127 levels allowed). Without a bound, ~1,000 nested `[` in a
  1 KB line made msgspec raise RecursionError, and anything that walked or re-encoded a value
  nested a little less deep could raise it later, far from the log line.
* **Numbers.** A number outside the range of a double is an error (serde_json: "number out of
  range"). msgspec already refuses such floats (`1e400`) but returns such integers as Python
  ints, on which `ts / 1e6` or a float conversion raised OverflowError mid-report.

Both checks cost nothing on ordinary input: a document with at most MAX_DEPTH brackets cannot
be nested deeper than that, and an integer beyond double range has at least 309 digits, so the
decoded value is walked only when the text has many brackets or such a digit run (0.4% of the
envelopes of a real 136 MB trace), and the walk is an explicit stack, never recursion. Without
such a digit run only the depth can fail, and the walk visits containers alone, a level at a
time (`_check_depth`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import msgspec

from tlscope.model.payloads import ChromiumPayload

if TYPE_CHECKING:
    from tlscope.model.record import Record

#: Deepest nesting accepted: serde_json's recursion limit (128) refuses the 128th level.
MAX_DEPTH = 127
#: Integers beyond this are outside the range of a double (they have at least 309 digits).
_FLOAT_MAX_INT = int(sys.float_info.max)
#: A run of 309 digits is the only text an out-of-range integer can be. It is looked for as 309
#: zeros in the text with every digit made a zero: a translation and a substring search, both at
#: memory speed (a regex for the run read digit-dense payloads at ~60 MB/s, most of this
#: boundary's cost on a big trace).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 309
#: Every `_STRIDE`th byte is looked at first: 309 digits in a row hold at least 10 of them, so text
#: whose sample has no 10 digits in a row has no such run (a 73 KB chromium event of code text,
#: dense in digits: 4 µs, against 42 µs for the whole text translated). Each place the sample
#: does have them is then checked in the text around it, a few at most, then the whole text.
_STRIDE = 30
_SAMPLE_RUN = b"0" * (len(_LONG_RUN) // _STRIDE)
_WINDOWS = 8
#: The types a decoded JSON value's leaves have: a list or object holding only these (a list of
#: 637 code strings in a big chromium event) adds no level, found without a Python loop turn each.
_LEAVES = frozenset({str, int, float, bool, type(None)})
#: Text shorter than this can hold neither: a value nested MAX_DEPTH + 1 deep is that many
#: opening brackets and as many closing ones.
_SHORT = 2 * (MAX_DEPTH + 1)
#: From this size on, the brackets are found one by one (at most MAX_DEPTH + 1 `find` calls,
#: ~13 µs) rather than counted (two passes over every byte, ~20 µs at this size).
_FIND_FROM = 16 * 1024

_PLAIN = msgspec.json.Decoder()


class JsonError(ValueError):
    """Text that is not JSON tlscope accepts; the message says why (one line)."""


def decode(data: bytes | str, decoder: msgspec.json.Decoder[Any] = _PLAIN) -> Any:
    """The value of JSON text `data`, or JsonError (malformed, bad UTF-8, too deep, number out of range).

    `decoder` is a msgspec JSON decoder to decode with (e.g. one with a float hook); the
    boundary's checks apply whatever it is.
    """
    try:
        value = decoder.decode(data)
    except RecursionError:
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels") from None
    except (msgspec.DecodeError, UnicodeError) as err:
        # msgspec raises UnicodeDecodeError, not DecodeError, for bad bytes inside a string, and
        # UnicodeEncodeError for text holding lone surrogates (redact's undecodable bytes).
        raise JsonError(str(err)) from None
    size = len(data)
    if size < _SHORT:  # too short for MAX_DEPTH + 1 levels (each an opening and a closing
        return value  # bracket) or a 309-digit run: most envelopes and chromium events
    if size >= len(_LONG_RUN) and _may_hold_long_int(data):
        check(value)
    elif _may_nest_deep(data) and isinstance(value, (list, dict)):
        _check_depth(value)
    return value


def _may_nest_deep(data: bytes | str) -> bool:
    if isinstance(data, str):
        return data.count("[") + data.count("{") > MAX_DEPTH
    if len(data) >= _FIND_FROM:
        return _brackets_beyond_depth(data)
    # Text dense in brackets (code in strings) passes on its `[` alone: one pass, not two. Not
    # `translate` (one pass for both): it makes a copy the size of the text, a peak of megabytes
    # on a big payload.
    opening = data.count(b"[")
    return opening > MAX_DEPTH or opening + data.count(b"{") > MAX_DEPTH


def _brackets_beyond_depth(data: bytes) -> bool:
    """Whether `data` holds more than MAX_DEPTH opening brackets, each found by `find`, which
    stops at the one past MAX_DEPTH: text dense in brackets (a 73 KB chromium event of code) is
    decided in its first few KB, and text with few is passed over at memchr's speed. `count`
    looks at every byte in turn, twice (48 + 9 µs on that event, 24 µs on a 38 KB
    compilation_metrics envelope, against 13 and 5 µs)."""
    left = MAX_DEPTH + 1
    for bracket in (b"[", b"{"):
        at = data.find(bracket)
        while at != -1:
            left -= 1
            if not left:
                return True
            at = data.find(bracket, at + 1)
    return False


def _may_hold_long_int(data: bytes | str) -> bool:
    if len(data) < len(_LONG_RUN):
        return False
    if isinstance(data, str):
        # UTF-8 keeps ASCII digits as they are and puts none inside a multi-byte character.
        data = data.encode("utf-8", "surrogatepass")
    sample = data[::_STRIDE].translate(_DIGITS_TO_ZERO)
    at = sample.find(_SAMPLE_RUN)
    for _ in range(_WINDOWS):
        if at == -1:
            return False
        # A run holding sampled byte `at` (and the 9 after it) lies within a run's length of it.
        middle = at * _STRIDE
        if _LONG_RUN in data[max(0, middle - len(_LONG_RUN)) : middle + len(_LONG_RUN)].translate(_DIGITS_TO_ZERO):
            return True
        at = sample.find(_SAMPLE_RUN, at + 1)
    return at != -1 and _LONG_RUN in data.translate(_DIGITS_TO_ZERO)


def _check_depth(value: list[Any] | dict[str, Any]) -> None:
    """`check` for a value that holds no integer beyond double range (its text has no run of 309
    digits), so only its depth can fail: one level at a time, containers only, never an int.

    Most documents that get here are big ones with many brackets (a provenance artifact of
    megabytes), not deep ones; `check`'s walk visited every number and pushed a tuple per child.
    """
    level: list[Any] = [value]
    depth = 0
    while level:
        if depth >= MAX_DEPTH:
            raise JsonError(f"nested deeper than {MAX_DEPTH} levels")
        below: list[Any] = []
        for node in level:
            children = node.values() if isinstance(node, dict) else node
            if not _LEAVES.issuperset(map(type, children)):
                below += [child for child in children if isinstance(child, (list, dict))]
        level = below
        depth += 1


def check(value: Any) -> None:
    """JsonError if decoded `value` nests deeper than MAX_DEPTH or holds an integer beyond double range."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            if depth >= MAX_DEPTH:
                raise JsonError(f"nested deeper than {MAX_DEPTH} levels")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict, int)))
        elif isinstance(node, int) and not -_FLOAT_MAX_INT <= node <= _FLOAT_MAX_INT:
            raise JsonError("number out of range")


def chromium_payload(payload: bytes | None) -> ChromiumPayload:
    """A chromium_event's payload decoded through the boundary (a missing payload is not JSON)."""
    try:
        return ChromiumPayload(decode(payload or b""))
    except JsonError as err:
        return ChromiumPayload(None, str(err))


def chromium_of(record: Record) -> ChromiumPayload:
    """A chromium_event record's payload as decoded once by the reader (`Record.chromium`), which
    the format writer and the compile fold both read; decoded here for a Record made without the
    reader, so both see the same value either way."""
    return record.chromium if record.chromium is not None else chromium_payload(record.payload)
