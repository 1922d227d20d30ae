"""`tlscope PATH [-o OUT] ...`: tlparse's flags and meaning, its bugs fixed.

Subcommands (`tlscope redact ...`) are listed in tlscope.commands.
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from tlscope import __version__
from tlscope.commands import SUBCOMMANDS, load
from tlscope.model.record import Record
from tlscope.pipeline import StrictFailure, Tracker, run
from tlscope.read.inputs import InputError, resolve_input
from tlscope.read.reader import LogReader
from tlscope.read.source import LogSource
from tlscope.sink import ParseOptions, RunContext, Sink
from tlscope.write.manifest import Manifest
from tlscope.write.outdir import OutputDir, OutputError

#: Below this size a progress bar would only flicker.
_PROGRESS_MIN_BYTES = 8 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope",
        description=(
            "Read a PyTorch structured trace (TORCH_TRACE) and write the tlscope format "
            "(raw.jsonl, payloads/, chromium_events.json, manifest.json) into OUT. "
            f"Other commands: {', '.join(f'tlscope {c} --help' for c in SUBCOMMANDS)}."
        ),
    )
    parser.add_argument("path", type=Path, metavar="PATH", help="a log file, a .gz log, or a directory of logs")
    parser.add_argument(
        "-o",
        dest="out",
        type=Path,
        default=Path("tl_out"),
        metavar="OUT",
        help="output directory (default: tl_out)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    parser.add_argument(
        "--latest",
        action="store_true",
        help="PATH is a directory: read its most recently modified log",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 1, OUT untouched) if the log has any problem",
    )
    parser.add_argument(
        "--strict-compile-id",
        action="store_true",
        help="fail if any event has a malformed compile id",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every kept problem and the unknown event keys",
    )
    parser.add_argument(
        "-p",
        "--plain-text",
        action="store_true",
        help="write inductor output code as plain .txt instead of highlighted HTML",
    )
    parser.add_argument("-e", "--export", action="store_true", help="draft-export report (torch.export logs)")
    parser.add_argument(
        "-i",
        "--inductor-provenance",
        action="store_true",
        help="add provenance tracking pages (graph <-> generated code line links)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open OUT/index.html at the end")
    parser.add_argument(
        "--custom-header-html",
        default="",
        metavar="HTML",
        help="markup inserted (unescaped, it is yours) at the top of index.html",
    )
    parser.add_argument(
        "--all-ranks-html",
        action="store_true",
        help="PATH is a directory of rank logs (or one muxed log): a report per rank and a landing page",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="multi-rank: parse N ranks at once in worker processes (default: the number of cores)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="multi-rank: run the per-rank parses on this Dask scheduler (pip install 'tlscope[dask]')",
    )
    parser.add_argument("-V", "--version", action="version", version=f"tlscope {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in SUBCOMMANDS and not Path(args_list[0]).exists():
        return load(args_list[0])(args_list[1:])
    args = build_parser().parse_args(args_list)
    if args.all_ranks_html and args.latest:
        print("Error: --latest cannot be used with --all-ranks-html", file=sys.stderr)
        return 1
    if args.all_ranks_html or (not args.latest and _several_ranks(args.path)):
        return _multi_rank(args)
    try:
        log = resolve_input(args.path, latest=args.latest)
        out = OutputDir(args.out, overwrite=args.overwrite)
        out.check()
        options = _options(args)
        manifest = run(log, out, options, command=["tlscope", *args_list], track=_tracker(), sinks=report_sinks)
    except (InputError, OutputError, StrictFailure) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"Interrupted; {args.out} left as it was.", file=sys.stderr)
        return 130
    print(summary(manifest, args.out))
    if args.verbose:
        _print_details(manifest)
    if not args.no_browser:
        _open_report(args.out)
    return 0


def console_main() -> NoReturn:
    """The `tlscope` command (and `python -m tlscope`): main(), then exit with its status.

    Before exiting, every object is frozen (gc.freeze): the interpreter's final garbage
    collection then skips them. It would walk every object of every imported module (Jinja2,
    Pygments, msgspec...) only to free memory the OS frees anyway: 30-50 ms, a tenth of a small
    run. Not in `main`, which tests and library users call in a process that goes on.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


def _options(args: argparse.Namespace) -> ParseOptions:
    return ParseOptions(
        # As in tlparse, export mode never applies the strict checks.
        strict=args.strict and not args.export,
        strict_compile_id=args.strict_compile_id and not args.export,
        plain_text=args.plain_text,
        export=args.export,
        inductor_provenance=args.inductor_provenance,
        custom_header_html=args.custom_header_html,
    )


#: How much of a single log is looked at to tell whether it is muxed (several ranks' events).
_MUX_SNIFF_BYTES = 8 * 1024 * 1024
_RANK_FIELD = re.compile(rb'"rank": ?(\d+)')


