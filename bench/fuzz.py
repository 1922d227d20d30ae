"""Fuzz campaigns: mutated real traces through every command, until nothing breaks.

    nice -n 10 python bench/fuzz.py --inputs 20000            # a campaign (seed 1)
    python bench/fuzz.py --inputs 50000 --seed 7 --resume       # go on where seed 7 stopped
    python bench/fuzz.py --replay 1234 --seed 7                  # rebuild input 1234 to run by hand
    python bench/fuzz.py --inputs 200 --targets ranks --jobs 2  # only multi-rank folders

Each input is a structure-aware mutation of a real trace (bench/mutate.py: deep nesting, huge
numbers, long names, bad UTF-8, truncation, corrupt gzip, compile-id, string-table and rank edge
cases, regex bombs, ...) run as `tlscope` would be run on it: a single-log parse in any of its
modes (-p, -e, -i, --strict, ...), a multi-rank folder, `split` or `redact`. Runs go through a
pre-imported fork server (bench/fuzzrun.py) with a time limit, and each must pass every check:
no traceback, an exit status of the convention, no hang, no write outside OUT, no temporary
folder left, a failed run leaves OUT as it was, no process left behind.

The report: inputs tried, time, inputs per target, mode and mutation kind, failures grouped by
signature (with the first input's index, to replay), hangs, the slowest inputs, peak memory.
The campaign's state is saved every 100 inputs (`--state`, default bench/results/fuzz-<seed>.json),
so `--resume` goes on from where an interrupted campaign stopped; failing inputs are saved to
`--save` (default bench/results/fuzz-<seed>-failures/) to run again by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fuzzrun
import mutate

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TLSCOPE_SHARED", REPO.parent / "shared")) / "traces" / "tlparse"
RESULTS = REPO / "bench" / "results"


def default_roots() -> list[Path]:
    """The corpus, and tlparse's public traces when ../shared is there."""
    return [p for p in (REPO / "corpus" / "traces", SHARED) if p.is_dir()]


