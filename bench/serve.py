"""`python bench/serve.py`: tlscope serve under load on loopback (issue 11's targets).

    python bench/serve.py                       # everything, default sizes
    python bench/serve.py --requests 20000 --concurrency 64 --events 200000 --pass-mb 50 --big-mb 500
    python bench/serve.py --only payloads events

Parts, each against `python -m tlscope serve ... --port 0` started as its own process:

* **payloads**: GET of the trace's payload files (`Accept-Encoding: identity`, keep-alive), from
  `--concurrency` connections at once, `--requests` in all (bounded by `--seconds`): requests/s
  and latency p50/p99. Target: >= 2,000 req/s and p99 < 100 ms at 64 connections on 2 cores.
* **events**: pages of 100 events from the events API of a synthetic trace of `--events` events
  (bench/synth.py's compact trace), at offsets spread over the whole trace, 8 connections: pages/s.
* **passthrough**: a `--pass-mb` MB raw.jsonl on a plain file host (bench/staticserve.py, its own
  process) read directly, through tlscope serve (a configured store) and through bench/relay.py
  (the cheapest Python relay, a yardstick), in alternating rounds: throughput of each, their
  ratio to direct, and each process's CPU seconds per GB; once with the file host unpaced on
  loopback and once with its bodies paced to `--store-rates` MB/s (default 1,250: a 10 Gbit/s
  link, a store on another machine). Target: serve >= 80% of direct.
* **rss**: the server's resident memory (VmRSS, sampled every 20 ms) while a `--big-mb` MB remote
  object streams through it to a client that reads as fast as it can. Target: flat, < 150 MB.

`--busy N` runs N CPU-bound processes (a Python busy loop each) beside it all: the payload target
must hold with a core taken by other work (issue 24). `--rounds-payloads K` repeats the payload
load K times and reports the median run, with every run's figures.

The load generator is a small asyncio HTTP/1.1 client in this process; it shares the machine's
cores with the server, so the figures are a lower bound of what the server does alone. Nothing
here runs in the test suite. Results are printed as a table and written to
bench/results/serve-latest.json (git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402 - bench/ is a folder of scripts

CORPUS_LOG = next((REPO / "corpus" / "traces" / "simple").glob("*.log.gz"))


# -- processes -----------------------------------------------------------------------------------


@contextmanager
def process_printing_url(command: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start `command`; yield it and the first http://127.0.0.1:PORT it prints on stdout."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                yield proc, found.group(0)
                return
        raise RuntimeError(f"{command[:4]} printed no address (exit {proc.poll()})")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tlscope", "serve", *args, "--port", "0", "--no-browser"]


def get_json(base: str, path: str) -> Any:
    import urllib.request

    with urllib.request.urlopen(base + path, timeout=600) as r:
        return json.load(r)


# -- a minimal keep-alive HTTP/1.1 client ---------------------------------------------------------


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, base: str) -> Connection:
        host_port = base.split("://", 1)[1]
        host, port = host_port.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 20)
        return cls(reader, writer, host_port)

    async def get(self, path: str, sink: bool = False) -> tuple[int, int]:
        """GET path; (status, body bytes). sink: count the body without keeping it."""
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept-Encoding: identity\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if length is None:
            raise RuntimeError(f"no Content-Length in {head[:200]!r}")
        remaining = int(length.group(1))
        if not sink:
            await self.reader.readexactly(remaining)
            return status, remaining
        while remaining:
            chunk = await self.reader.read(min(remaining, 1 << 20))
            if not chunk:
                raise RuntimeError("connection closed mid-body")
            remaining -= len(chunk)
        return status, int(length.group(1))

    def close(self) -> None:
        self.writer.close()


async def load(base: str, paths: list[str], concurrency: int, requests: int, seconds: float) -> dict[str, float]:
    """`requests` GETs over `paths` from `concurrency` connections (at most `seconds`): rate, latencies."""
    latencies: list[float] = []
    counter = iter(range(requests))
    deadline = time.perf_counter() + seconds
    conns = [await Connection.open(base) for _ in range(concurrency)]

    async def worker(conn: Connection) -> None:
        for i in counter:
            if time.perf_counter() > deadline:
                return
            start = time.perf_counter()
            status, _ = await conn.get(paths[i % len(paths)])
            if status != 200:
                raise RuntimeError(f"status {status} for {paths[i % len(paths)]}")
            latencies.append(time.perf_counter() - start)

    began = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - began
    for c in conns:
        c.close()
    latencies.sort()
    return {
        "requests": len(latencies),
        "seconds": round(elapsed, 3),
        "per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 2),
        "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
    }


async def read_rate(base: str, path: str) -> float:
    conn = await Connection.open(base)
    start = time.perf_counter()
    status, size = await conn.get(path, sink=True)
    elapsed = time.perf_counter() - start
    conn.close()
    if status != 200:
        raise RuntimeError(f"status {status} for {path}")
    return size / elapsed / 1e6


# -- the parts -------------------------------------------------------------------------------------


def payloads(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    out = tmp / "simple"
    subprocess.run([sys.executable, "-m", "tlscope", str(CORPUS_LOG), "-o", str(out), "--no-browser"],
                   check=True, capture_output=True)  # fmt: skip
    with process_printing_url(serve_command(str(out), "--cache-dir", str(tmp / "cache"))) as (proc, base):
        trace = get_json(base, "/api/traces")[0]
        paths = [f"{trace['url']}payloads/{p.name}" for p in sorted((out / "payloads").glob("*.txt"))]
        asyncio.run(load(base, paths, args.concurrency, min(2000, args.requests), args.seconds))  # warm-up
        runs = []
        for _ in range(args.rounds_payloads):
            # The server's CPU time per request: what the payload path costs, whatever the load.
            cpu = cpu_seconds(proc.pid)
            run = asyncio.run(load(base, paths, args.concurrency, args.requests, args.seconds))
            run["server_cpu_us"] = round(1e6 * (cpu_seconds(proc.pid) - cpu) / run["requests"], 1)
            runs.append(run)
    result = sorted(runs, key=lambda r: r["per_s"])[len(runs) // 2]
    sizes = [p.stat().st_size for p in (out / "payloads").glob("*.txt")]
    spread = {k + "_all": [r[k] for r in runs] for k in ("per_s", "p99_ms", "server_cpu_us")}
    return {**result, **spread, "concurrency": args.concurrency, "files": len(paths),
            "median_bytes": statistics.median(sizes)}  # fmt: skip


def events(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    folder = tmp / "events"
    synth.compact(folder, args.events)
    with process_printing_url(serve_command(str(folder), "--cache-dir", str(tmp / "cache"))) as (_, base):
        trace = get_json(base, "/api/traces")[0]
        api = f"/api/traces/{trace['id']}/events"
        get_json(base, api + "?limit=1")  # the index is built by the first request
        step = max(1, args.events // 997)
        paths = [f"{api}?offset={(i * step) % args.events}&limit=100" for i in range(997)]
        result = asyncio.run(load(base, paths, 8, args.requests // 4, args.seconds))
        kind = asyncio.run(load(base, [f"{api}?kind=artifact&offset={o}&limit=100" for o in range(0, 5000, 100)],
                                8, args.requests // 8, args.seconds))  # fmt: skip
    return {"events": args.events, "pages_per_s": result["per_s"], "p99_ms": result["p99_ms"],
            "filtered_pages_per_s": kind["per_s"]}  # fmt: skip


def remote_folder(root: Path, mb: int) -> Path:
    """An output folder whose raw.jsonl is `mb` MB of event-like lines."""
    folder = root / f"remote-{mb}"
    folder.mkdir(parents=True)
    line = (json.dumps({"artifact": {"name": "x", "encoding": "string"}, "pad": "x" * 180}) + "\n").encode()
    block = line * ((1 << 20) // len(line) + 1)
    with (folder / "raw.jsonl").open("wb") as f:
        written = 0
        while written < mb * 1_000_000:
            f.write(block)
            written += len(block)
    (folder / "manifest.json").write_text(json.dumps({"format_version": 1, "raw_jsonl_events": 0}))
    return folder


@contextmanager
def through_store(tmp: Path, folder: Path, rate: float = 0) -> Iterator[tuple[str, str, int, int]]:
    """The file host serving folder's parent (bodies paced to `rate` MB/s if given), and tlscope
    serve with it as a store: (host url, trace url, serve's pid, the host's pid)."""
    host_command = [sys.executable, str(HERE / "staticserve.py"), str(folder.parent)]
    with process_printing_url(host_command + (["--rate", str(rate)] if rate else [])) as (hproc, host):
        config = tmp / f"serve-{folder.name}.toml"
        config.write_text(
            f'traces = ["{host}/{folder.name}/"]\n[stores.files]\nurl = "{host}/"\nallow_networks = ["127.0.0.1/32"]\n'
        )
        command = serve_command("--config", str(config), "--cache-dir", str(tmp / "cache"))
        with process_printing_url(command) as (proc, base):
            trace = get_json(base, "/api/traces")[0]
            yield host, base + trace["url"], proc.pid, hproc.pid


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_reads(url: str, pids: dict[str, int], mb: int, reads: int) -> dict[str, float]:
    """`reads` whole reads of `url`: MB/s, and CPU seconds per GB of the client and of `pids`."""
    base, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    mine, start = own_cpu(), time.perf_counter()
    for _ in range(reads):
        asyncio.run(read_rate("http://" + base, path))
    wall, gb = time.perf_counter() - start, reads * mb / 1000
    cpu = {f"{name}_cpu_s_per_GB": (cpu_seconds(pid) - before[name]) / gb for name, pid in pids.items()}
    return {"MBps": reads * mb / wall, "client_cpu_s_per_GB": (own_cpu() - mine) / gb, **cpu}


def passthrough(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The same object read directly, through tlscope serve and through bench/relay.py, in
    alternating rounds, for each `--store-rates` (0: the file host unpaced on loopback)."""
    folder = remote_folder(tmp, args.pass_mb)
    result: dict[str, Any] = {"mb": args.pass_mb, "rounds": args.rounds, "reads_per_round": args.reads}
    for rate in args.store_rates:
        result[f"store at {rate:g} MB/s" if rate else "store unpaced"] = passthrough_at(tmp, folder, rate, args)
    shutil.rmtree(folder)
    return result


