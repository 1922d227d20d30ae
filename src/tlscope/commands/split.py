"""`tlscope split FILE -o DIR`: one log per rank out of a log that holds several ranks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tlscope.format.errors import InputError
from tlscope.pipeline.single import no_events_text
from tlscope.read.reader import first_event
from tlscope.read.split import split_log
from tlscope.write.outdir import OutputDir


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tlscope split",
        description="Split a log holding several ranks into one log per rank "
        "(dedicated_log_torch_trace_rank_N.log), ready for `tlscope DIR --all-ranks-html`.",
    )
    parser.add_argument("log", type=Path, metavar="FILE", help="a log file or .gz log")
    parser.add_argument("-o", dest="out", type=Path, required=True, metavar="DIR", help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace DIR if it exists")
    args = parser.parse_args(list(argv))
    if not args.log.is_file():
        raise InputError("is not a file", path=args.log)
    out = OutputDir(args.out, overwrite=args.overwrite)
    out.check()  # an existing OUT is refused before the log is read, as by `parse`
    found, lines = first_event(args.log)
    if found is None:
        # Nothing to split: a copy of the file in unranked.log would look like a split log.
        raise InputError(f"{no_events_text(str(args.log), lines)} Nothing written.")
    with out:
        written = split_log(args.log, out.root)
    for name, lines in written.items():
        print(f"{args.out / name}: {lines} lines")
    return 0
