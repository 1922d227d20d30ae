"""`tlscope redact LOG ...`: rewrite path prefixes, user and host names in a log (see read/redact.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tlscope.pipeline.rewrite import redact, redactor


def _parse_map(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old:
        raise argparse.ArgumentTypeError(f"expected OLD=NEW, got {text!r}")
    return old, new


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tlscope redact",
        description="Rewrite path prefixes, user and host names in a TORCH_TRACE log and "
        "recompute payload MD5s so the log stays valid. Streams; reads .gz; writes .gz when "
        "OUT ends in .gz.",
    )
    p.add_argument("log", type=Path, help="trace log (.log or .gz)")
    p.add_argument("-o", "--output", type=Path, help="output file (default: stdout)")
    p.add_argument(
        "--map",
        dest="maps",
        action="append",
        type=_parse_map,
        default=[],
        metavar="OLD=NEW",
        help="rewrite path prefix OLD to NEW (repeatable)",
    )
    p.add_argument(
        "--user",
        dest="users",
        action="append",
        type=_parse_map,
        default=[],
        metavar="NAME=NEW",
        help="rewrite user name NAME where it names a path component (repeatable)",
    )
    p.add_argument(
        "--host",
        dest="hosts",
        action="append",
        type=_parse_map,
        default=[],
        metavar="NAME=NEW",
        help="rewrite host name NAME as a whole word (repeatable)",
    )
    p.add_argument(
        "--auto",
        action="store_true",
        help="also map this machine's Python prefix/venv, cwd, home, temp dir, "
        "user and host names to placeholders like $PREFIX, $HOME, $USER",
    )
    p.add_argument(
        "--in-place",
        action="store_true",
        help="overwrite LOG (via a temporary file); never done without this flag",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    return p


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    rewrites = redactor(args.maps, args.users, args.hosts, auto=args.auto)
    if rewrites is None:
        print("tlscope redact: nothing to map; give --map, --user, --host or --auto", file=sys.stderr)
        return 2
    src: Path = args.log
    if not src.is_file():  # an input error (1), not a usage error (2)
        print(f"tlscope redact: no such file: {src}", file=sys.stderr)
        return 1
    dst: Path | None = args.output
    if args.in_place:
        if dst is not None:
            print("tlscope redact: --in-place and -o are exclusive", file=sys.stderr)
            return 2
    elif dst is not None and dst.exists() and dst.resolve() == src.resolve():
        print("tlscope redact: refusing to overwrite the input; use --in-place", file=sys.stderr)
        return 2
    stats = redact(src, dst, rewrites, in_place=args.in_place)
    for note in stats.notes:
        print(f"tlscope redact: {note}", file=sys.stderr)
    if not args.quiet:
        print(
            f"tlscope redact: {stats.records} records, {stats.replacements} replacements, "
            f"{stats.payloads_rehashed} payload MD5s recomputed, "
            f"{stats.bad_md5_kept} bad MD5s left as found",
            file=sys.stderr,
        )
    return 0
