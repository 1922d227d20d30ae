"""The parse cache of `tlscope serve` (docs/SERVER.md, "Cache"): one parse per key, bounded, LRU.

Unit tests drive tlscope.serve.cache.Cache with asyncio; the last test goes through the server:
concurrent first requests for one raw log start exactly one parse, off the event loop (the
server keeps answering meanwhile), into the folder named by the log's SHA-256.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from helpers import CORPUS, LiveServer

from tlscope import __version__
from tlscope.serve.cache import Cache, input_key

LOG = next((CORPUS / "graph_breaks").glob("*.log.gz"))


Produce = Callable[[Path], Awaitable[None]]


def producer(calls: list[str], size: int = 1000, gate: asyncio.Event | None = None) -> Produce:
    async def produce(out: Path) -> None:
        calls.append(out.name)
        if gate is not None:
            await gate.wait()
        await asyncio.sleep(0.01)
        out.mkdir()
        (out / "raw.jsonl").write_bytes(b"x" * size)

    return produce


def test_concurrent_callers_share_one_production(tmp_path: Path) -> None:
    cache = Cache(tmp_path, 10**9)
    calls: list[str] = []

    async def go() -> list[Path]:
        return await asyncio.gather(*(cache.ensure("k1", producer(calls)) for _ in range(20)))

    folders = asyncio.run(go())
    assert calls == ["k1"] and set(folders) == {tmp_path / "k1"}
    meta = json.loads((tmp_path / "k1.json").read_text())
    assert meta["tlscope"] == __version__ and meta["bytes"] == 1000
    asyncio.run(go())  # made already: not again
    assert calls == ["k1"]


def test_two_processes_sharing_a_cache_parse_once(tmp_path: Path) -> None:
    """Two Cache objects on one folder (as two server processes): the second waits on the lock."""
    first, second = Cache(tmp_path, 10**9), Cache(tmp_path, 10**9)
    calls: list[str] = []

    async def go() -> None:
        gate = asyncio.Event()
        one = asyncio.ensure_future(first.ensure("k", producer(calls, gate=gate)))
        await asyncio.sleep(0.2)  # the first holds the lock and is producing
        two = asyncio.ensure_future(second.ensure("k", producer(calls)))
        await asyncio.sleep(0.2)
        gate.set()
        assert await one == await two == tmp_path / "k"

    asyncio.run(go())
    assert calls == ["k"]


def test_a_failed_production_leaves_nothing_and_is_tried_again(tmp_path: Path) -> None:
    cache = Cache(tmp_path, 10**9)

    async def fail(out: Path) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError):
        asyncio.run(cache.ensure("k", fail))
    assert not (tmp_path / "k").exists() and not (tmp_path / "k.json").exists()
    calls: list[str] = []
    asyncio.run(cache.ensure("k", producer(calls)))
    assert calls == ["k"]


def test_least_recently_used_whole_folders_go_past_the_bound(tmp_path: Path) -> None:
    cache = Cache(tmp_path, 2500)  # room for two entries of 1000 bytes
    calls: list[str] = []
    for key in ("a", "b"):
        asyncio.run(cache.ensure(key, producer(calls)))
    old = time.time() - 100
    os.utime(tmp_path / "a.json", (old, old))
    os.utime(tmp_path / "b.json", (old + 10, old + 10))
    cache.touch("a")  # a used now: b is the least recently used
    asyncio.run(cache.ensure("c", producer(calls)))
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir() and len(p.name) == 1) == ["a", "c"]
    assert not (tmp_path / "b.json").exists()
    asyncio.run(cache.ensure("b", producer(calls)))  # made again when asked again
    assert calls == ["a", "b", "c", "b"]


def test_another_version_parses_again(tmp_path: Path) -> None:
    cache = Cache(tmp_path, 10**9)
    calls: list[str] = []
    asyncio.run(cache.ensure("k", producer(calls)))
    (tmp_path / "k.json").write_text(json.dumps({"tlscope": "0.0.0", "bytes": 1000}))
    assert not cache.ready("k")


def test_input_key_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    assert input_key(LOG) == hashlib.sha256(LOG.read_bytes()).hexdigest()
    ranks = tmp_path / "job"
    ranks.mkdir()
    (ranks / "r0.log").write_bytes(b"a")
    (ranks / "r1.log").write_bytes(b"b")
    key = input_key(ranks)
    (ranks / "r1.log").write_bytes(b"c")
    assert input_key(ranks) != key  # any rank's bytes change the key


def test_concurrent_first_requests_start_one_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlscope.serve.traces import Traces

    parses: list[str] = []
    real = Traces._parse

    async def counted(self: Traces, trace: object, src: Path, out: Path) -> None:
        parses.append(out.name)
        await real(self, trace, src, out)  # type: ignore[arg-type]

    monkeypatch.setattr(Traces, "_parse", counted)
    server = LiveServer([str(LOG)], tmp_path)
    try:
        tid = server.trace_ids()[0]
        statuses: list[int] = []
        listing: list[float] = []

        def fetch(path: str) -> None:
            statuses.append(httpx.get(f"{server.url}/traces/{tid}/{path}", timeout=120).status_code)

        threads = [threading.Thread(target=fetch, args=(p,)) for p in ("manifest.json", "raw.jsonl") * 6]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):  # the loop answers while the parse runs
            start = time.monotonic()
            assert httpx.get(f"{server.url}/api/traces", timeout=30).status_code == 200
            listing.append(time.monotonic() - start)
        for t in threads:
            t.join()
    finally:
        server.close()
    assert statuses == [200] * 12
    assert parses == [hashlib.sha256(LOG.read_bytes()).hexdigest()]
    assert listing, "the listing was asked while the parse ran"
