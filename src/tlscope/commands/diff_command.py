"""`tlscope diff`: what differs between two traces, two ranks of a job, or two compiles.

    tlscope diff A B                    two traces (logs, folders of logs or output folders)
    tlscope diff RUN --ranks 0 1        two ranks of one multi-rank trace
    tlscope diff RUN                    the two ranks the job's divergence names first
    tlscope diff TRACE --ids 0/0 0/1    two compile ids of one trace (brackets optional)

Compiles are matched by function and order, not by compile id (analyse/diff.py); graphs,
guards, output code and compile metrics are compared. A unified diff goes to stdout; `-o
FILE.html` also writes a side-by-side page. Exit status as diff(1): 0 equal, 1 different, 2 error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from tlscope.analyse.diff import TraceDiff, compile_pair_diff
from tlscope.analyse.ranks.job_diff import JobDiff, job_diff
from tlscope.analyse.ranks.pair import RankPair, pair_to_compare
from tlscope.api import Trace, load
from tlscope.terminal import json_text
from tlscope.write.diffview import header, html, rank_groups, size_lines, unified
from tlscope.write.run_options import user_code_patterns


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope diff",
        description="Compare two traces, two ranks (--ranks) or two compile ids (--ids): graphs, guards, "
        "output code and compile metrics. Exit status: 0 equal, 1 different, 2 error.",
    )
    parser.add_argument("a", type=Path, metavar="A", help="a log, a folder of logs or an output folder")
    parser.add_argument(
        "b",
        type=Path,
        nargs="?",
        metavar="B",
        help="the other trace (not with --ranks or --ids); without B, --ranks and --ids, A is a multi-rank "
        "trace and its two ranks that differ first are compared",
    )
    parser.add_argument("--ranks", type=int, nargs=2, metavar=("R1", "R2"), help="two ranks of multi-rank trace A")
    parser.add_argument(
        "--rank",
        type=int,
        metavar="N",
        help="A and B are multi-rank traces: compare rank N of each (default: the lowest of each)",
    )
    parser.add_argument("--ids", nargs=2, metavar=("ID1", "ID2"), help="two compile ids of trace A, e.g. 0/0 0/1")
    parser.add_argument("--json", action="store_true", help="print the differences as JSON instead")
    parser.add_argument("--latest", action="store_true", help="A and B are folders of logs: read the newest")
    parser.add_argument("-o", dest="out", type=Path, metavar="FILE.html", help="also write a side-by-side HTML page")
    parser.add_argument(
        "--user-code",
        action="append",
        metavar="PATTERN",
        help="files that are your own code, as `tlscope --user-code` (applies to logs, parsed here)",
    )
    return parser


class _Usage(Exception):
    pass


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_:  # argparse exits 2 on usage errors, which is diff(1)'s error too
        return int(exit_.code or 0)
    try:
        chosen, job = _choose_pair(args)
        a, b, result, labels = _compare(args, job)
    except _Usage as err:
        print(f"tlscope diff: {err}", file=sys.stderr)
        return 2
    if chosen is not None and not args.json:
        print(_pair_line(chosen) + "\n")
    if args.ranks is not None:
        # The job's divergence groups first (ranks.json's, as `tlscope summary` says them).
        _print_groups(a, (args.ranks[0], args.ranks[1]), result, as_json=args.json, folder=str(args.a), pair=chosen)
    jobs = _jobs(args, a, b)
    if jobs is not None and args.json:
        # One document: the jobs' comparison first, then the diff's fields as for two traces.
        sys.stdout.write(json_text({"jobs": jobs, **msgspec.to_builtins(result)}) + "\n")
    elif not (args.json and args.ranks is not None):
        for line in [*jobs.lines, ""] if jobs is not None else []:
            sys.stdout.write(line + "\n")
        _print(result, a, b, labels, as_json=args.json, sides=_sides(args))
    if args.out is not None:
        page = html(result, a.payload, b.payload, labels, _sides(args), jobs.lines if jobs is not None else ())
        args.out.write_text(page, encoding="utf-8")
    return 0 if result.equal and not (jobs is not None and jobs.differs) else 1


def _pair_line(chosen: RankPair) -> str:
    """`Comparing rank 0 with rank 3, the job's first difference: … (--ranks 0 3; …).`"""
    first, second = chosen.ranks
    said = f"the job's first difference: {chosen.why}" if chosen.kind == "divergence" else chosen.why
    chosen_by = f"--ranks {first} {second}; give --ranks R1 R2 for another pair"
    return f"Comparing rank {first} with rank {second}, {said} ({chosen_by})."


def _choose_pair(args: argparse.Namespace) -> tuple[RankPair | None, Trace | None]:
    """With A alone: A's two ranks that differ first (ranks.json's divergence, decided where the
    job was folded), set as `args.ranks`, and the job as loaded (a folder of logs is parsed once);
    (None, None) when B, --ranks or --ids was given."""
    modes = sum(x is not None for x in (args.b, args.ranks, args.ids))
    if modes > 1:
        raise _Usage("give either B, --ranks R1 R2 or --ids ID1 ID2")
    if args.rank is not None and args.b is None:
        raise _Usage("--rank N compares rank N of two multi-rank traces: give B")
    if modes == 1:
        return None, None
    job = load(args.a, user_code=user_code_patterns(args.user_code), latest=args.latest)
    if not job.rank_numbers:
        raise _Usage(f"{args.a} is a single-rank trace: give B (another trace) or --ids ID1 ID2")
    if len(job.rank_numbers) < 2:
        raise _Usage(f"{args.a} holds one rank ({job.rank_numbers[0]}): give B (another trace) or --ids ID1 ID2")
    chosen = pair_to_compare(job.job_view())
    if chosen is None:
        # Nothing stands out; the full diff may still show what the fold's bounded checks did not.
        lowest = (job.rank_numbers[0], job.rank_numbers[1])
        chosen = RankPair(ranks=lowest, kind="lowest", why="the ranks compiled alike and none straggles")
    args.ranks = list(chosen.ranks)
    return chosen, job


def _compare(args: argparse.Namespace, job: Trace | None) -> tuple[Trace, Trace, TraceDiff, tuple[str, str]]:
    mine = user_code_patterns(args.user_code)
    if args.ids is not None:
        trace = load(args.a, user_code=mine, latest=args.latest)
        # An id the trace lacks: UnknownCompileId names A as typed and the ids it has.
        first, second = (trace.compile(_display(i)) for i in args.ids)
        return (
            trace,
            trace,
            compile_pair_diff(first, second, trace.payload, trace.payload),
            (f"{args.a} {first.id}", f"{args.a} {second.id}"),
        )
    if args.ranks is not None:
        if job is None:
            a = load(args.a, rank=args.ranks[0], user_code=mine, latest=args.latest)
        else:
            a = job.rank(args.ranks[0])
        b = a.rank(args.ranks[1])
        labels = (f"{args.a} rank {args.ranks[0]}", f"{args.a} rank {args.ranks[1]}")
        # Each rank on its own GPU: the device indices are masked, not differences.
        return a, b, a.diff(b, (f"rank {args.ranks[0]}", f"rank {args.ranks[1]}"), own_devices=True), labels
    a = load(args.a, rank=args.rank, user_code=mine, latest=args.latest)
    b = load(args.b, rank=args.rank, user_code=mine, latest=args.latest)
    return a, b, a.diff(b), (_labelled(args.a, a), _labelled(args.b, b))


def _labelled(path: Path, trace: Trace) -> str:
    """How a side is named in the details: its path, and its rank when it is a job's."""
    return str(path) if trace.current_rank is None or not trace.rank_numbers else f"{path} rank {trace.current_rank}"


