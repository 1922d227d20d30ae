"""`python -m tlscope.serve.parsejob SRC OUT [PATTERN...]`: one cache parse, in its own process
(PATTERNs: `serve --user-code`'s, serve/traces.py puts them in the cache key too).

The server runs each parse of a raw log in a child process: the event loop keeps answering (no
GIL held by a parse), a parse's memory goes back to the OS when it ends, and a crash in it
cannot take the server down. Progress goes to stdout as JSON lines (serve/progress.py):
`{"bytes": DONE, "total": SIZE}` (bytes of the log read, of its size), or for a job
`{"ranks_total": N}` before its ranks start and `{"rank_done": N}` once as each rank finishes, in
the order they finish; errors to stderr, one line, and the exit status is the parse command's (0
ok, 1 input or output error).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tlscope.format.errors import InputError, OutputError, os_error_text
from tlscope.model.record import Record
from tlscope.pipeline.parse import parse
from tlscope.pipeline.single import ReadProgress
from tlscope.serve.progress import ENCODER, Progress
from tlscope.write.run_options import ParseOptions

_EVERY = 0.25  # seconds between progress lines


_LOCK = threading.Lock()  # ranks finish on a pool's thread: one line at a time


def _say(line: Progress) -> None:
    with _LOCK:
        sys.stdout.buffer.write(ENCODER.encode(line) + b"\n")
        sys.stdout.flush()


def _track(records: Iterable[Record], reader: ReadProgress) -> Iterator[Record]:
    total = reader.path.stat().st_size
    last = 0.0
    for i, record in enumerate(records):
        if i % 1024 == 0 and time.monotonic() - last > _EVERY:
            last = time.monotonic()
            _say(Progress(bytes=reader.bytes_read, total=total))
        yield record
    _say(Progress(bytes=total, total=total))


def _rank_done(rank: int) -> None:
    _say(Progress(rank_done=rank))


def _ranks(ranks: Sequence[int]) -> None:
    _say(Progress(ranks_total=len(ranks)))


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m tlscope.serve.parsejob SRC OUT [PATTERN...]", file=sys.stderr)
        return 2
    src, out, patterns = Path(argv[0]), Path(argv[1]), tuple(argv[2:])
    options = ParseOptions(user_code=patterns)
    command = ["tlscope", "serve", str(src), *(f"--user-code={p}" for p in patterns)]
    try:
        parse(src, out, options, overwrite=True, command=command, track=_track, on_rank=_rank_done, on_ranks=_ranks)
    except (InputError, OutputError) as err:
        print(f"{src}: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(os_error_text(err), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