@dataclass
class Tally:
    """A campaign's figures so far (saved as JSON, so a campaign can be resumed)."""

    seed: int
    next_index: int = 0
    inputs: int = 0
    elapsed_s: float = 0.0
    targets: Counter[str] = field(default_factory=Counter)
    modes: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    peak_mb: float = 0.0
    peak_index: int = -1
    slowest: list[tuple[float, int, str]] = field(default_factory=list)

    def add(self, outcome: fuzzrun.Outcome) -> None:
        self.inputs += 1
        self.targets[outcome.target] += 1
        self.modes[f"{outcome.target} {outcome.mode}"] += 1
        self.kinds.update(set(outcome.kinds) or {"none"})
        self.statuses[str(outcome.status)] += 1
        if outcome.maxrss_mb > self.peak_mb:
            self.peak_mb, self.peak_index = outcome.maxrss_mb, outcome.index
        self.slowest = sorted([*self.slowest, (outcome.wall_s, outcome.index, outcome.target)], reverse=True)[:5]
        for failure in outcome.failures:
            entry = self.failures.setdefault(failure, {"count": 0, "first": outcome.index, "argv": outcome.argv})
            entry["count"] += 1

    @property
    def hangs(self) -> int:
        return sum(e["count"] for sig, e in self.failures.items() if sig == "hang")

    @property
    def tracebacks(self) -> int:
        return sum(e["count"] for sig, e in self.failures.items() if sig.startswith("traceback"))

    def to_json(self) -> dict[str, Any]:
        # Not dataclasses.asdict: it rebuilds a Counter from (key, count) pairs, counting the pairs.
        return {name: (dict(v) if isinstance(v, Counter) else v) for name, v in vars(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        tally = cls(**{k: v for k, v in data.items() if k not in ("targets", "modes", "kinds", "statuses")})
        for name in ("targets", "modes", "kinds", "statuses"):
            setattr(tally, name, Counter(data.get(name, {})))
        tally.slowest = [tuple(s) for s in tally.slowest]  # type: ignore[misc]
        return tally

    def report(self) -> str:
        rate = self.inputs / self.elapsed_s if self.elapsed_s else 0.0
        lines = [
            f"seed {self.seed}: {self.inputs} inputs in {self.elapsed_s:.0f} s ({rate:.1f}/s), "
            f"next index {self.next_index}",
            f"failures: {sum(e['count'] for e in self.failures.values())} "
            f"({self.tracebacks} tracebacks, {self.hangs} hangs)",
            f"peak memory: {self.peak_mb:.0f} MB (input {self.peak_index})",
            "exit statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items())),
            "targets: " + ", ".join(f"{k} {v}" for k, v in self.targets.most_common()),
            "mutation kinds (inputs): " + ", ".join(f"{k} {v}" for k, v in sorted(self.kinds.items())),
            "modes: " + ", ".join(f"{k} {v}" for k, v in self.modes.most_common(25)),
            "slowest: " + ", ".join(f"#{i} {t} {w:.1f} s" for w, i, t in self.slowest),
        ]
        for signature, entry in sorted(self.failures.items(), key=lambda kv: -kv[1]["count"]):
            lines.append(f"  FAIL x{entry['count']}: {signature} (first: input {entry['first']})")
        return "\n".join(lines)


def save_case(case: mutate.Case, folder: Path) -> Path:
    """The input's files and command line in `folder/<index>/`, to run by hand."""
    target = folder / str(case.index)
    if target.exists():
        shutil.rmtree(target)
    (target / "in").mkdir(parents=True)
    for rel, data in case.files.items():
        (target / "in" / rel).write_bytes(data)
    meta = {"argv": case.argv, "kinds": case.kinds, "source": case.source, "existing_out": case.existing_out}
    (target / "case.json").write_text(json.dumps(meta, indent=2))
    return target


def campaign(args: argparse.Namespace) -> Tally:
    pool = mutate.load_pool(args.roots)
    state: Path = args.state or RESULTS / f"fuzz-{args.seed}.json"
    tally = Tally(args.seed)
    if args.resume and state.exists():
        tally = Tally.from_json(json.loads(state.read_text()))
    stop = tally.next_index + args.inputs
    cases = (mutate.make_case(pool, args.seed, i, args.targets) for i in range(tally.next_index, stop))
    started = time.monotonic() - tally.elapsed_s
    state.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run(args, pool, cases, tally, state, started)
    except KeyboardInterrupt:  # Ctrl-C: keep what was done, so --resume goes on from here
        done = f"interrupted after {tally.inputs} inputs"
        print(f"{done}; --resume goes on from input {tally.next_index}", file=sys.stderr)
    tally.elapsed_s = time.monotonic() - started
    state.write_text(json.dumps(tally.to_json()))
    return tally


def _run(args: argparse.Namespace, pool: Any, cases: Iterator[Any], tally: Tally, state: Path, started: float) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="tlscope-fuzz-") as scratch,
        fuzzrun.Runner(Path(scratch), jobs=args.jobs, timeout=args.timeout) as runner,
    ):
        for outcome in runner.run(cases):
            tally.add(outcome)
            tally.next_index = max(tally.next_index, outcome.index + 1)
            if not outcome.ok:
                print(f"#{outcome.index} {outcome.target} {outcome.argv}: {outcome.failures}", file=sys.stderr)
                save_case(mutate.make_case(pool, args.seed, outcome.index, args.targets), args.save)
            if tally.inputs % 100 == 0:
                tally.elapsed_s = time.monotonic() - started
                state.write_text(json.dumps(tally.to_json()))
                print(f"{tally.inputs} inputs, {len(tally.failures)} failure kinds", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=20_000, help="inputs to try (default 20000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="inputs run at once (default 2)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a run is a hang (default 20)")
    parser.add_argument("--targets", nargs="+", default=list(mutate.TARGETS), choices=list(mutate.TARGETS))
    parser.add_argument("--roots", nargs="+", type=Path, default=default_roots(), help="folders of real traces")
    parser.add_argument("--state", type=Path, default=None, help="state file (default bench/results/fuzz-SEED.json)")
    parser.add_argument("--resume", action="store_true", help="go on from the state file's next index")
    parser.add_argument("--save", type=Path, default=None, help="folder for failing inputs")
    parser.add_argument("--replay", type=int, default=None, metavar="INDEX", help="write input INDEX and exit")
    args = parser.parse_args(argv)
    args.save = args.save or RESULTS / f"fuzz-{args.seed}-failures"
    if args.replay is not None:
        case = mutate.make_case(mutate.load_pool(args.roots), args.seed, args.replay, args.targets)
        folder = save_case(case, args.save)
        print(f"cd {folder} && python -m tlscope {' '.join(case.argv)}")
        return 0
    tally = campaign(args)
    print(tally.report())
    return 0 if not tally.failures else 1


if __name__ == "__main__":
    sys.exit(main())
