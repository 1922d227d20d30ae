"""`tlscope summary PATH [--json]`: did each compile work, where did it break, why did it
recompile, why is the log big, in 80 columns (rich) or as JSON; a big log's read shows a progress
bar on stderr when that is a terminal (commands/progress_bar.py), not while --json goes to a pipe.

PATH is a log, a folder of logs or a tlscope output folder; the figures are
`tlscope.load(PATH).summary()`'s, the same as compiles.json and log_size.json (a single log's
are computed in memory: `tlscope.api.summarise`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tlscope.api import summarise
from tlscope.commands.progress_bar import RanksBar, read_progress
from tlscope.terminal import json_text
from tlscope.write.run_options import user_code_patterns
from tlscope.write.summary_view import render


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tlscope summary",
        description="Compiles with status and time, distinct graph breaks, recompiles explained, slowest "
        "phases, cache hit rate, log size and problems.",
    )
    parser.add_argument(
        "path", type=Path, metavar="PATH", help="a log (.log, .gz), a folder of logs or an output folder"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--latest", action="store_true", help="PATH is a folder of logs: summarise its newest log")
    parser.add_argument("--rank", type=int, default=None, help="the rank of a multi-rank trace (default: the lowest)")
    parser.add_argument("--width", type=int, default=None, help="terminal width (default: the terminal's, 80 if none)")
    parser.add_argument(
        "--user-code",
        action="append",
        metavar="PATTERN",
        help="files that are your own code, as `tlscope --user-code` (applies when PATH is a log or logs)",
    )
    args = parser.parse_args(list(argv))
    # A big log takes a while: a bar on stderr when a person watches it, but not while --json goes
    # to a pipe (a script's run, whose terminal shows no answer to wait for).
    watched = sys.stderr.isatty() and not (args.json and not sys.stdout.isatty())
    mine = user_code_patterns(args.user_code)
    track = read_progress() if watched else None
    ranks = RanksBar()  # a job's logs: ranks parsed of the job's (on a terminal only)
    try:
        # A failure: one line, by tlscope.cli.
        summary = summarise(
            args.path,
            rank=args.rank,
            user_code=mine,
            latest=args.latest,
            track=track,
            on_ranks=ranks.on_ranks if watched else None,
            on_rank=ranks.on_rank,
        )
    finally:
        ranks.close()
    if args.json:
        sys.stdout.write(json_text(summary) + "\n")
    else:
        render(summary, str(args.path), width=args.width)
    return 0
