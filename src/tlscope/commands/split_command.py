"""`tlscope split FILE -o DIR`: one log per rank out of a log that holds several ranks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tlscope.pipeline.rewrite import split


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
    written = split(args.log, args.out, overwrite=args.overwrite)
    for name, lines in written.items():
        print(f"{args.out / name}: {lines} lines")
    return 0
