"""timeline.bin: its size against the layout before and a fixed-record alternative, its writer's
CPU, and its JS decode time; a base revision against this checkout (issue 22, point 1).

    python bench/timeline_pack.py OUT [OUT ...] [--base main] [--rounds 3]

OUT is an output folder of `tlscope` (a log's, or a job's with rank_N/ folders). From its
chromium_events.json (a job: each rank's) the base revision's writer and this checkout's each
write timeline.bin the way a parse does (a job: a file per rank, then the job's file merged from
them), in fresh subprocesses, alternating base and new round by round (A B B A ...). Per OUT:

- events, and chromium_events.json's bytes per timeline event (a `B`/`E` pair is one event);
- each side's whole file (header, blocks, tables) in bytes per event, and gzipped (level 6, what
  `tlscope serve` sends for it);
- "fixed": what a fixed narrower record would take for the same file (computed from its counts:
  u32 start offset, u32 duration with a unit bit, u8 label and compile-id indexes when the
  tables fit, else u16 or u24, a kind/unit byte and a depth byte: 12 to 16 bytes, with
  version 1's 16-byte block headers and tables);
- the writer's CPU seconds per round (feeding the decoded events and closing the files, the
  job's merge included; decoding the JSON is not counted): median and range per side;
- the JS client's `decodeTimeline` on each side's file (node, this checkout's decoder, which
  reads both layout versions): median ms of --decodes runs after one warm-up.

The base runs from its src/ extracted with git archive (bench/ab.py's `extract`). The load
average is printed before and after. Output: a markdown table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab import extract, order  # bench/ is a directory of scripts, not a package
from harness import REPO

#: Run with a src/ first on sys.path: writes each part's timeline.bin (and merges a job's) and
#: prints the writer's CPU seconds.
_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import msgspec
from pathlib import Path
from tlscope.write.timeline_writer import TimelineWriter, merge
parts, out, job = json.loads(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "job"
cpu = 0.0
written = []
for rank, chromium in parts:
    events = msgspec.json.decode(Path(chromium).read_bytes())
    path = out / f"part_{len(written)}.bin"
    t0 = time.process_time()
    writer = TimelineWriter(path)
    for event in events:
        writer.add(event, rank)
    writer.close()
    cpu += time.process_time() - t0
    written.append((rank, path))
if job:
    t0 = time.process_time()
    merge(written, out / "timeline.bin")
    cpu += time.process_time() - t0
else:
    written[0][1].rename(out / "timeline.bin")
print(json.dumps({"cpu_s": cpu}))
"""

_JS_DECODE = r"""
import { readFileSync } from 'node:fs';
import { decodeTimeline } from 'LIB';
const [file, runs] = [process.argv[2], Number(process.argv[3])];
const bytes = readFileSync(file);
decodeTimeline(bytes);
const times = [];
for (let i = 0; i < runs; i += 1) {
  const t0 = performance.now();
  decodeTimeline(bytes);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], min_ms: times[0], max_ms: times.at(-1) }));
"""


def parts_of(out: Path) -> tuple[list[tuple[int | None, str]], bool]:
    """(rank, chromium_events.json) of each rank of a job, or of the one log."""
    ranks = sorted((int(p.name[5:]), p) for p in out.glob("rank_*") if p.name[5:].isdigit())
    if ranks:
        return [(n, str(p / "chromium_events.json")) for n, p in ranks], True
    logged = json.loads((out / "manifest.json").read_text())["ranks"]
    return [(logged[0] if len(logged) == 1 else None, str(out / "chromium_events.json"))], False


def chromium_figures(parts: list[tuple[int | None, str]]) -> tuple[int, int, int]:
    """Bytes of the chromium_events.json files, their elements, and their `E`s."""
    import msgspec

    size = elements = ends = 0
    for _, path in parts:
        data = Path(path).read_bytes()
        events = msgspec.json.decode(data)
        size += len(data)
        elements += len(events)
        ends += sum(1 for e in events if isinstance(e, dict) and e.get("ph") == "E")
    return size, elements, ends