def passthrough_at(tmp: Path, folder: Path, rate: float, args: argparse.Namespace) -> dict[str, Any]:
    """Medians per way, each process's CPU per GB, and the ratios to direct (the machine's to
    give on loopback: three processes share two cores where direct reading has two)."""
    samples: dict[str, list[dict[str, float]]] = {"direct": [], "serve": [], "relay": []}
    with (
        through_store(tmp, folder, rate) as (host, trace_url, pid, host_pid),
        process_printing_url([sys.executable, str(HERE / "relay.py"), host]) as (relay, relayed),
    ):
        paths = {"direct": f"{host}/{folder.name}/raw.jsonl", "serve": f"{trace_url}raw.jsonl",
                 "relay": f"{relayed}/{folder.name}/raw.jsonl"}  # fmt: skip
        pids = {"direct": {"host": host_pid}, "serve": {"host": host_pid, "serve": pid},
                "relay": {"host": host_pid, "relay": relay.pid}}  # fmt: skip
        for way in paths:
            timed_reads(paths[way], pids[way], args.pass_mb, 1)  # warm-up: connections, page cache
        for _ in range(args.rounds):
            for way in paths:
                samples[way].append(timed_reads(paths[way], pids[way], args.pass_mb, args.reads))
    result: dict[str, Any] = {}
    for way, rows in samples.items():
        result[way] = {key: round(statistics.median(r[key] for r in rows), 2) for key in rows[0]}
    direct = result["direct"]["MBps"]
    result["ratio"] = round(result["serve"]["MBps"] / direct, 3)
    result["relay_ratio"] = round(result["relay"]["MBps"] / direct, 3)
    result["ratios_by_round"] = [
        round(s["MBps"] / d["MBps"], 3) for s, d in zip(samples["serve"], samples["direct"], strict=True)
    ]
    return result


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rss(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    folder = remote_folder(tmp, args.big_mb)
    samples: list[float] = []
    with through_store(tmp, folder) as (_, trace_url, pid, _):
        base, path = trace_url.split("/traces/", 1)
        idle = rss_mb(pid)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                samples.append(rss_mb(pid))
                time.sleep(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        rate = asyncio.run(read_rate(base, f"/traces/{path}raw.jsonl"))
        done.set()
        sampler.join()
    shutil.rmtree(folder)
    return {"mb": args.big_mb, "idle_rss_MB": round(idle, 1), "max_rss_MB": round(max(samples), 1),
            "samples": len(samples), "MBps": round(rate, 1)}  # fmt: skip


@contextmanager
def busy(count: int) -> Iterator[None]:
    """`count` CPU-bound processes (a Python busy loop each) running while the block runs: a
    machine whose other work keeps a core busy, as the attack of issue 24 measured under."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in loops:
            proc.kill()
            proc.wait()


PARTS = {"payloads": payloads, "events": events, "passthrough": passthrough, "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(PARTS), help="run only these parts")
    parser.add_argument("--requests", type=int, default=20000, help="payload requests (events: a quarter)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0, help="time cap of each load run")
    parser.add_argument("--events", type=int, default=200_000, help="events of the events-API trace")
    parser.add_argument("--pass-mb", type=int, default=50)
    parser.add_argument("--big-mb", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7, help="passthrough rounds (each way read in turn)")
    parser.add_argument("--reads", type=int, default=3, help="passthrough reads of each way per round")
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes running beside it (issue 24)")
    parser.add_argument("--rounds-payloads", type=int, default=1, help="payload load runs (median reported)")
    rates_help = "passthrough: the file host's MB/s per body (0: unpaced; 1250: a 10 Gbit/s link)"
    parser.add_argument("--store-rates", type=float, nargs="*", default=[0.0, 1250.0], help=rates_help)
    args = parser.parse_args()
    import importlib.util

    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "loadavg_before": os.getloadavg(),
        "http_parser": "httptools" if importlib.util.find_spec("httptools") else "h11",
    }
    report["busy"] = args.busy
    with tempfile.TemporaryDirectory(prefix="tlscope-bench-serve-") as tmp, busy(args.busy):
        for name in args.only or list(PARTS):
            report[name] = PARTS[name](Path(tmp), args)
            print(f"{name}: {json.dumps(report[name])}", flush=True)
    report["loadavg_after"] = os.getloadavg()
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "serve-latest.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
