"""The graphs files stage alone: read each graph payload of a log, make its graphs/<md5>.json bytes.

    python bench/graph_files.py LOG [--base REV] [--runs 5] [--callgrind]

What the graphs worker does for a normal run (`write/graph_store.py`'s `graph_file` and the
encode of `write_graph`), without its fork, the payload files' reads or the writes: each run is a
fresh Python process (the parser's line caches start empty, as in a worker), which first reads
every graph payload into memory (untimed), with the collector's threshold of a run
(`cli.GC_THRESHOLD`), then makes every file's bytes. It prints the CPU of
that loop (`time.process_time`) and a sha256 over all the files' bytes, so two trees can be
checked to make the same bytes.

The payloads are the ones a run of this tree writes: `python -m tlscope LOG` once into a cache
folder under $TMPDIR (kept; named after the log's size and mtime), then every payloads/<md5>.txt
that has a graphs/<md5>.json.

`--base REV` measures REV's src/ (git archive, bytecode compiled as bench/ab.py does) and this
checkout's alternately. `--callgrind` counts instructions instead (valgrind, PYTHONHASHSEED=0,
one untimed run of each side first): a run with the loop and a run that only loads the payloads,
the difference being the stage's own; the machine's load cannot move it.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from ab import extract
from harness import REPO

#: The measured child: argv = src, payload list file, and "load" (the payloads read, nothing
#: more), "all" (and every file's bytes made) or "check" ("all", then its CPU and the bytes'
#: sha256 printed: the digest is ~250M instructions, so callgrind counts "all" without it).
_CHILD = r"""
import gc, hashlib, sys, time
sys.path.insert(0, sys.argv[1])
from tlscope.cli import GC_THRESHOLD
gc.set_threshold(GC_THRESHOLD)  # as in a run (cli.console_main), whose fork the graphs worker is
from tlscope.write.graph_store import _ENCODER, graph_file
items = []
for line in open(sys.argv[2]).read().splitlines():
    md5, path = line.split(" ", 1)
    with open(path, "rb") as f:
        items.append((md5, f.read()))
if sys.argv[3] != "load":
    out = []
    start = time.process_time()
    for md5, payload in items:
        out.append(_ENCODER.encode(graph_file(md5, payload)))
    cpu = time.process_time() - start
if sys.argv[3] == "check":
    digest = hashlib.sha256(b"".join(out)).hexdigest()
    print(f"{cpu:.6f} {digest} {len(out)}")
"""


def payload_list(log: Path) -> Path:
    """A file listing `md5 path` of each graph payload of `log` (made once, under $TMPDIR)."""
    stat = log.stat()
    cache = Path(tempfile.gettempdir()) / f"graph_files-{log.name}-{stat.st_size}-{int(stat.st_mtime)}"
    listing = cache / "graphs.txt"
    if listing.exists():
        return listing
    out = cache / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-m", "tlscope", str(log), "-o", str(out), "--overwrite", "--no-browser"]
    subprocess.run(argv, env=env, check=True, capture_output=True)
    md5s = sorted(p.stem for p in (out / "graphs").glob("*.json"))
    listing.write_text("".join(f"{m} {out / 'payloads' / f'{m}.txt'}\n" for m in md5s))
    return listing


def run_once(src: Path, listing: Path) -> tuple[float, str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(src), str(listing), "check"], check=True, capture_output=True, text=True
    )
    cpu, digest, files = done.stdout.split()
    return float(cpu), digest, int(files)


def instructions(src: Path, listing: Path, mode: str) -> float:
    """Millions of instructions of one child under callgrind."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    argv += [sys.executable, "-c", _CHILD, str(src), str(listing), mode]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind gave no count: {done.stderr[-300:]}")
    return int(found.group(1)) / 1e6


def stage_instructions(src: Path, listing: Path) -> float:
    """The loop's own instructions (millions): a full run less a run that only loads."""
    return instructions(src, listing, "all") - instructions(src, listing, "load")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--base", help="a git revision to measure against, alternately")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true", help="count instructions (valgrind) instead of CPU")
    args = parser.parse_args(argv)
    listing = payload_list(args.log.resolve())
    sides = {"new": REPO / "src"}
    with tempfile.TemporaryDirectory() as tmp:
        if args.base:
            sides = {"base": extract(args.base, Path(tmp) / "base"), **sides}
        for src in sides.values():
            harness.compile_bytecode(src)
        if args.callgrind:
            for src in sides.values():
                instructions(src, listing, "all")  # untimed: caches and pages warm
        results: dict[str, list[float]] = {name: [] for name in sides}
        digests: dict[str, set[str]] = {name: set() for name in sides}
        for round_ in range(args.runs):
            names = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for name in names:
                if args.callgrind:
                    results[name].append(stage_instructions(sides[name], listing))
                    continue
                cpu, digest, files = run_once(sides[name], listing)
                results[name].append(cpu)
                digests[name].add(f"{digest} ({files} files)")
    unit = "M instructions" if args.callgrind else "s CPU"
    for name, values in results.items():
        spread = f"{min(values):.3f}-{max(values):.3f}"
        print(f"{name}: median {statistics.median(values):.3f} {unit} ({spread}, {len(values)} runs)")
        if digests[name]:
            print(f"  bytes: {', '.join(sorted(digests[name]))}")
    if "base" in results:
        ratio = statistics.median(results["new"]) / statistics.median(results["base"])
        print(f"new/base: {ratio:.3f}")
        if digests["base"] and digests["base"] != digests["new"]:
            print("  the two sides made DIFFERENT bytes")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
