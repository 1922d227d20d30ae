"""`tlscope pack PATH -o trace.html`: the explorer and a trace in one HTML file that opens from file://.

PATH is an output folder (single log or multi-rank), or a log / folder of logs, parsed first
into a temporary folder. The file holds manifest.json and raw.jsonl (gzip, base64) and
payloads up to a budget (smallest first); it lists those left out. It is what to attach to
an issue.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tlscope.format.errors import InputError, OutputError
from tlscope.pipeline.classify import InputKind, classify
from tlscope.serve.config import check_source_url
from tlscope.viewers.pack import DEFAULT_BUDGET, PackResult, render


def _size(text: str) -> int:
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
    body = text.strip().upper().removesuffix("B")
    unit = body[-1:] if body[-1:] in units else ""
    try:
        value = float(body[: len(body) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 20M, 500K, 0)") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a size cannot be negative")
    return int(value * units[unit])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tlscope pack", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "path", type=Path, metavar="PATH", help="a tlscope output folder, or a log or folder of logs (parsed first)"
    )
    parser.add_argument("-o", dest="output", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    parser.add_argument(
        "--payload-budget",
        type=_size,
        default=DEFAULT_BUDGET,
        metavar="SIZE",
        help="payload bytes to include, smallest first (default 32M; 0 for none)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    parser.add_argument(
        "--source-url",
        metavar="URL",
        help="the Graph view links user lines to URL/<file>#L<line> (http(s): a source root, a repository at a commit)",
    )
    parser.add_argument("--source-root", metavar="PATH", help="the logged files' local path prefix, removed first")
    parser.add_argument("--latest", action="store_true", help="PATH is a folder of logs: pack its newest log")
    parser.add_argument(
        "--user-code",
        action="append",
        metavar="PATTERN",
        help="files that are your own code, as `tlscope --user-code` (applies when PATH is a log or logs)",
    )
    return parser


def _folder_of(path: Path, scratch: Path, user_code: Sequence[str] | None = None, *, latest: bool = False) -> Path:
    """PATH itself when it is an output folder, else PATH parsed into `scratch`."""
    found = classify(path, sniff=False)
    if found.kind is InputKind.OUTPUT_FOLDER:
        return path
    if found.kind is InputKind.MISSING:
        raise InputError("no such file or folder", path=path)
    from tlscope.pipeline.parse import parse
    from tlscope.write.run_options import ParseOptions, user_code_patterns

    parse(path, scratch / "out", ParseOptions(user_code=user_code_patterns(user_code)), latest=latest)
    return scratch / "out"


def _check_output(output: Path, overwrite: bool) -> None:
    """FILE can be written, or OutputError before any work: it exists, or its folder does not."""
    if output.exists() and not overwrite:
        raise OutputError("exists (pass --overwrite to replace it)", path=output)
    if not output.parent.is_dir():
        raise OutputError(f"{output.parent}: no such folder (the folder of -o {output})")


def _write(output: Path, page: str) -> None:
    """Written beside the target and renamed: a failed run leaves no half-written file. An OS
    error names FILE, never the temporary file."""
    tmp = output.with_name(f".{output.name}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(output)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise OutputError(err.strerror or str(err), path=output) from None


def _report(output: Path, result: PackResult) -> None:
    left = f"; {len(result.omitted)} payloads left out (over the budget)" if result.omitted else ""
    print(
        f"Wrote {output} ({result.size / 1024 / 1024:.1f} MB): {result.payloads} payloads{left}. Open it in a browser."
    )


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    _check_output(args.output, args.overwrite)
    with tempfile.TemporaryDirectory(prefix="tlscope-pack-") as scratch:
        folder = _folder_of(args.path, Path(scratch), args.user_code, latest=args.latest)
        source = (check_source_url(args.source_url), args.source_root or "") if args.source_url else None
        page, result = render(folder, args.payload_budget, title=args.path.name, source=source)
    _write(args.output, page)
    _report(args.output, result)
    return 0
