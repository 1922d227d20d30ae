"""What a parse child process (serve/parsejob.py) tells the server on its stdout: one JSON line each.

A typed line, not text a person reads: the server counts a job's ranks from `rank_done`, one line
per finished rank, so no change of wording in what the parse prints can change the count.
"""

from __future__ import annotations

import msgspec


class Progress(msgspec.Struct, omit_defaults=True):
    """One line of a parse's progress."""

    #: Bytes of the log read so far, and its size (a single log).
    bytes: int | None = None
    total: int | None = None
    #: A rank of a job whose parse just finished (one line per rank, in the order they finish).
    rank_done: int | None = None
    #: How many ranks the job has (one line, before any rank's parse starts).
    ranks_total: int | None = None


ENCODER = msgspec.json.Encoder()
DECODER = msgspec.json.Decoder(Progress)
