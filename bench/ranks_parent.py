"""The parent's side of an N-rank job: its CPU and peak memory, the rank parses left out.

    python bench/ranks_parent.py JOB_OUT --ranks 8 64 256 1000 [--src DIR]

JOB_OUT is the output folder of a parsed job (e.g. `tlscope corpus/traces/ranks_same_4 -o OUT`
or a bench/ranks.py job kept with --keep). Each run is `tlscope LOGS -o OUT -j 2` in a fresh
process (`--src`: another tree's src/, e.g. a revision's from `git archive`), with the rank
workers' `parse_rank` replaced: rank r returns JOB_OUT's rank (r mod its ranks) summary, read
back from its multi_rank_summary.json and renumbered, and hard-links that rank's manifest.json,
raw.jsonl and timeline.bin into rank_r/. So everything the parent does (the pool, the results,
the landing page, the commit, the command's last words) runs as in a real N-rank job, in
seconds instead of minutes, and a 2-core machine shared with other work measures it steadily:
the parent's CPU seconds (its own, not the workers') and its peak RSS (ru_maxrss), with the
peak RSS of each phase (sampled every 50 ms): parse (ranks running), landing, after (the
output's commit and the command's report of the ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

DRIVER = r"""
import os, resource, sys, threading, time
from pathlib import Path
import msgspec
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.pipeline import ranks as R
source, n, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
summaries = msgspec.json.decode((source / "multi_rank_summary.json").read_bytes(), type=list[RankSummary])

def parse_rank(log, rank, folder, options, sinks, landing=True):
    base = summaries[rank % len(summaries)]
    Path(folder).mkdir(parents=True, exist_ok=True)
    for name in ("manifest.json", "raw.jsonl", "timeline.bin"):
        os.link(source / f"rank_{base.rank}" / name, Path(folder) / name)
    summary = msgspec.structs.replace(base, rank=rank)
    if summary.overview is not None:
        line = msgspec.structs.replace(summary.overview.line, rank=rank)
        summary.overview = msgspec.structs.replace(summary.overview, line=line)
    return R.RankResult(summary)

R.parse_rank = parse_rank
logs = Path(out + ".logs")
logs.mkdir(exist_ok=True)
for r in range(n):
    (logs / f"dedicated_log_torch_trace_rank_{r}_x.log").touch()
phase, peaks = ["parse"], {}

def sample():
    while True:
        rss = int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) / 1024
        peaks[phase[0]] = max(peaks.get(phase[0], 0.0), rss)
        time.sleep(0.05)

threading.Thread(target=sample, daemon=True).start()
from tlscope.write.landing import writer as W
# The landing page's writer, wherever the tree under test calls it from (pipeline/ranks.py imported
# it at the top until it was imported once the workers are forked).
landing = W.write_landing

def write_landing(*args, **kwargs):
    phase[0] = "landing"
    try:
        return landing(*args, **kwargs)
    finally:
        phase[0] = "after"

W.write_landing = write_landing
if hasattr(R, "write_landing"):
    R.write_landing = write_landing
from tlscope.cli import main
code = main([str(logs), "-o", out, "--overwrite", "--no-browser", "-j", "2"])
time.sleep(0.06)
use = resource.getrusage(resource.RUSAGE_SELF)
print("RESULT", {"cpu_s": round(use.ru_utime + use.ru_stime, 2), "peak_mb": round(use.ru_maxrss / 1024, 1),
                 "phases_mb": {k: round(v, 1) for k, v in peaks.items()}, "exit": code})
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("job", type=Path, help="the output folder of a parsed job")
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 256, 1000])
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the tlscope tree to run (its src/)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tlscope-ranks-parent"))
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    for n in args.ranks:
        out = args.work / f"out_{n}"
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(args.job), str(n), str(out)], env=env, capture_output=True, text=True
        )
        result = done.stdout.rsplit("RESULT", 1)[-1].strip() if "RESULT" in done.stdout else done.stderr[-500:]
        print(json.dumps({"ranks": n, "load": round(os.getloadavg()[0], 1), "result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
