"""Issue 2's memory target: tlscope's peak RSS stays small and flat as logs grow.

    python bench/memory.py                        # tlscope at 50, 100, 250, 500 MB
    python bench/memory.py --tool tlparse         # same harness on the reference tool
    python bench/memory.py --sizes 50 100 --runs 3 --source corpus/traces/simple/x.log.gz
    python bench/memory.py --traces /work/big/big-250MB.log /work/big/big-500MB.log /work/big/big-1GB.log \
        --trees /work/main /work/wt/me --flat-mb 5     # issue 21: flat at 1 GB, two trees A/B

Builds synthetic traces with corpus/scale.py from one real trace (cached in bench/out/,
git-ignored), runs `TOOL TRACE -o TMP --overwrite` on each, and prints peak RSS, wall time and
throughput next to the read floor. Then it checks, printing PASS/FAIL (exit 1 on any FAIL):

* ceiling: peak RSS < --max-rss-mb (300) at every size;
* flatness: RSS(largest) <= --flat-factor (1.25) x RSS(smallest) + --flat-slack-mb (20);
  with --flat-mb X instead: RSS(largest) - RSS(smallest) <= X MB (issue 21's flat: the peak does
  not grow with the log, e.g. 5 MB from 250 MB to 1 GB).

`--traces` takes scaled traces already made (e.g. by `corpus/scale.py` under /work/big/) instead
of building them; `--trees` runs each trace with each tree's `src/` on PYTHONPATH, the trees
alternating per size (A/B interleaved). The main process's RSS is sampled through the run
(`--sample` seconds, VmRSS from /proc): the table shows it at 10%, 50% and 90% of the run's
wall time and its sampled maximum, so growth through the pass shows apart from the end's peak.

Why this flatness rule: a streaming parser holds a constant working set plus small per-compile
state, so from 50 MB to 500 MB (10x the input and, in scaled traces, 10x the compile ids) its
RSS may grow a little but not with the input. Anything that keeps a fraction f of the input
grows by f x 450 MB over that range; the rule caps that at 25% of the 50 MB footprint plus
20 MB of allocator noise (~0.1 MB of RSS per MB of input at a ~100 MB baseline). A tool that
keeps the whole log, like tlparse 0.4.3, fails it by an order of magnitude.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
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
    #: The tree whose src/ was on PYTHONPATH ("" = the environment's tlscope), and its run's CPU.
    tree: str = ""
    cpu_s: float = 0.0
    #: The main process's RSS in MB at 10%, 50%, 90% of the wall time and the sampled maximum.
    rss_through: list[float] = field(default_factory=list)


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


class RssSampler(threading.Thread):
    """VmRSS of the measured command's main process (bench/launch.py's child, found by the
    launcher's command line holding `marker`) every `every` seconds, as (seconds, MB)."""

    def __init__(self, marker: str, every: float) -> None:
        super().__init__(daemon=True)
        self.marker, self.every = marker, every
        self.samples: list[tuple[float, float]] = []
        self.done = threading.Event()

    def _launcher(self) -> int | None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(part.endswith(b"launch.py") for part in cmdline) and self.marker.encode() in cmdline:
                return int(entry.name)
        return None

    def _rss_mb(self, pid: int) -> float | None:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def run(self) -> None:
        start = time.perf_counter()
        child: int | None = None
        while not self.done.wait(self.every):
            if child is None:
                launcher = self._launcher()
                try:
                    found = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()
                except OSError:
                    found = []
                child = int(found[0]) if launcher is not None and found else None
            rss = self._rss_mb(child) if child is not None else None
            if rss is not None:
                self.samples.append((time.perf_counter() - start, rss))

    def through(self) -> list[float]:
        """RSS at 10%, 50%, 90% of the sampled time, and the largest sample (MB)."""
        if not self.samples:
            return []
        end = self.samples[-1][0]
        at = [next(rss for t, rss in self.samples if t >= share * end) for share in (0.1, 0.5, 0.9)]
        return [*at, max(rss for _, rss in self.samples)]


def measure(
    command: Sequence[str], flags: Sequence[str], trace: Path, runs: int, work: Path, every: float = 0.5
) -> tuple[float, int, int, float, list[float]]:
    """Median wall time, max peak RSS, the worst exit code, median CPU and the sampled RSS through
    the last run, over `runs` runs."""
    walls, cpus, rss, code = [], [], 0, 0
    through: list[float] = []
    for _ in range(runs):
        out = work / "out"
        if out.exists():
            shutil.rmtree(out)
        sampler = RssSampler(str(out), every)
        sampler.start()
        sample = harness.run_child([*command, str(trace), *flags, "-o", str(out)], log_path=work / "tool.log")
        sampler.done.set()
        sampler.join()
        through = sampler.through()
        walls.append(sample.wall_s)
        cpus.append(sample.cpu_s)
        rss = max(rss, sample.max_rss_bytes)
        code = code or sample.exit_code
    if out.exists():
        shutil.rmtree(out)
    return harness.median(walls), rss, code, harness.median(cpus), through