def _several_ranks(path: Path) -> bool:
    """Plain `tlscope PATH` goes multi-rank for a folder of several ranks' logs or a muxed log.

    A muxed log interleaves its ranks from the start, so only its head is read: a full scan
    would double the cost of every ordinary single-log run.
    """
    from tlscope.multirank import is_multi_rank

    if path.is_dir():
        return is_multi_rank(path)
    try:
        with LogSource(path) as source:
            head = source.stream.read(_MUX_SNIFF_BYTES)
    except OSError:
        return False  # the single-log path reports the unreadable file properly
    ranks = {m.group(1) for line in head.split(b"\n") if line[:1] != b"\t" for m in _RANK_FIELD.finditer(line)}
    return len(ranks) > 1


def _multi_rank(args: argparse.Namespace) -> int:
    from tlscope.multirank import main_multi_rank

    status = main_multi_rank(
        args.path,
        args.out,
        _options(args),
        overwrite=args.overwrite,
        jobs=args.jobs,
        scheduler=args.scheduler,
        sinks=report_sinks,
        preload=preload_report,
    )
    if status == 0 and not args.no_browser:
        _open_report(args.out)
    return status


def preload_report() -> None:
    """Import the report's modules and compile its templates (multi-rank: before forking workers)."""
    import tlscope.write.report.sink  # noqa: F401  (the import is the point)
    from tlscope.write.report.render import environment
    from tlscope.write.templatecache import bytecode_cache

    env = environment()
    env.bytecode_cache = bytecode_cache()  # compiled in an earlier run: loaded, not compiled
    for name in env.list_templates():
        env.get_template(name)


def report_sinks(ctx: RunContext) -> Sequence[Sink]:
    """The HTML report, fed in the same pass as the format writer."""
    from tlscope.write.report.sink import ReportOptions, ReportSink

    o = ctx.options
    options = ReportOptions(
        plain_text=o.plain_text,
        export=o.export,
        provenance=o.inductor_provenance,
        custom_header_html=o.custom_header_html,
        collectives_parity_link=o.multi_rank,
        highlight_workers=o.highlight_workers,
    )
    return [ReportSink(ctx, options)]


def _open_report(out: Path) -> None:
    import webbrowser

    index = (out / "index.html").resolve()
    if index.exists() and not webbrowser.open(index.as_uri()):
        print(f"Open {index} in a browser to see the report.", file=sys.stderr)


def _tracker() -> Tracker:
    """A progress bar on stderr for big logs, only when stderr is a terminal."""

    def track(records: Iterable[Record], reader: LogReader) -> Iterator[Record]:
        size = reader.path.stat().st_size
        if not sys.stderr.isatty() or size < _PROGRESS_MIN_BYTES:
            yield from records
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
        with Progress(*columns, transient=True) as progress:
            task = progress.add_task("read", total=size)
            for i, record in enumerate(records):
                if i % 2048 == 0:
                    progress.update(task, completed=reader.bytes_read)
                yield record

    return track


def summary(manifest: Manifest, out: Path) -> str:
    """The one-paragraph summary printed at the end of a run."""
    events = sum(s.count for s in manifest.events.values())
    real_ids = [c for c in manifest.compile_ids if c.id != "[-/-]"]
    problems = manifest.problems
    parts = [
        f"Read {manifest.inputs[0].path} ({_size(manifest.inputs[0].size)}, {manifest.inputs[0].lines} lines):",
        f"{events} events of {len(manifest.events)} kinds, {len(real_ids)} compile ids",
    ]
    if manifest.ranks:
        parts[-1] += f", rank{'s' if len(manifest.ranks) > 1 else ''} {', '.join(map(str, manifest.ranks))}"
    if problems.total:
        kinds = ", ".join(f"{k} {n}" for k, n in problems.counts.items())
        first = problems.first[0] if problems.first else None
        where = f"; first at line {first.line}: {first.message}" if first else ""
        parts[-1] += ";"
        parts.append(f"{problems.total} problems ({kinds}){where}.")
    else:
        parts[-1] += ", no problems."
    parts.append(
        f"Wrote {out}/: raw.jsonl ({manifest.raw_jsonl_events} events), "
        f"{manifest.payloads.files} payloads, {manifest.chromium_events} chromium events, manifest.json."
    )
    return " ".join(parts)


def _print_details(manifest: Manifest) -> None:
    for p in manifest.problems.first:
        print(f"  line {p.line}: {p.kind}: {p.message}", file=sys.stderr)
    for key in manifest.unknown_event_keys:
        print(f"  unknown event key {key}: {manifest.events[key].count}", file=sys.stderr)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
