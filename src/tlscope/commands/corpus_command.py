"""`tlscope corpus list` / `tlscope corpus path NAME`: the project's real traces, for viewers' tests."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from tlscope.format.errors import InputError
from tlscope.viewers.corpus import trace_path, traces


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope corpus", description="Real TORCH_TRACE logs made with torch (corpus/README.md says how)."
    )
    sub = parser.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="name, logs and size of each trace")
    listing.add_argument("--json", action="store_true", help="one JSON array (name, path, logs, size)")
    path = sub.add_parser("path", help="the folder of one trace (pass it to tlscope or tlscope serve)")
    path.add_argument("name", help="a name from `tlscope corpus list`")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    try:
        found = traces()
        if args.action == "path":
            print(trace_path(args.name))
        elif args.json:
            print(json.dumps([{"name": t.name, "path": str(t.path), "logs": t.logs, "size": t.size} for t in found]))
        else:
            for t in found:
                print(f"{t.name:<24} {t.logs:>2} log{'s' if t.logs > 1 else ' '} {t.size / 1024:>8.0f} KB")
    except KeyError:
        names = ", ".join(t.name for t in traces())
        raise InputError(f"no corpus trace {args.name!r} (one of: {names})") from None
    return 0