def judge(
    results: Sequence[SizeResult], max_rss_mb: float, factor: float, slack_mb: float, flat_mb: float | None = None
) -> list[Verdict]:
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
    for tree in dict.fromkeys(r.tree for r in results):
        mine = [r for r in results if r.tree == tree]
        if len(mine) < 2:
            continue
        small, big = min(mine, key=lambda r: r.input_bytes), max(mine, key=lambda r: r.input_bytes)
        big_rss, small_rss = big.max_rss_bytes / MB, small.max_rss_bytes / MB
        limit = small_rss + flat_mb if flat_mb is not None else factor * small_rss + slack_mb
        rule = (
            f"{small_rss:.1f} + {flat_mb:.0f}"
            if flat_mb is not None
            else f"{factor} x {small_rss:.1f} + {slack_mb:.0f}"
        )
        detail = f"RSS at {big.target_mb} MB = {big_rss:.1f} MB <= {rule} = {limit:.1f} MB"
        verdicts.append(Verdict(f"flatness{' ' + tree if tree else ''}", big_rss <= limit, detail))
    return verdicts


def table(results: Sequence[SizeResult]) -> str:
    header = [
        "tree",
        "size",
        "input MB",
        "peak RSS MB",
        "RSS at 10/50/90%, max sampled",
        "wall s",
        "CPU s",
        "MB/s",
        "floor s",
        "RSS MB per 100 MB in",
    ]
    rows = []
    for r in results:
        base = min((b for b in results if b.tree == r.tree), key=lambda b: b.input_bytes)
        slope = None
        if base is not None and r.input_bytes > base.input_bytes:
            slope = (r.max_rss_bytes - base.max_rss_bytes) / (r.input_bytes - base.input_bytes) * 100
        rows.append(
            [
                r.tree or "-",
                f"{r.target_mb} MB",
                harness.fmt_mb(r.input_bytes),
                harness.fmt_mb(r.max_rss_bytes),
                " / ".join(f"{v:.1f}" for v in r.rss_through) or "-",
                harness.fmt_seconds(r.wall_s),
                harness.fmt_seconds(r.cpu_s),
                harness.fmt_float(harness.throughput_mb_s(r.input_bytes, r.wall_s), 1),
                harness.fmt_seconds(r.floor_s),
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


@contextlib.contextmanager
def _pythonpath(tree: Path | None) -> Iterator[None]:
    """Runs started inside import tlscope from `tree`/src (children inherit os.environ)."""
    old = os.environ.get("PYTHONPATH")
    if tree is not None:
        os.environ["PYTHONPATH"] = str(tree.resolve() / "src")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


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
    parser.add_argument("--traces", type=Path, nargs="+", help="scaled traces already made (instead of --sizes)")
    parser.add_argument("--trees", type=Path, nargs="+", help="checkouts whose src/ to run, alternating")
    parser.add_argument("--flat-mb", type=float, help="flatness: RSS(largest) - RSS(smallest) <= this many MB")
    parser.add_argument("--sample", type=float, default=0.5, help="seconds between RSS samples")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    source = args.source or default_source()
    command, flags = tool_command(args.tool)
    results = []
    traces = args.traces or [scaled_trace(source, size, args.cache) for size in sorted(args.sizes)]
    with tempfile.TemporaryDirectory(prefix="tlscope-memory-") as tmp:
        for trace in sorted(traces, key=harness.input_size):
            floor = harness.read_floor(trace)
            for tree in args.trees or [None]:
                print(f"... {args.tool} {tree or ''} on {trace.name}", file=sys.stderr, flush=True)
                with _pythonpath(tree):
                    wall, rss, code, cpu, through = measure(command, flags, trace, args.runs, Path(tmp), args.sample)
                size = round(harness.input_size(trace) / MB)
                results.append(
                    SizeResult(
                        size,
                        str(trace),
                        harness.input_size(trace),
                        floor,
                        wall,
                        rss,
                        code,
                        str(tree or ""),
                        cpu,
                        through,
                    )
                )

    verdicts = judge(results, args.max_rss_mb, args.flat_factor, args.flat_slack_mb, args.flat_mb)
    lines = [
        f"{args.tool} ({' '.join(command)}), {'traces given' if args.traces else f'source {source}'}, "
        f"{args.runs} run(s) per size; "
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
