"""`python bench/remote_requests.py --base DIR`: a remote output folder read the way the explorer
reads it, from a store a fixed round trip away, by two trees of tlscope (before and after).

    python bench/remote_requests.py --base /tmp/main-tree --delay-ms 20 --rounds 7
    python bench/remote_requests.py --base /tmp/main-tree --no-head     # a host refusing HEAD

The output folder of a real corpus trace (`--trace`, default graph_breaks_repeated: 118 payloads)
is written by this tree, then served by bench/staticserve.py (its own process), which holds every
request `--delay-ms` ms before answering (a store that far away: each request a round trip) and
counts requests by method. Two `tlscope serve` processes, one per tree (`--base DIR`: a tree with
a `src/` of tlscope, e.g. `git archive <commit> src | tar -x -C DIR`; this tree's `src/` is
"after"), each with the host as a store and the folder as a trace; the trace's readiness is
checked once before the rounds. Each round, the two servers in turn (interleaved, the order
alternating) first open a folder they have not seen (a fresh name of the same folder on the host:
`POST /api/traces`, whose summary reads the folder's markers, then its index files: what a user
waits for when opening a trace), then read every file of the folder as the explorer does: its
index files first (manifest.json and compiles.json, then the other JSON files at the top and
raw.jsonl), then its payloads and graphs, `--concurrency` (6: a browser's connections to one
HTTP/1.1 host) keep-alive connections at once, each body read whole. Reported per tree: the wall
time of the opening, of the index files and of the whole folder (median, min-max over rounds),
and the store's requests per file of the whole folder's read, by method (every round asks the
same).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from serve import Connection, process_printing_url  # noqa: E402 - bench/ is a folder of scripts


def output_folder(trace: str, out: Path) -> Path:
    src = next((REPO / "corpus" / "traces" / trace).glob("*.log*"))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "tlscope", str(src), "-o", str(out), "--no-browser"]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def explorer_order(folder: Path) -> tuple[list[str], list[str]]:
    """(index files, then the rest) as the explorer asks: manifest and compiles first."""
    top = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
    first = [n for n in ("manifest.json", "compiles.json") if n in top]
    index = first + [n for n in top if n not in first]
    rest = sorted(p.relative_to(folder).as_posix() for sub in ("payloads", "graphs") if (folder / sub).is_dir()
                  for p in (folder / sub).iterdir() if p.is_file())  # fmt: skip
    return index, rest


async def fetch_all(base: str, paths: list[str], concurrency: int) -> None:
    queue = list(reversed(paths))
    conns = [await Connection.open(base) for _ in range(min(concurrency, len(paths)))]

    async def worker(conn: Connection) -> None:
        while queue:
            path = queue.pop()
            status, _ = await conn.get(path)
            if status != 200:
                raise RuntimeError(f"{path}: HTTP {status}")

    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        for c in conns:
            c.close()


def read_folder(base: str, url: str, index: list[str], rest: list[str], concurrency: int) -> tuple[float, float]:
    """(seconds for the index files, seconds for the whole folder)."""
    start = time.perf_counter()
    asyncio.run(fetch_all(base, [url + n for n in index], concurrency))
    indexed = time.perf_counter() - start
    asyncio.run(fetch_all(base, [url + n for n in rest], concurrency))
    return indexed, time.perf_counter() - start


def open_folder(base: str, folder_url: str, index: list[str], concurrency: int) -> float:
    """Seconds to add a trace not seen before and read its index files."""
    start = time.perf_counter()
    request = urllib.request.Request(base + "/api/traces", data=json.dumps({"url": folder_url}).encode(),
                                     headers={"content-type": "application/json"}, method="POST")  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as r:
        url = json.load(r)["url"]
    asyncio.run(fetch_all(base, [url + n for n in index], concurrency))
    return time.perf_counter() - start


def counts(host: str) -> dict[str, int]:
    with urllib.request.urlopen(host + "/_requests", timeout=30) as r:
        got: dict[str, int] = json.load(r)
        return got


def spread(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms ({min(values) * 1000:.0f}-{max(values) * 1000:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the 'before' tree (holding src/tlscope)")
    parser.add_argument("--trace", default="graph_breaks_repeated", help="corpus trace whose output is read")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="the store's delay per request")
    parser.add_argument("--no-head", action="store_true", help="the store refuses HEAD (405)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp_name:
        tmp = Path(tmp_name)
        folder = output_folder(args.trace, tmp / "host" / "out")
        index, rest = explorer_order(folder)
        host_cmd = [sys.executable, str(HERE / "staticserve.py"), str(tmp / "host"), "--delay-ms", str(args.delay_ms)]
        with process_printing_url(host_cmd + (["--no-head"] if args.no_head else [])) as (_, host):
            results = measure(args, tmp, host, index, rest)
    print(json.dumps(results, indent=1))


def measure(args: argparse.Namespace, tmp: Path, host: str, index: list[str], rest: list[str]) -> dict[str, Any]:
    trees = {"before": args.base.resolve() / "src", "after": REPO / "src"}
    config = tmp / "serve.toml"
    config.write_text(f'traces = ["{host}/out/"]\n[stores.files]\nurl = "{host}/"\nallow_networks = ["127.0.0.1/32"]\n')
    servers: dict[str, tuple[str, str]] = {}
    with contextlib_stack() as stack:
        for name, src in trees.items():
            env_cmd = ["env", f"PYTHONPATH={src}", sys.executable, "-m", "tlscope", "serve", "--config", str(config),
                       "--cache-dir", str(tmp / f"cache-{name}"), "--port", "0", "--no-browser"]  # fmt: skip
            _, base = stack.enter_context(process_printing_url(env_cmd))
            with urllib.request.urlopen(base + "/api/traces", timeout=60) as r:
                url = json.load(r)[0]["url"]
            with urllib.request.urlopen(base + url + "manifest.json", timeout=60) as r:
                r.read()  # the readiness check, once
            servers[name] = (base, url)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        opens: dict[str, list[float]] = {name: [] for name in trees}
        asked: dict[str, dict[str, int]] = {}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                fresh = tmp / "host" / f"out-{name}-{round_}"
                fresh.symlink_to(tmp / "host" / "out", target_is_directory=True)
                opens[name].append(open_folder(servers[name][0], f"{host}/{fresh.name}/", index, args.concurrency))
                before = counts(host)
                times[name].append(read_folder(*servers[name], index, rest, args.concurrency))
                after = counts(host)
                asked[name] = {m: after.get(m, 0) - before.get(m, 0) for m in after}
    files = len(index) + len(rest)
    return {
        "trace": args.trace, "files": files, "index_files": len(index), "delay_ms": args.delay_ms,
        "no_head": args.no_head, "rounds": args.rounds, "concurrency": args.concurrency,
        "trees": {name: {
            "open": spread(opens[name]),
            "index": spread([t[0] for t in times[name]]),
            "folder": spread([t[1] for t in times[name]]),
            "store_requests_per_file": {m: round(n / files, 2) for m, n in asked[name].items() if n},
        } for name in trees},
    }  # fmt: skip


def contextlib_stack() -> Any:
    import contextlib

    return contextlib.ExitStack()


if __name__ == "__main__":
    main()
