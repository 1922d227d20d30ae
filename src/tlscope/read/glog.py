"""The glog prefix before every envelope: the one place its grammar is written.

PyTorch's structured trace writes each envelope line as

    <L><MMDD> <HH:MM:SS>.<uuuuuu> <pid> <path>:<lineno>] <JSON envelope>

(level letter, month and day, local time with microseconds, process id, emitting module and
line). The reader, split and redact find envelopes with the patterns below; nothing else in
tlscope spells the grammar out (tests/test_layout.py checks that).
"""

from __future__ import annotations

import re

#: The prefix as the reader takes it apart (bytes; ASCII digits). Searched, not matched, so junk
#: before the prefix (e.g. torchrun's `[rank0]:`) is tolerated. Linear time: from any start the
#: path stops at the next `:`, and every later start holds one (its time), so no text is scanned
#: from more than one start. Process id and line number have at most 19 digits (they fit an
#: i64; a 5,000-digit "pid" made int() refuse it, Python's limit being 4,300 digits).
PREFIX = re.compile(
    rb"(?P<level>[VIWEC])(?P<month>\d\d)(?P<day>\d\d) "
    rb"(?P<hour>\d\d):(?P<minute>\d\d):(?P<second>\d\d)\.(?P<us>\d{6}) "
    rb"(?P<pid>\d{1,19}) (?P<path>[^:\n]+):(?P<lineno>\d{1,19})\] "
)

#: The start of what redaction treats as an envelope line (text): looser than PREFIX (padded
#: process ids, a path without `:line`), because a line some other reader takes for an envelope
#: must still get its payload's MD5 recomputed; a miss would leave the shared log inconsistent.
#: The prefix runs from this start to the first `]` after it, which must be followed by a space.
_LOOSE_START = re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ ")


def process_id(line: bytes) -> tuple[int, int] | None:
    """(process id, end of the prefix) of an envelope line, None when it has no prefix."""
    match = PREFIX.search(line)
    return None if match is None else (int(match.group("pid")), match.end())


def loose_prefix_end(line: str) -> int | None:
    """Where the envelope starts after redaction's looser prefix (see _LOOSE_START), or None.

    The same lines as the regex `_LOOSE_START[^\\]\\n]*\\] ` searched, in linear time: searched
    as one regex, each start scanned to the end of a line with no `] ` (1 MB of repeated
    prefixes took over a minute). Every start before a `]` reaches that same `]`, so when it is
    not followed by a space the search resumes after it, and each character is looked at once.
    """
    pos = 0
    while (start := _LOOSE_START.search(line, pos)) is not None:
        close = line.find("]", start.end())
        if close == -1:
            return None
        newline = line.find("\n", start.end(), close)
        if newline != -1:  # this start's prefix ends at the line's end: try the next line's
            pos = newline + 1
            continue
        if line.startswith(" ", close + 1):
            return close + 2
        pos = close + 1
    return None
