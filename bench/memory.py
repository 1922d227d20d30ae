"""Issue 2's memory target: tlscope's peak RSS stays small and flat as logs grow.

    python bench/memory.py                        # tlscope at 50, 100, 250, 500 MB
    python bench/memory.py --tool tlparse         # same harness on the reference tool
    python bench/memory.py --sizes 50 100 --runs 3 --source corpus/traces/simple/x.log.gz

Builds synthetic traces with corpus/scale.py from one real trace (cached in bench/out/,
git-ignored), runs `TOOL TRACE -o TMP --overwrite` on each, and prints peak RSS, wall time and
throughput next to the read floor. Then it checks, printing PASS/FAIL (exit 1 on any FAIL):

* ceiling: peak RSS < --max-rss-mb (300) at every size;
* flatness: RSS(largest) <= --flat-factor (1.25) x RSS(smallest) + --flat-slack-mb (20).

Why this flatness rule: a streaming parser holds a constant working set plus small per-compile
state, so from 50 MB to 500 MB (10x the input and, in scaled traces, 10x the compile ids) its
RSS may grow a little but not with the input. Anything that keeps a fraction f of the input
grows by f x 450 MB over that range; the rule caps that at 25% of the 50 MB footprint plus
20 MB of allocator noise (~0.1 MB of RSS per MB of input at a ~100 MB baseline). A tool that
keeps the whole log, like tlparse 0.4.3, fails it by an order of magnitude.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from harness import MB, REPO

OUT = REPO / "bench" / "out"
RESULTS = REPO / "bench" / "results"
SCALE = REPO / "corpus" / "scale.py"
DEFAULT_SIZES = (50, 100, 250, 500)
SHARED_FALLBACK = REPO.parent / "shared" / "traces" / "tlparse" / "inputs" / "cache_hit_miss.log"


@dataclass
class SizeResult:
    target_mb: int
    trace: str
    input_bytes: int
    floor_s: float
    wall_s: float
    max_rss_bytes: int
    exit_code: int


@dataclass
class Verdict:
    name: str
    passed: bool
    detail: str


def default_source() -> Path:
    """A real single-process trace with recompiles; the shared tlparse trace if the corpus is absent."""
    found = sorted((REPO / "corpus" / "traces" / "recompiles").glob("*.log.gz"))
    if found:
        return found[0]
    if SHARED_FALLBACK.is_file():
        return SHARED_FALLBACK
    raise SystemExit("no source trace: pass --source (a real TORCH_TRACE log)")


def content_tag(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:10]


def scaled_trace(source: Path, size_mb: int, cache: Path) -> Path:
    """The cached scaled trace for this source and size, built on first use."""
    stem = source.name.split(".")[0]
    target = cache / f"scaled-{stem}-{content_tag(source)}-{size_mb}MB.log"
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        print(f"... building {target.name}", file=sys.stderr, flush=True)
        cmd = [sys.executable, str(SCALE), str(source), "--size", f"{size_mb}MB", "-o", str(partial)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        partial.rename(target)  # a killed build never leaves a short file behind under the real name
    return target


def measure(command: Sequence[str], flags: Sequence[str], trace: Path, runs: int, work: Path) -> tuple[float, int, int]:
    """Median wall time, max peak RSS and the worst exit code over `runs` runs."""
    walls, rss, code = [], 0, 0
    for _ in range(runs):
        out = work / "out"
        if out.exists():
            shutil.rmtree(out)
        sample = harness.run_child([*command, str(trace), *flags, "-o", str(out)], log_path=work / "tool.log")
        walls.append(sample.wall_s)
        rss = max(rss, sample.max_rss_bytes)
        code = code or sample.exit_code
    if out.exists():
        shutil.rmtree(out)
    return harness.median(walls), rss, code


def judge(results: Sequence[SizeResult], max_rss_mb: float, factor: float, slack_mb: float) -> list[Verdict]:
    verdicts = []
    failed = [r for r in results if r.exit_code != 0]
    verdicts.append(
        Verdict(
            "runs",
            not failed,
            "all runs exited 0" if not failed else f"exit codes at {[r.target_mb for r in failed]} MB",
        )
    )
    for r in results:
        rss = r.max_rss_bytes / MB
        verdicts.append(
            Verdict(f"ceiling {r.target_mb} MB", rss < max_rss_mb, f"peak RSS {rss:.1f} MB < {max_rss_mb:.0f} MB")
        )
    if len(results) >= 2:
        small, big = min(results, key=lambda r: r.input_bytes), max(results, key=lambda r: r.input_bytes)
        limit = factor * small.max_rss_bytes / MB + slack_mb
        big_rss = big.max_rss_bytes / MB
        detail = (
            f"RSS at {big.target_mb} MB = {big_rss:.1f} MB <= "
            f"{factor} x {small.max_rss_bytes / MB:.1f} + {slack_mb:.0f} = {limit:.1f} MB"
        )
        verdicts.append(Verdict("flatness", big_rss <= limit, detail))
    return verdicts


def table(results: Sequence[SizeResult]) -> str:
    header = ["size", "input MB", "peak RSS MB", "wall s", "MB/s", "floor s", "floor MB/s", "RSS MB per 100 MB in"]
    base = min(results, key=lambda r: r.input_bytes) if results else None
    rows = []
    for r in results:
        slope = None
        if base is not None and r.input_bytes > base.input_bytes:
            slope = (r.max_rss_bytes - base.max_rss_bytes) / (r.input_bytes - base.input_bytes) * 100
        rows.append(
            [
                f"{r.target_mb} MB",
                harness.fmt_mb(r.input_bytes),
                harness.fmt_mb(r.max_rss_bytes),
                harness.fmt_seconds(r.wall_s),
                harness.fmt_float(harness.throughput_mb_s(r.input_bytes, r.wall_s), 1),
                harness.fmt_seconds(r.floor_s),
                harness.fmt_float(harness.throughput_mb_s(r.input_bytes, r.floor_s), 0),
                harness.fmt_float(slope, 2),
            ]
        )
    return harness.markdown_table(header, rows)


def tool_command(tool: str) -> tuple[list[str], list[str]]:
    if tool == "tlscope":
        command = [sys.executable, "-m", "tlscope"]
    else:
        command = [str(harness.find_tlparse(REPO / "bench" / ".venv-tlparse"))]
    # --no-browser only matters to tlparse (it would open a browser); pass it when understood.
    flags, dropped = harness.supported_flags(command, ["--overwrite", "--no-browser"])
    for flag in dropped:
        print(f"note: {tool} --help does not mention {flag}; running without it", file=sys.stderr)
    return command, flags


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--tool", choices=["tlscope", "tlparse"], default="tlscope")
    parser.add_argument("--source", type=Path, help="real trace to scale (default: the corpus recompiles trace)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="MB, default 50 100 250 500")
    parser.add_argument("--runs", type=int, default=1, help="runs per size (median time, max RSS)")
    parser.add_argument("--max-rss-mb", type=float, default=300.0)
    parser.add_argument("--flat-factor", type=float, default=1.25)
    parser.add_argument("--flat-slack-mb", type=float, default=20.0)
    parser.add_argument("--cache", type=Path, default=OUT, help="where scaled traces are kept")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    source = args.source or default_source()
    command, flags = tool_command(args.tool)
    results = []
    with tempfile.TemporaryDirectory(prefix="tlscope-memory-") as tmp:
        for size in sorted(args.sizes):
            trace = scaled_trace(source, size, args.cache)
            print(f"... {args.tool} on {trace.name}", file=sys.stderr, flush=True)
            floor = harness.read_floor(trace)
            wall, rss, code = measure(command, flags, trace, args.runs, Path(tmp))
            results.append(SizeResult(size, str(trace), harness.input_size(trace), floor, wall, rss, code))

    verdicts = judge(results, args.max_rss_mb, args.flat_factor, args.flat_slack_mb)
    lines = [
        f"{args.tool} ({' '.join(command)}), source {source}, {args.runs} run(s) per size; "
        f"RSS floor (a command allocating nothing): {harness.rss_floor() / MB:.1f} MB",
        "",
        table(results),
        "",
        *(f"{'PASS' if v.passed else 'FAIL'} {v.name}: {v.detail}" for v in verdicts),
    ]
    markdown = "\n".join(lines)
    print(markdown)
    args.results.mkdir(parents=True, exist_ok=True)
    data = {
        "tool": args.tool,
        "command": command,
        "source": str(source),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "results": [asdict(r) for r in results],
        "verdicts": [asdict(v) for v in verdicts],
    }
    (args.results / f"memory-{args.tool}-latest.md").write_text(markdown + "\n")
    (args.results / f"memory-{args.tool}-latest.json").write_text(json.dumps(data, indent=2) + "\n")
    return 0 if all(v.passed for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