def _jobs(args: argparse.Namespace, a: Trace, b: Trace) -> JobDiff | None:
    """Two traces of which one at least is a job: their ranks compared first (A B mode only)."""
    if args.b is None or not (a.rank_numbers or b.rank_numbers):
        return None
    views = (a.job_view() if a.rank_numbers else None, b.job_view() if b.rank_numbers else None)
    return job_diff(*views, (a.current_rank, b.current_rank), (str(args.a), str(args.b)))


def _display(text: str) -> str:
    text = text.strip()
    return text if text.startswith("[") else f"[{text}]"


def _sides(args: argparse.Namespace) -> tuple[str, str]:
    """How the header says each side: `on rank 1`, `in [0/1]`, or `in A`."""
    if args.ranks is not None:
        return (f"on rank {args.ranks[0]}", f"on rank {args.ranks[1]}")
    if args.ids is not None:
        return (f"in {_display(args.ids[0])}", f"in {_display(args.ids[1])}")
    return ("in A", "in B")


def _print_groups(
    job: Trace, ranks: tuple[int, int], result: TraceDiff, *, as_json: bool, folder: str, pair: RankPair | None
) -> None:
    divergence = job.job_view().divergence
    if as_json:
        # One document: the pair chosen (without --ranks), ranks.json's `divergence`, then the
        # diff's fields as without --ranks.
        chosen = {} if pair is None else {"pair": pair}
        sys.stdout.write(json_text({**chosen, "divergence": divergence, **msgspec.to_builtins(result)}) + "\n")
        return
    for line in rank_groups(divergence, ranks, len(job.rank_numbers), folder):
        sys.stdout.write(line + "\n")
    sys.stdout.write("\n")


def _print(
    result: TraceDiff, a: Trace, b: Trace, labels: tuple[str, str], *, as_json: bool, sides: tuple[str, str]
) -> None:
    if as_json:
        sys.stdout.write(json_text(result) + "\n")
        return
    for line in header(result, sides):
        sys.stdout.write(line + "\n")
    if not result.equal:
        sys.stdout.write("\nDetails:\n")
    for line in unified(result, a.payload, b.payload, labels):
        sys.stdout.write(line + "\n")
    for line in size_lines(result, labels):
        sys.stdout.write(line + "\n")
    state = "equal" if result.equal else f"{len(result.compiles)} compiles differ"
    if result.summary.exports:
        state += f", the export calls differ ({len(result.summary.exports)} lines above)"
    sys.stdout.write(
        f"{result.matched} compiles matched, {result.only_a} only in A, {result.only_b} only in B: {state}\n"
    )
