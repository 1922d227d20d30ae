"""A store's `max_concurrency` against a real slow file host (tests/slowhost.py, its own process).

The host counts the requests it answers at once and, while its gate is closed, holds each GET
in flight (status sent, body dripping a byte every 0.2 s, so no read timeout fires). Shown:
with `max_concurrency = 2` the host never sees more than 2 requests at once while 6 clients ask;
the 4 in excess wait (none is answered while the gate is closed) and then all succeed byte for
byte; a request that waits for a slot longer than the store's `timeout` gets 504, not a hang, and
the slot it waited for serves the next request once it is free; a request for a raw log still
downloading gets 503 with Retry-After once the server's `request_timeout` passes, and its files
once the download and parse are done. A store failing for a moment (503s asked of the host) is
a 502, not "not found", and leaves no summary made without its answer.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import CORPUS, LiveServer, add_trace, loopback_host

pytest.importorskip("aiohttp", reason="https:// stores need tlscope[remote] (the test extra)")

HERE = Path(__file__).resolve().parent
RAW_LOG = next((CORPUS / "graph_breaks").glob("*.log*"))


@pytest.fixture(scope="module")
def slowhost(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("slowhost")
    shutil.copytree(viewer_traces["single"], root / "single")
    shutil.copytree(viewer_traces["single"], root / "flaky")
    shutil.copytree(viewer_traces["single"], root / "down")
    shutil.copy(RAW_LOG, root / RAW_LOG.name)
    with loopback_host(HERE / "slowhost.py", str(root)) as url:
        yield url


@pytest.fixture(scope="module")
def live(slowhost: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from tlscope.serve.config import StoreConfig

    loopback = ["127.0.0.1/32"]
    stores = {
        "held": StoreConfig(url=f"{slowhost}/hold/", allow_networks=loopback, max_concurrency=2, timeout=60),
        "queue": StoreConfig(url=f"{slowhost}/queue/", allow_networks=loopback, max_concurrency=1, timeout=2),
    }
    # request_timeout: how long a request waits for a trace being fetched or parsed (then 503).
    server = LiveServer([], tmp_path_factory.mktemp("limits"), stores=stores, request_timeout=1.0)
    yield server
    server.close()


@pytest.fixture
def client(live: LiveServer, slowhost: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=120) as c:
        yield c
    httpx.get(f"{slowhost}/_open")  # never leave a held request behind


def host(slowhost: str, command: str) -> dict[str, Any]:
    stats: dict[str, Any] = httpx.get(f"{slowhost}/_{command}").json()
    return stats


def ready_trace(client: httpx.Client, slowhost: str, url: str) -> dict[str, Any]:
    """Add the folder and let its readiness check and summary go through with the gate open."""
    host(slowhost, "open")
    trace = add_trace(client, url)
    assert client.get(f"/api/traces/{trace['id']}").json()["summary"]["events"] > 0
    return trace


def wait_for(test: Any, what: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not test():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_at_most_max_concurrency_in_flight(client: httpx.Client, slowhost: str, viewer_traces: dict[str, Path]) -> None:
    trace = ready_trace(client, slowhost, f"{slowhost}/hold/single/")
    payloads = sorted((viewer_traces["single"] / "payloads").glob("*.txt"))[:6]
    assert len(payloads) == 6
    host(slowhost, "close")
    host(slowhost, "reset")
    results: dict[str, httpx.Response] = {}

    def fetch(path: Path) -> None:
        url = f"{trace['url']}payloads/{path.name}"
        results[path.name] = httpx.get(client.base_url.join(url), headers={"accept-encoding": "identity"}, timeout=120)

    threads = [threading.Thread(target=fetch, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    wait_for(lambda: host(slowhost, "stats")["in_flight"] >= 2, "two requests held at the host")
    time.sleep(1.0)  # room for a third request to reach the host, were the limit not kept
    stats = host(slowhost, "stats")
    assert stats["in_flight"] == 2 and stats["max_in_flight"] == 2, stats
    assert results == {}  # the held two and the four waiting for a slot: none answered yet
    host(slowhost, "open")
    for t in threads:
        t.join(timeout=120)
    assert {name: r.status_code for name, r in results.items()} == {p.name: 200 for p in payloads}
    assert all(results[p.name].content == p.read_bytes() for p in payloads)
    assert host(slowhost, "stats")["max_in_flight"] == 2  # the store never had more than 2 at once


def test_waiting_past_the_timeout_is_504(client: httpx.Client, slowhost: str, viewer_traces: dict[str, Path]) -> None:
    trace = ready_trace(client, slowhost, f"{slowhost}/queue/single/")
    first, second = sorted((viewer_traces["single"] / "payloads").glob("*.txt"))[:2]
    host(slowhost, "close")
    with client.stream("GET", f"{trace['url']}payloads/{first.name}", headers={"accept-encoding": "identity"}) as held:
        assert held.status_code == 200  # streaming, dripping: it holds the store's only slot
        wait_for(lambda: host(slowhost, "stats")["in_flight"] == 1, "the held request at the host")
        waited = client.get(f"{trace['url']}payloads/{second.name}", timeout=30)  # a hang fails here
        assert waited.status_code == 504 and "request slots stayed busy for 2 s" in waited.text, waited.text
        assert host(slowhost, "stats")["in_flight"] == 1  # the refused request never reached the host
        host(slowhost, "open")
        assert held.read() == first.read_bytes()  # the held one completes intact
    after = client.get(f"{trace['url']}payloads/{second.name}", headers={"accept-encoding": "identity"})
    assert after.status_code == 200 and after.content == second.read_bytes()  # the slot was given back


def test_request_timeout_while_a_log_downloads(client: httpx.Client, slowhost: str) -> None:
    host(slowhost, "close")
    trace = add_trace(client, f"{slowhost}/hold/{RAW_LOG.name}")
    r = client.get(trace["url"] + "manifest.json", timeout=30)  # a hang fails here
    assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
    assert client.get(f"/api/traces/{trace['id']}/events", timeout=30).status_code == 503
    listed = client.get(f"/api/traces/{trace['id']}", timeout=5).json()  # the listing never waits
    assert listed["state"] in ("pending", "parsing"), listed
    host(slowhost, "open")
    wait_for(lambda: client.get(trace["url"] + "manifest.json").status_code == 200, "the parsed log")
    events = client.get(f"/api/traces/{trace['id']}/events", params={"limit": 0}).json()
    assert events["total"] > 0


def test_slot_waits_never_lose_a_slot() -> None:
    """The slot wait itself: a timed-out wait takes no slot, and a wait cancelled (its client gone)
    just as a slot is handed to it gives that slot back, so the store's limit never shrinks."""
    import asyncio

    from tlscope.serve.stores import _acquire

    async def scenario() -> list[bool]:
        limit = asyncio.Semaphore(1)
        got = [await _acquire(limit, 1), await _acquire(limit, 0.05)]  # taken; then busy: timed out
        waiter = asyncio.ensure_future(_acquire(limit, 30))
        await asyncio.sleep(0.05)
        limit.release()  # handed to the waiter...
        waiter.cancel()  # ...whose request is cancelled before it runs
        await asyncio.wait({waiter})
        await asyncio.sleep(0)
        got += [waiter.cancelled(), await _acquire(limit, 0.5), limit.locked()]
        return got

    assert asyncio.run(scenario()) == [True, False, True, True, True]


