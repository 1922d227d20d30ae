"""`tlscope serve [PATH|URL ...]`: serve traces, the JS client and viewers over HTTP (docs/SERVER.md).

The flags and the run are tlscope.serve.serve_cli (shared with `tlscope run`); the server is tlscope.serve.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tlscope.serve.serve_cli import add_server_flags, serve, start


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope serve",
        description="Serve traces (output folders, raw logs, folders of logs, store URLs), the JS client and "
        "viewers on a local HTTP server. Raw logs are parsed on first use into a cache. See docs/SERVER.md.",
    )
    parser.add_argument("sources", nargs="*", metavar="PATH|URL", help="traces to serve")
    add_server_flags(parser)
    parser.add_argument(
        "--user-code",
        action="append",
        metavar="PATTERN",
        help="files that are your own code, as `tlscope --user-code` (applies to the logs parsed here; "
        "default $TLSCOPE_USER_CODE)",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    server, sock = start(args, args.sources)
    return serve(server, sock, browser=not args.no_browser)
