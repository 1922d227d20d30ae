"""`tlscope [parse] PATH [-o OUT] ...`: tlparse's flags and meaning, its bugs fixed.

The default command; the others are listed in tlscope.commands. The parse itself is
tlscope.pipeline.parse; this module reads the flags, prints and opens the report.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tlscope import __version__
from tlscope.commands import others

# The parse itself is imported by `main` once the flags are read: `tlscope --version` and
# `--help` then cost the interpreter and argparse only (tests/test_startup.py), not msgspec, the
# model, the analyses and the report (~35 ms of imports).
if TYPE_CHECKING:
    from tlscope.analyse.ranks.rank_summary import RankSummary
    from tlscope.format.compiles import AotInductorCompile, ExportCall
    from tlscope.format.manifest import Manifest
    from tlscope.write.run_options import ParseOptions


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope",
        description=(
            "Read a PyTorch structured trace (TORCH_TRACE) and write the tlscope format "
            "(raw.jsonl, payloads/, chromium_events.json, manifest.json) into OUT. "
            f"Other commands: {', '.join(f'tlscope {c} --help' for c in others())}."
        ),
    )
    _input_flags(parser)
    _report_flags(parser)
    _multi_rank_flags(parser)
    parser.add_argument("-V", "--version", action="version", version=f"tlscope {__version__}")
    return parser


def _input_flags(parser: argparse.ArgumentParser) -> None:
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
        "--user-code",
        action="append",
        metavar="PATTERN",
        help="files that are your own code (fnmatch, repeatable, e.g. '*/myproject/*'): breaks, guards and "
        "failures are attributed to their innermost frame; default: every file outside the standard library, "
        f"site-packages and torch (or $TLSCOPE_USER_CODE, patterns separated by '{os.pathsep}')",
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


def _report_flags(parser: argparse.ArgumentParser) -> None:
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
        "--source-url",
        metavar="URL",
        help="link the report's and the explorer's user lines to URL/<file>#L<line> (http(s): a repository "
        "at a commit, e.g. https://github.com/o/r/blob/<sha>, or a server of a local source tree)",
    )
    parser.add_argument("--source-root", metavar="PATH", help="the logged files' local path prefix, removed first")


def _multi_rank_flags(parser: argparse.ArgumentParser) -> None:
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


def main(argv: Sequence[str]) -> int:
    """Parse PATH into OUT (pipeline.parse.parse decides how); a failure is one line, by tlscope.cli."""
    args_list = list(argv)
    args = build_parser().parse_args(args_list)
    from tlscope.commands.progress_bar import read_progress
    from tlscope.pipeline.parse import parse
    from tlscope.pipeline.single import no_events_text

    options = _options(args)
    parsed = parse(
        args.path,
        args.out,
        options,
        overwrite=args.overwrite,
        latest=args.latest,
        all_ranks=args.all_ranks_html,
        jobs=args.jobs,
        scheduler=args.scheduler,
        command=["tlscope", *args_list],
        track=read_progress(),
        echo=print,
    )
    if parsed.multi_rank:
        _tell_rank_troubles(parsed.ranks, parsed.manifests)
        _tell_divergence(args.out)
        print(explorer_hint(args.out))
        if not args.no_browser:
            _open_report(args.out)
        return 0
    manifest = parsed.manifests[0]
    print(summary(manifest, args.out))
    _tell_answers(parsed.statuses, parsed.recompiles, args.out)
    for line in parsed.headline:
        print(f"  {line}")
    _tell_exports(parsed.exports, args.out, parsed.exports_note)
    _tell_aot_inductor(parsed.aot_inductor)
    if parsed.vllm:
        from tlscope.analyse.fold.vllm import vllm_line

        print(f"{vllm_line(parsed.vllm)}.")
    print(explorer_hint(args.out))
    if not manifest.events:
        print(f"Warning: {no_events_text(manifest.inputs[0].path, manifest.inputs[0].lines)}", file=sys.stderr)
    cut = next((p for p in manifest.problems.first if p.kind == "corrupt_input"), None)
    if cut is not None:  # said without -v: a report of half a log must not look like the whole one
        print(
            f"Warning: {manifest.inputs[0].path}: {cut.message}; only its first {cut.line} lines were read "
            "(--strict fails on this)",
            file=sys.stderr,
        )
    if args.verbose:
        _print_details(manifest)
    if not args.no_browser:
        _open_report(args.out)
    return 0


def _options(args: argparse.Namespace) -> ParseOptions:
    from tlscope.write.report.options import ReportOptions
    from tlscope.write.run_options import ParseOptions, user_code_patterns

    source_url, source_root = _source(args)
    return ParseOptions(
        # As in tlparse, export mode never applies the strict checks.
        strict=args.strict and not args.export,
        strict_compile_id=args.strict_compile_id and not args.export,
        user_code=user_code_patterns(args.user_code),
        report=ReportOptions(
            plain_text=args.plain_text,
            export=args.export,
            inductor_provenance=args.inductor_provenance,
            custom_header_html=args.custom_header_html,
            source_url=source_url,
            source_root=source_root,
        ),
    )


def _source(args: argparse.Namespace) -> tuple[str, str]:
    """--source-url, checked as serve and pack check it (http(s) with a host, docs/SECURITY.md),
    and --source-root; ConfigError (exit status 2) before anything is read."""
    if not args.source_url:
        return "", ""
    from tlscope.serve.config import check_source_url  # only then: serve's module is not a parse's start-up

    return check_source_url(args.source_url), args.source_root or ""


def _open_report(out: Path) -> None:
    import webbrowser

    index = (out / "index.html").resolve()
    if index.exists() and not webbrowser.open(index.as_uri()):
        print(f"Open {index} in a browser to see the report.", file=sys.stderr)


def summary(manifest: Manifest, out: Path) -> str:
    """The one-paragraph summary printed at the end of a run."""
    events = sum(s.count for s in manifest.events.values())
    real_ids = [c for c in manifest.compile_ids if c.id != "[-/-]"]
    problems = manifest.problems
    parts = [
        f"Read {manifest.inputs[0].path} ({_size(manifest.inputs[0].size)}, {manifest.inputs[0].lines} lines):",
        f"{events} events of {len(manifest.events)} kinds ({_where_events_went(manifest, events)}), "
        f"{len(real_ids)} compile ids",
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
    if manifest.notes.total:  # known torch quirks: said after the problems, never leading
        n = manifest.notes.total
        parts.append(f"({n} known torch quirk{'s' if n > 1 else ''} noted, not problems: -v lists them.)")
    parts.append(
        f"Wrote {out}/: raw.jsonl ({manifest.raw_jsonl_events} events), "
        f"{manifest.payloads.files} payloads, chromium_events.json ({manifest.chromium_events} chromium events), "
        "manifest.json."
    )
    return " ".join(parts)


def explorer_hint(out: Path) -> str:
    """How to open OUT in the explorer (issue 20, finding 7: nothing said it existed)."""
    folder = _quote(out)
    return (
        f"Explore it: tlscope serve {folder} (prints the explorer's link), "
        f"or tlscope pack {folder} -o trace.html (one file to open or share)."
    )


def _where_events_went(manifest: Manifest, events: int) -> str:
    """How the log's events add up to what was written (issue 20: 2136 events vs 371 in raw.jsonl
    vs 1725 chromium events, `str` unexplained): raw.jsonl's lines, its first line's string table
    (`str` entries), chromium_events.json, and what problems left out."""
    strings = manifest.events["str"].count if "str" in manifest.events else 0
    chromium = manifest.events["chromium_event"].count if "chromium_event" in manifest.events else 0
    parts = [f"{manifest.raw_jsonl_events} in raw.jsonl"]
    if chromium:
        parts.append(f"{chromium} chromium events")
    if strings:
        parts.append(f"{strings} str entries in raw.jsonl's string table")
    left = events - manifest.raw_jsonl_events - chromium - strings
    if left > 0:
        parts.append(f"{left} left out (see problems)")
    return ", ".join(parts)


def _print_details(manifest: Manifest) -> None:
    for p in manifest.problems.first:
        print(f"  line {p.line}: {p.kind}: {p.message}", file=sys.stderr)
    for p in manifest.notes.first:  # known torch quirks: said under -v, never problems
        print(f"  line {p.line}: note {p.kind}: {p.message} (a known torch quirk, not a problem)", file=sys.stderr)
    for key in manifest.unknown_event_keys:
        print(f"  unknown event key {key}: {manifest.events[key].count}", file=sys.stderr)


def _size(n: int) -> str:
    value = float(n)
    # Binary units, named as such: the progress bar counts the same bytes in MiB (issue 20: "52.5 MB"
    # here was the bar's "55.1 MB").
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


#: Statuses that want an explanation: the run points at `summary`, which gives it.
_TROUBLE = frozenset({"failed", "restarted", "graph_break", "metrics_missing"})


def _tell_answers(statuses: dict[str, int], recompiles: int, out: Path) -> None:
    """The compile ids per status (compiles.json's), most severe first, and the recompiles: "no
    problems" above is about reading the log, and a compile that failed must not hide behind it."""
    if not statuses:
        return
    from tlscope.format.status import status_words

    said = ", ".join(f"{n} {status_words(status, n)}" for status, n in statuses.items())
    if recompiles:
        said += f"; {recompiles} recompile{'s' if recompiles != 1 else ''}"
    trouble = recompiles or _TROUBLE & statuses.keys()
    why = f"; why and what to change: tlscope summary {_quote(out)}" if trouble else ""
    print(f"Compiles: {said}{why}.")


def _tell_aot_inductor(compiles: Sequence[AotInductorCompile]) -> None:
    """A log of AOT Inductor compiles (no compile id of their own): how many, how they ended."""
    if not compiles:
        return
    from collections import Counter

    counts = Counter(c.status.replace("_", " ") for c in compiles)
    seconds = sum(c.time.duration_s or 0.0 for c in compiles if c.time is not None)
    said = ", ".join(f"{n} {status}" for status, n in counts.most_common())
    print(f"AOT Inductor: {len(compiles)} compile{'s' if len(compiles) != 1 else ''}, {said}, {seconds:.2f} s.")


def _tell_exports(calls: Sequence[ExportCall], out: Path, note: str | None = None) -> None:
    """A log of torch.export calls: how they ended, the first failure's sentence and what the
    calls cannot say, as compiles.json's `exports` and `exports_note` say them."""
    if not calls:
        if note:
            print(f"torch.export: {note}")
        return
    from collections import Counter

    counts = Counter(call.status.replace("_", " ") for call in calls)
    said = ", ".join(f"{n} {status}" for status, n in counts.most_common())
    print(f"torch.export: {len(calls)} call{'s' if len(calls) != 1 else ''}, {said}.")
    first = next((c for c in calls if c.status != "exported"), None)
    if first is not None:
        print(f"  call {first.index}: {first.sentence}")
    if note:
        print(f"  {note}")
    if first is not None:
        print(f"  What to change: tlscope summary {_quote(out)}")


def _quote(path: Path) -> str:
    """`path` as a shell word, for a command the user copies."""
    import shlex

    return shlex.quote(str(path))


def _tell_divergence(out: Path) -> None:
    """How the ranks' compiles diverge, in the sentences of ranks.json, where the user looks first.

    Read from the ranks.json the landing page just wrote (none: no rank had compiles to compare),
    not folded again from a list of every rank's overview (the job's summaries decoded once more).
    """
    from tlscope.analyse.ranks.divergence import Divergence, read_ranks_file, said_sentences
    from tlscope.analyse.ranks.pair import pair_to_compare
    from tlscope.analyse.ranks.stragglers import Stragglers, straggler_lines, straggler_title
    from tlscope.format.layout import RANKS

    try:
        data = (out / RANKS).read_bytes()
    except FileNotFoundError:
        return
    read = read_ranks_file(data)
    found: Divergence = read.divergence
    slow: Stragglers | None = read.stragglers
    if read.first_answers is not None and read.first_answers.lines:
        from tlscope.analyse.ranks.job_answers import answer_lines

        print("First answers, all ranks:")
        for line in answer_lines(read.first_answers):
            print(f"  {line}")
    if slow is not None and slow.ranks:
        print(straggler_title(slow))
        for line in straggler_lines(slow):
            print(f"  {line}")
    if not found.diverges:
        print("Every rank compiled the same compile ids.")
    for listed, sentences in said_sentences(found, str(out)):
        print(f"{listed.title}:")
        for sentence in sentences:
            print(f"  {sentence}")
    # Commands to paste: the folder quoted for a shell, as the single log's lines quote it.
    print(f"Every rank at a glance: tlscope summary {_quote(out)}")
    pair = pair_to_compare(read)
    if pair is not None:
        first, second = pair.ranks
        which = {"divergence": "the first that differ", "failure": "one that failed otherwise"}.get(
            pair.kind, "the slowest and the median rank"
        )
        print(f"Rank {first} and rank {second} side by side ({which}): tlscope diff {_quote(out)}")


def _tell_rank_troubles(summaries: Sequence[RankSummary], manifests: Sequence[Manifest]) -> None:
    """On stderr: each failed rank with its reason, and each rank whose log held no trace event
    (an empty or non-log file among the rank logs: its report would look like an idle rank).
    `manifests` are those of the ranks that parsed, in rank order."""
    from tlscope.pipeline.single import no_events_text

    failed = [s for s in summaries if s.errors]
    if failed:
        print(f"Ranks with problems (see index.html): {', '.join(str(s.rank) for s in failed)}", file=sys.stderr)
        for s in failed:
            print(f"  rank {s.rank}: {s.errors[0]}", file=sys.stderr)
    # A generator: a job's summaries are read from a file one at a time (a list held them all).
    for summary, manifest in zip((s for s in summaries if s.parsed), manifests, strict=True):
        if not manifest.events:
            text = no_events_text(manifest.inputs[0].path, manifest.inputs[0].lines)
            print(f"Warning: rank {summary.rank}: {text}", file=sys.stderr)
