"""Benchmark tlscope against tlparse 0.4.3 on the same inputs with the same flags.

    python bench/run.py                       # every case, 5 timed runs per tool
    python bench/run.py --cases simple big --runs 3
    python bench/run.py --list                # the case names

Prints a markdown table and writes bench/results/<stamp>.{md,json} (git-ignored). See
bench/README.md for what is measured and how.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from harness import REPO, Sample, ToolRuns

CORPUS = REPO / "corpus" / "traces"
BIG = REPO / "corpus" / "big"
SHARED_MULTI_RANK = REPO.parent / "shared" / "traces" / "tlparse" / "inputs" / "multi_rank_runtime"
#: The multi-rank case at a job size tlparse users have (issue 5: 8 ranks), made from this real run.
RANK_COPIES_SOURCE = CORPUS / "ranks_same_4"
RANK_COPIES = 8
RESULTS = REPO / "bench" / "results"
COMMON_FLAGS = ["--overwrite", "--no-browser"]
DIR_FLAGS = ["--all-ranks-html"]


@dataclass
class Case:
    name: str
    source: Path  # as committed (may be gzipped, may be a directory)
    is_dir: bool
    #: > 0: the input is this many rank logs copied from the source directory's (harness.rank_copies).
    ranks: int = 0


@dataclass
class CaseResult:
    name: str
    input_bytes: int
    floor_s: float
    runs: dict[str, ToolRuns] = field(default_factory=dict)


def discover_cases() -> list[Case]:
    cases: list[Case] = []
    for scenario in sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []:
        logs = sorted(scenario.rglob("*.gz"))
        for log in logs:
            name = scenario.name if len(logs) == 1 else f"{scenario.name}/{log.relative_to(scenario).as_posix()}"
            cases.append(Case(name.removesuffix(".log.gz"), log, is_dir=False))
        if any("_rank_" in log.name for log in logs):
            cases.append(Case(f"{scenario.name}/ (all ranks)", scenario, is_dir=True))
    if RANK_COPIES_SOURCE.is_dir():
        name = f"ranks_{RANK_COPIES} (copies of {RANK_COPIES_SOURCE.name})"
        cases.append(Case(name, RANK_COPIES_SOURCE, is_dir=True, ranks=RANK_COPIES))
    for log in sorted(BIG.glob("dedicated_log_torch_trace_*.log")) if BIG.is_dir() else []:
        cases.append(Case(f"big/{log.name}", log, is_dir=False))
    if SHARED_MULTI_RANK.is_dir():
        cases.append(Case("shared/multi_rank_runtime (all ranks)", SHARED_MULTI_RANK, is_dir=True))
    return cases


def select(cases: Sequence[Case], patterns: Sequence[str] | None) -> list[Case]:
    """Cases whose name matches a pattern: a glob, or a plain prefix ("ranks_same_2")."""
    if not patterns:
        return list(cases)
    return [c for c in cases if any(fnmatch.fnmatch(c.name, p) or c.name.startswith(p) for p in patterns)]


def tool_flags(command: Sequence[str], tool: str) -> tuple[list[str], list[str]]:
    kept, dropped = harness.supported_flags(command, [*COMMON_FLAGS, *DIR_FLAGS])
    for flag in dropped:
        print(f"note: {tool} --help does not mention {flag}; running without it", file=sys.stderr)
    return [f for f in kept if f in COMMON_FLAGS], [f for f in kept if f in DIR_FLAGS]


def one_run(command: Sequence[str], flags: Sequence[str], target: Path, scratch: Path, log: Path) -> Sample:
    out = scratch / "out"
    if out.exists():
        shutil.rmtree(out)  # outside the timed region: deleting old output is not the tool's work
    return harness.run_child([*command, str(target), *flags, "-o", str(out)], log_path=log)


def bench_case(
    case: Case, tools: dict[str, tuple[list[str], list[str], list[str]]], runs: int, warmup: int, work: Path
) -> CaseResult:
    if case.ranks:
        target = harness.rank_copies(case.source, work / "input" / f"ranks_{case.ranks}", case.ranks)
    else:
        target = harness.decompress_tree(case.source, work / "input" / case.source.name)
    result = CaseResult(case.name, harness.input_size(target), harness.read_floor(target))
    for tool in tools:
        result.runs[tool] = ToolRuns(tool)
    names = list(tools)
    for index in range(warmup + runs):
        # Alternate which tool goes first, so neither always runs on a cooler machine or cache.
        order = names if index % 2 == 0 else names[::-1]
        for tool in order:
            command, common, dir_flags = tools[tool]
            flags = [*common, *(dir_flags if case.is_dir else [])]
            log = work / f"{tool}.log"
            sample = one_run(command, flags, target, work / tool, log)
            if sample.exit_code != 0:
                result.runs[tool].error = f"exit {sample.exit_code}: {log.read_text(errors='replace')[-300:].strip()}"
            if index >= warmup:
                result.runs[tool].samples.append(sample)
    shutil.rmtree(work)
    return result


def row(result: CaseResult) -> list[str]:
    scope, parse = result.runs["tlscope"], result.runs["tlparse"]
    t_scope, t_parse = scope.median_wall(), parse.median_wall()
    r_scope, r_parse = scope.peak_rss(), parse.peak_rss()
    size = result.input_bytes

    def status(runs: ToolRuns, text: str) -> str:
        return text if runs.ok else f"{text} (failed)"

    return [
        result.name,
        harness.fmt_mb(size),
        harness.fmt_seconds(result.floor_s),
        status(scope, harness.fmt_seconds(t_scope)),
        status(parse, harness.fmt_seconds(t_parse)),
        harness.fmt_float(harness.ratio(t_scope, t_parse), 2, "x"),
        harness.fmt_seconds(scope.median_cpu()),
        harness.fmt_seconds(parse.median_cpu()),
        harness.fmt_float(harness.ratio(scope.median_cpu(), parse.median_cpu()), 2, "x"),
        harness.fmt_mb(r_scope),
        harness.fmt_mb(r_parse),
        harness.fmt_float(harness.ratio(r_scope, r_parse), 2, "x"),
        harness.fmt_float(harness.throughput_mb_s(size, t_scope), 1),
        harness.fmt_float(harness.throughput_mb_s(size, t_parse), 1),
        harness.fmt_float(harness.throughput_mb_s(size, result.floor_s), 0),
    ]


HEADER = [
    "case", "MB", "floor s", "tlscope s", "tlparse s", "time ratio",
    "tlscope CPU s", "tlparse CPU s", "CPU ratio", "tlscope RSS MB",
    "tlparse RSS MB", "RSS ratio", "tlscope MB/s", "tlparse MB/s", "floor MB/s",
]  # fmt: skip


def report(results: Sequence[CaseResult], meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    table = harness.markdown_table(HEADER, [row(r) for r in results])
    notes = [
        f"Median wall time of {meta['runs']} runs per tool (after {meta['warmup']} warm-up), tools alternating;",
        "CPU = median user + system seconds of the tool and its waited-for children (page workers);",
        f"RSS = peak resident set of the tool alone (os.wait4 in bench/launch.py), max over runs; "
        f"a command that allocates nothing shows {meta.get('rss_floor_mb', 0):.1f} MB;",
        "ratios are tlscope/tlparse (< 1: tlscope is faster or smaller);",
        "floor = median time to read the input once in 1 MiB chunks from the page cache.",
    ]
    failures = [f"- {r.name}: {t.tool} {t.error}" for r in results for t in r.runs.values() if t.error]
    markdown = "\n".join([table, "", *notes, *(["", "Failures:", *failures] if failures else [])])
    data = {"meta": meta, "cases": [asdict(r) for r in results]}
    return markdown, data


def machine() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": __import__("os").cpu_count()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cases", nargs="*", help="case names, globs or prefixes (default: all)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per tool and case (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    parser.add_argument("--tlscope", default=f"{sys.executable} -m tlscope", help="tlscope command line")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where to write .md/.json")
    args = parser.parse_args(argv)

    cases = select(discover_cases(), args.cases)
    if args.list or not cases:
        print("\n".join(c.name for c in discover_cases()))
        return 0 if args.list else 2
    tlparse = harness.find_tlparse(REPO / "bench" / ".venv-tlparse")
    harness.compile_bytecode(harness.package_dir(args.tlscope.split()))
    commands = {"tlscope": args.tlscope.split(), "tlparse": [str(tlparse)]}
    tools = {name: (cmd, *tool_flags(cmd, name)) for name, cmd in commands.items()}

    results = []
    for case in cases:
        print(f"... {case.name}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix="tlscope-bench-") as tmp:
            results.append(bench_case(case, tools, args.runs, args.warmup, Path(tmp) / "work"))

    meta = {
        "rss_floor_mb": harness.rss_floor() / harness.MB,
        "runs": args.runs,
        "warmup": args.warmup,
        "commands": commands,
        "machine": machine(),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    markdown, data = report(results, meta)
    print(markdown)
    args.results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for name in (stamp, "latest"):
        (args.results / f"{name}.md").write_text(markdown + "\n")
        (args.results / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    return 0 if all(t.ok for r in results for t in r.runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
