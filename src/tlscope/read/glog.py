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
#: before the prefix (e.g. torchrun's `[rank0]:`) is tolerated.
PREFIX = re.compile(
    rb"(?P<level>[VIWEC])(?P<month>\d\d)(?P<day>\d\d) "
    rb"(?P<hour>\d\d):(?P<minute>\d\d):(?P<second>\d\d)\.(?P<us>\d{6}) "
    rb"(?P<pid>\d+) (?P<path>[^:\n]+):(?P<lineno>\d+)\] "
)

#: What redaction treats as an envelope line (text, searched): looser than PREFIX (padded
#: process ids, a path without `:line`), because a line some other reader takes for an envelope
#: must still get its payload's MD5 recomputed; a miss would leave the shared log inconsistent.
LOOSE_PREFIX_TEXT = re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]\n]*\] ")


def process_id(line: bytes) -> tuple[int, int] | None:
    """(process id, end of the prefix) of an envelope line, None when it has no prefix."""
    match = PREFIX.search(line)
    return None if match is None else (int(match.group("pid")), match.end())