def file_figures(path: Path) -> dict[str, Any]:
    """Size, gzipped size, events and (for the fixed-record estimate) blocks and table sizes."""
    from tlscope.format import timeline_bin as tl

    data = path.read_bytes()
    with path.open("rb") as f:
        header, strings, labels, cids = tl.read_tables(f)
        blocks = 0
        f.seek(tl.HEADER.size)
        while f.tell() < header.tables_offset:
            if header.version == tl.VERSION:
                tl.read_block2(f)
            else:
                count = tl.BLOCK.unpack(f.read(tl.BLOCK.size))[1]
                f.seek(count * tl.EVENT.size, os.SEEK_CUR)
            blocks += 1
    v1_tables = 12 + sum(4 + len(s.encode("utf-8", "surrogatepass")) for s in strings) + 8 * len(labels) + 4 * len(cids)
    width = lambda n: 1 if n <= 255 else 2 if n <= 65535 else 3  # noqa: E731 (an index plus "none")
    record = 4 + 4 + width(len(labels)) + width(len(cids) + 1) + 2
    fixed = tl.HEADER.size + 16 * blocks + record * header.events + v1_tables
    return {
        "version": header.version,
        "bytes": len(data),
        "gzip": len(gzip.compress(data, 6)),
        "events": header.events,
        "blocks": blocks,
        "fixed_bytes": fixed,
        "fixed_record": record,
    }


def js_decode(path: Path, runs: int) -> dict[str, float]:
    node = shutil.which("node")
    if node is None:
        return {}
    script = REPO / "bench" / "out" / "timeline_decode.mjs"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(_JS_DECODE.replace("'LIB'", json.dumps((REPO / 'src/tlscope/viewers/lib/timeline.js').as_uri())))
    run = subprocess.run([node, str(script), str(path), str(runs)], cwd=REPO, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(run.stdout)
    return result


def measure(out: Path, srcs: dict[str, Path], rounds: int, work: Path) -> dict[str, Any]:
    parts, job = parts_of(out)
    cpu: dict[str, list[float]] = {"base": [], "new": []}
    for side in order(rounds):
        dest = work / side
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        argv = [sys.executable, "-c", _CHILD, str(srcs[side]), json.dumps(parts), str(dest), "job" if job else "log"]
        run = subprocess.run(argv, capture_output=True, text=True, check=True)
        cpu[side].append(json.loads(run.stdout)["cpu_s"])
    size, elements, ends = chromium_figures(parts)
    row: dict[str, Any] = {"trace": out.name, "ranks": len(parts) if job else 1, "chromium_bytes": size}
    row["chromium_elements"], row["chromium_ends"] = elements, ends
    for side in ("base", "new"):
        row[side] = file_figures(work / side / "timeline.bin")
        row[side]["cpu_s"] = cpu[side]
        row[side]["decode"] = js_decode(work / side / "timeline.bin", 9)
    return row


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ({min(values) * 1000:.1f}–{max(values) * 1000:.1f})"


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| trace | ranks | events | chromium B/event | base B/event | new B/event | fixed B/event | "
        "base gz | new gz | writer ms base | writer ms new | JS decode ms base | JS decode ms new |"
    )
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        b, n = r["base"], r["new"]
        ev = max(n["events"], 1)
        lines.append(
            f"| {r['trace']} | {r['ranks']} | {n['events']:,} | {r['chromium_bytes'] / ev:,.0f} | "
            f"{b['bytes'] / ev:.2f} (v{b['version']}) | {n['bytes'] / ev:.2f} (v{n['version']}) | "
            f"{n['fixed_bytes'] / ev:.2f} ({n['fixed_record']} B records) | {b['gzip'] / ev:.2f} | {n['gzip'] / ev:.2f} | "
            f"{_spread(b['cpu_s'])} | {_spread(n['cpu_s'])} | "
            f"{b['decode'].get('median_ms', float('nan')):.2f} | {n['decode'].get('median_ms', float('nan')):.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("outs", type=Path, nargs="+", help="output folders (a log's or a job's)")
    parser.add_argument("--base", default="main", help="git revision to compare against (default: main)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (each writes with both sides once)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    print(f"load before: {os.getloadavg()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="timeline-pack-") as tmp:
        srcs = {"base": extract(args.base, Path(tmp) / "base"), "new": REPO / "src"}
        for out in args.outs:
            rows.append(measure(out, srcs, args.rounds, Path(tmp) / "work"))
            print(json.dumps(rows[-1]), flush=True)
    print(f"load after: {os.getloadavg()}")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
