"""Measurement pieces shared by bench/run.py and bench/memory.py.

Kept free of policy (which cases, how many runs) so the arithmetic and formatting can be unit
tested without running anything big (tests/test_bench_harness.py).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TLPARSE_VERSION = "0.4.3"
CHUNK = 1 << 20  # the floor reads in 1 MiB chunks, like any sane streaming reader would
MB = 1e6  # sizes and throughput are decimal megabytes


@dataclass(frozen=True)
class Sample:
    """One finished child process: how long it took and the most memory it held."""

    wall_s: float
    max_rss_bytes: int
    exit_code: int
    #: user + system CPU seconds of the command and its waited-for children (page workers);
    #: on a shared machine a steadier figure than wall time, which waits for other jobs' turns.
    cpu_s: float = 0.0


@dataclass
class ToolRuns:
    """All timed runs of one tool on one case."""

    tool: str
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples) and all(s.exit_code == 0 for s in self.samples)

    def median_wall(self) -> float | None:
        return median([s.wall_s for s in self.samples]) if self.samples else None

    def median_cpu(self) -> float | None:
        return median([s.cpu_s for s in self.samples]) if self.samples else None

    def peak_rss(self) -> int | None:
        # The worst run is what a user has to provision for, so report the maximum.
        return max(s.max_rss_bytes for s in self.samples) if self.samples else None


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator/denominator, or None when either side is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def throughput_mb_s(size_bytes: int, seconds: float | None) -> float | None:
    if seconds is None or seconds <= 0:
        return None
    return size_bytes / MB / seconds


LAUNCHER = Path(__file__).resolve().parent / "launch.py"


def run_child(argv: Sequence[str], *, log_path: Path | None = None, env: dict[str, str] | None = None) -> Sample:
    """Run one command and measure only that command.

    The rusage comes from os.wait4 on exactly this command (never getrusage(RUSAGE_CHILDREN),
    which keeps the largest child ever reaped, so one big run would leak into every later
    figure), taken inside bench/launch.py: see there why forking from this process would
    inflate the peak RSS of small commands. Wall time is measured by the launcher too, from
    fork to exit, so its own start-up is not counted.
    """
    read_end, write_end = os.pipe()
    log = log_path.open("wb") if log_path is not None else subprocess.DEVNULL
    try:
        launcher = [sys.executable, "-S", "-I", str(LAUNCHER), str(write_end), *argv]
        proc = subprocess.Popen(
            launcher, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env, pass_fds=(write_end,)
        )
        os.close(write_end)
        with os.fdopen(read_end, "rb") as report:
            text = report.read().decode()
        proc.wait()
    finally:
        if log_path is not None and not isinstance(log, int):
            log.close()
    fields = text.split()
    if proc.returncode != 0 or len(fields) != 4:
        raise RuntimeError(f"launcher failed (exit {proc.returncode}) for {list(argv)}")
    wall, maxrss_kib, exit_code, cpu = float(fields[0]), int(fields[1]), int(fields[2]), float(fields[3])
    return Sample(wall_s=wall, max_rss_bytes=maxrss_kib * 1024, exit_code=exit_code, cpu_s=cpu)


def rotated_rounds(commands: dict[str, list[str]], out: Path, rounds: int) -> dict[str, list[Sample]]:
    """`rounds` timed runs of each command, one each per round in a rotating order (A B, B A with
    two; A B C, B C A, C A B with three), after one untimed round that warms the page cache and
    the bytecode. `out` (the commands' output folder) is removed before each run and at the end.
    A command that fails stops the measurement."""
    names = list(commands)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for i in range(rounds + 1):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            shutil.rmtree(out, ignore_errors=True)
            sample = run_child(commands[name])
            if sample.exit_code != 0:
                raise RuntimeError(f"{name} exited with status {sample.exit_code}: {commands[name][:3]}")
            if i:
                samples[name].append(sample)
    shutil.rmtree(out, ignore_errors=True)
    return samples


def compile_bytecode(src: Path) -> None:
    """Write the .pyc files of every module under `src`, as `pip install` does.

    Without them each run compiles tlscope's ~200 modules from source first (~50 ms of CPU on
    this machine, a quarter of a small log's run): what a developer's checkout pays under
    PYTHONDONTWRITEBYTECODE=1 (set in this machine's environment), never an installed tool.
    Timing that would measure the checkout, not tlscope.
    """
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, stdout=subprocess.DEVNULL)


def package_dir(command: Sequence[str]) -> Path:
    """The tlscope package folder that `command` (a Python interpreter, then `-m tlscope` or
    `-c ...`) or the console script imports, as this process's environment resolves it."""
    python = command[0] if Path(command[0]).name.startswith("python") else sys.executable
    where = subprocess.run(
        [python, "-c", "import os, tlscope; print(os.path.dirname(tlscope.__file__))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(where.stdout.strip())


def rss_floor() -> int:
    """Peak RSS reported for a command that allocates nothing: the launcher's own footprint."""
    return run_child(["true"]).max_rss_bytes


def input_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


def input_size(path: Path) -> int:
    return sum(p.stat().st_size for p in input_files(path))


def read_once(paths: Iterable[Path]) -> int:
    total = 0
    for path in paths:
        with path.open("rb", buffering=0) as stream:
            while chunk := stream.read(CHUNK):
                total += len(chunk)
    return total


def read_floor(path: Path, repeats: int = 3) -> float:
    """Median time to read the input once in 1 MiB chunks, after a warm-up read.

    The warm-up puts the file in the page cache, as the tools' own earlier runs do, so the floor
    is the cost of merely getting the bytes into a process: no parser can beat it.
    """
    files = input_files(path)
    read_once(files)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read_once(files)
        times.append(time.perf_counter() - start)
    return median(times)


def decompress_tree(src: Path, dst: Path) -> Path:
    """Copy a file or directory to dst, gunzipping every *.gz (tlparse cannot read gzip).

    A directory keeps its layout and file names minus ".gz", so tlparse's rank-file discovery
    (dedicated_log_torch_trace_rank_N_*.log) still works on the copy.
    """
    if src.is_dir():
        dst.mkdir(parents=True, exist_ok=True)
        for child in sorted(src.iterdir()):
            decompress_tree(child, dst / child.name)
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix == ".gz":
        target = dst.with_name(dst.name[: -len(".gz")])
        with gzip.open(src, "rb") as raw, target.open("wb") as out:
            shutil.copyfileobj(raw, out, CHUNK)
        return target
    shutil.copyfile(src, dst)
    return dst


#: tlparse's (and tlscope's) rank-log name: dedicated_log_torch_trace_rank_<N>[_suffix].log[.gz].
_RANK_NAME = re.compile(r"^(dedicated_log_torch_trace_rank_)(\d+)((?:_[^/]*)?\.log)(?:\.gz)?$")
#: The rank field of a log line's JSON envelope (payload lines start with a tab and never match).
_RANK_FIELD = re.compile(rb'"rank": ?(\d+)')


def rank_copies(src: Path, dst: Path, ranks: int) -> Path:
    """dst/ holding `ranks` rank logs made from src/'s real ones: rank k is a copy of source rank k % n.

    A bigger job than was traced, for the multi-rank benchmark. Both tools find a rank log by its
    file name, so each copy is renamed to its new rank (suffix kept); tlparse also reads the rank
    from the envelopes (and tlscope counts lines whose rank differs from the first as problems),
    so the envelope's `"rank": N` is rewritten too. Payload lines are copied untouched: their
    MD5s (`has_payload`) stay valid. Plain `.log` files come out (tlparse cannot read gzip).
    """
    sources = sorted(
        ((int(m.group(2)), path) for path in src.iterdir() if (m := _RANK_NAME.match(path.name))),
        key=lambda item: item[0],
    )
    if not sources:
        raise ValueError(f"{src} holds no rank logs")
    dst.mkdir(parents=True, exist_ok=True)
    for new_rank in range(ranks):
        old_rank, path = sources[new_rank % len(sources)]
        match = _RANK_NAME.match(path.name)
        assert match is not None
        target = dst / f"{match.group(1)}{new_rank}{match.group(3)}"
        digits = str(new_rank).encode()

        def rerank(m: re.Match[bytes], old: int = old_rank, digits: bytes = digits) -> bytes:
            # Only the log's own rank: keep the field's spacing, change its value.
            return m.group(0)[: m.start(1) - m.start(0)] + digits if int(m.group(1)) == old else m.group(0)

        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as raw, target.open("wb") as out:
            for line in raw:
                out.write(line if line[:1] == b"\t" else _RANK_FIELD.sub(rerank, line, count=1))
    return dst


def find_tlparse(venv: Path) -> Path:
    """The reference tlparse: $TLPARSE_BIN, else `tlparse` on PATH, else a venv made at `venv`."""
    env = os.environ.get("TLPARSE_BIN")
    if env:
        return Path(env)
    found = shutil.which("tlparse")
    if found:
        return Path(found)
    binary = venv / "bin" / "tlparse"
    if not binary.exists():
        print(f"note: installing tlparse=={TLPARSE_VERSION} into {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"tlparse=={TLPARSE_VERSION}"], check=True)
    return binary


def supported_flags(command: Sequence[str], wanted: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split `wanted` into the flags `command --help` mentions and those it does not."""
    result = subprocess.run([*command, "--help"], capture_output=True, text=True, check=False)
    text = result.stdout + result.stderr
    kept = [flag for flag in wanted if flag in text.split() or f"{flag}," in text or f"[{flag}]" in text]
    dropped = [flag for flag in wanted if flag not in kept]
    return kept, dropped


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    # Tiny floors (0.000035 s) must not print as 0.000, nor in exponent form.
    if value < 0.001:
        return f"{value:.6f}"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def fmt_mb(value_bytes: int | None) -> str:
    return "-" if value_bytes is None else f"{value_bytes / MB:.1f}"


def fmt_float(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GitHub markdown table; the first column is left-aligned, numbers right-aligned."""
    rows = [list(row) for row in rows]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row has {len(row)} cells, header has {len(header)}")
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    align = [":" + "-" * (widths[0] - 1)] + ["-" * (w - 1) + ":" for w in widths[1:]]

    def line(cells: Sequence[str]) -> str:
        padded = [
            str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    return "\n".join([line(header), line(align), *(line(row) for row in rows)])