def test_first_requests_share_one_filesystem_and_its_slots() -> None:
    """Requests that reach a store before its filesystem is made await the one being made: one
    filesystem, one set of slots (each made its own, and the last set replaced the others while
    their slots were held: a slot given back to the wrong set let a request in past the limit,
    the max_in_flight of 3 of 2 the test above once saw in CI)."""
    import asyncio

    from tlscope.serve.config import StoreConfig
    from tlscope.serve.stores import Store

    store = Store("s", StoreConfig(url="http://127.0.0.1:9/traces/", max_concurrency=2))
    made: list[object] = []

    async def make() -> object:
        await asyncio.sleep(0.01)  # as making an HTTP session awaits
        made.append(object())
        return made[-1]

    store._make_fs = make  # type: ignore[method-assign]

    async def scenario() -> tuple[int, set[int]]:
        inside, most, seen = 0, 0, set()

        async def request() -> None:
            nonlocal inside, most
            async with store.slot() as fs:
                seen.add(id(fs))
                inside += 1
                most = max(most, inside)
                await asyncio.sleep(0.01)
                inside -= 1

        await asyncio.gather(*(request() for _ in range(6)))
        return most, seen

    most, seen = asyncio.run(scenario())
    assert (most, len(made), seen) == (2, 1, {id(made[0])})


def test_a_store_failing_for_a_moment_is_not_kept_in_the_summary(
    client: httpx.Client, slowhost: str, viewer_traces: dict[str, Path]
) -> None:
    """A summary is kept once made: one made while the store failed to send a manifest (5xx)
    listed the trace with 0 events for as long as the server ran. It is not made then, and the
    next listing makes it from the store's answer."""
    from tlscope.format.folder import OutputFolder

    host(slowhost, "open")
    httpx.get(f"{slowhost}/_fail?GET%20/hold/flaky/manifest.json")
    trace = add_trace(client, f"{slowhost}/hold/flaky/")
    assert trace["summary"] is None  # the store failed: no summary yet, rather than a wrong one
    listed = client.get(f"/api/traces/{trace['id']}").json()["summary"]
    assert listed["events"] == OutputFolder(viewer_traces["single"]).manifest().raw_jsonl_events > 0


def test_a_store_that_fails_to_answer_is_not_said_to_hold_nothing(
    client: httpx.Client, slowhost: str, viewer_traces: dict[str, Path]
) -> None:
    """fsspec's HTTP filesystem raises FileNotFoundError for any failed HEAD-then-GET, and a
    store's 503 was told to the user as 404 "not found in the store". It is a 502 naming the
    store's answer, and the same request succeeds once the store answers."""
    trace = ready_trace(client, slowhost, f"{slowhost}/hold/down/")
    payload = sorted((viewer_traces["single"] / "payloads").glob("*.txt"))[0]
    for method in ("HEAD", "GET"):
        httpx.get(f"{slowhost}/_fail?{method}%20/hold/down/payloads/{payload.name}")
    url = f"{trace['url']}payloads/{payload.name}"
    r = client.get(url)
    assert r.status_code == 502 and "HTTP 503 from the store" in r.text, r.text
    r = client.get(url, headers={"accept-encoding": "identity"})
    assert r.status_code == 200 and r.content == payload.read_bytes()
    assert client.get(f"{trace['url']}payloads/{'0' * 32}.txt").status_code == 404  # absent: still 404
    # A 4xx is "absent" as far as the store can tell (S3 read over https without the right to
    # list answers 403 for a missing key), as before: 404, then served once it is answered.
    for method in ("HEAD", "GET"):
        httpx.get(f"{slowhost}/_fail?{method}%20/hold/down/payloads/{payload.name}&status=403")
    assert client.get(url).status_code == 404
    assert client.get(url, headers={"accept-encoding": "identity"}).content == payload.read_bytes()
