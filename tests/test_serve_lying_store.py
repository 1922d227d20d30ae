"""A file host whose answers lie (tests/lyinghost.py), behind `tlscope serve` (docs/SECURITY.md).

A store is reached over the network and describes its own bytes: its lengths, ranges, encodings
and ETags are input like any other. Each kind of lie is a store; its folder's markers are honest
(so it can be added), its other files lie. For every file form a viewer asks (a GET, a range, a
suffix range, a validator, gzip accepted, a HEAD), shown: never a 500 and never a hang; an answer
with a body sends exactly the length its head states (or is cut off, which the client can tell,
only where the store's own body was); a length or range the store misstates is never passed on as
the client's; a redirect loop is a 502.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import LiveServer, add_trace, loopback_host

pytest.importorskip("aiohttp", reason="https:// stores need tlscope[remote] (the test extra)")

HERE = Path(__file__).resolve().parent
#: What a lie may be answered with: the file's bytes, a part, a 304, or the store's failure told.
ANSWERS = {200, 206, 304, 404, 413, 416, 502, 504}
FORMS: dict[str, dict[str, str]] = {
    "get": {},
    "range": {"range": "bytes=10-99"},
    "suffix": {"range": "bytes=-50"},
    "validator": {"if-none-match": '"not-it"'},
    "gzip": {"accept-encoding": "gzip"},
}
#: Lies in the body itself (fewer bytes than the store's head said): the answer may be cut off.
CUT_OFF = {"short"}
#: What a GET of a whole file and of a range are answered with, for each lie (docs/SECURITY.md);
#: "short" is left out: the first chunk may have been sent by the time its body ends early.
EXPECTED = {
    "badlength": (502, 502), "negative": (502, 502), "huge": (413, 413),
    "inverted": (502, 502), "beyond": (502, 502), "rangenototal": (502, 502), "garbagerange": (502, 502),
    "otherspan": (200, 502), "badtotal416": (404, 404),
    "gzip": (200, 206), "etagbytes": (200, 206), "etaghuge": (200, 206),
}  # fmt: skip


def _lies() -> tuple[str, ...]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("lyinghost", HERE / "lyinghost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.LIES)


LIES = _lies()


@pytest.fixture(scope="module")
def lyinghost(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lying-host")
    shutil.copytree(viewer_traces["single"], root / "single")
    shutil.copytree(viewer_traces["single"], root / "validated")  # added by one test only
    with loopback_host(HERE / "lyinghost.py", str(root)) as url:
        yield url


@pytest.fixture(scope="module")
def live(lyinghost: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from tlscope.serve.config import StoreConfig

    loopback = ["127.0.0.1/32"]
    stores = {kind: StoreConfig(url=f"{lyinghost}/{kind}/", allow_networks=loopback, timeout=10) for kind in LIES}
    server = LiveServer([], tmp_path_factory.mktemp("lying"), stores=stores)
    yield server
    server.close()


def _files(folder: Path) -> list[str]:
    """A folder's files a viewer asks for: an index file, the report's page, a payload."""
    payload = min(p.name for p in (folder / "payloads").iterdir())
    return ["compiles.json", "index.html", f"payloads/{payload}"]


def _asked(client: httpx.Client, method: str, url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, the body's bytes as sent: not decoded); a body cut short raises
    httpx.RemoteProtocolError."""
    with client.stream(method, url, headers={"accept-encoding": "identity", **headers}) as r:
        return r.status_code, dict(r.headers), b"".join(r.iter_raw())


def test_every_lie_has_its_expected_answers() -> None:
    assert set(EXPECTED) | CUT_OFF == set(LIES) - {"loop"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", [k for k in LIES if k != "loop"])
def test_a_lying_store_is_answered_truthfully(
    kind: str, client: httpx.Client, lyinghost: str, viewer_traces: dict[str, Path]
) -> None:
    base = add_trace(client, f"{lyinghost}/{kind}/single/")["url"]
    for rel in _files(viewer_traces["single"]):
        truth = (viewer_traces["single"] / rel).read_bytes()
        for form, headers in FORMS.items():
            for method in ("GET", "HEAD"):
                where = f"{kind}: {method} {rel} ({form})"
                try:
                    status, head, body = _asked(client, method, base + rel, headers)
                except httpx.RemoteProtocolError:
                    assert kind in CUT_OFF, f"{where}: cut off, but the store sent its whole body"
                    continue
                assert status in ANSWERS, f"{where}: {status} {body[:300]!r}"
                if method == "GET" and form in ("get", "range") and kind in EXPECTED:
                    assert status == EXPECTED[kind][form == "range"], f"{where}: {status} {body[:300]!r}"
                _check_answer(where, method, status, head, body, truth, kind)


def _check_answer(
    where: str, method: str, status: int, head: dict[str, str], body: bytes, truth: bytes, kind: str
) -> None:
    if method == "HEAD" or status not in (200, 206):
        return
    if "content-length" in head:
        assert len(body) == int(head["content-length"]), f"{where}: {len(body)} bytes sent under {head}"
    if head.get("content-encoding") == "gzip":
        import gzip

        body = gzip.decompress(body)
    if status == 206:
        first, last, total = _content_range(head["content-range"])
        assert last - first + 1 == len(body) and last < total, f"{where}: {head['content-range']} for {len(body)}"
    # Only a store that sent other bytes than the file's (a range it made up) may be passed on as
    # such; every answer from a store that told its bytes right is the file's, or part of it.
    if kind not in ("otherspan", "inverted", "beyond", "garbagerange", "rangenototal"):
        assert body in truth, f"{where}: bytes that are not the file's"


def _content_range(value: str) -> tuple[int, int, int]:
    unit, _, rest = value.partition(" ")
    span, _, total = rest.partition("/")
    first, _, last = span.partition("-")
    assert unit == "bytes"
    return int(first), int(last), int(total)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["etagbytes", "etaghuge"])
def test_an_etag_no_answer_can_carry_is_passed_on_hashed(kind: str, client: httpx.Client, lyinghost: str) -> None:
    """Not UTF-8 or Latin-1 text, or 1,000 characters long: named by its hash, the same on every answer
    (a GET's, a HEAD's), so a client's validator still gets its 304."""
    url = add_trace(client, f"{lyinghost}/{kind}/validated/")["url"] + "compiles.json"
    tag = client.get(url).headers["etag"]
    assert re.fullmatch(r'"h-[0-9a-f]{32}"', tag), tag
    assert client.head(url).headers["etag"] == tag
    assert client.get(url, headers={"if-none-match": tag}).status_code == 304


@pytest.mark.slow
def test_a_redirect_loop_is_a_502(client: httpx.Client, lyinghost: str) -> None:
    r = client.post("/api/traces", json={"url": f"{lyinghost}/loop/single/"})
    assert r.status_code in (201, 404, 502), r.text
    if r.status_code == 201:
        trace: dict[str, Any] = r.json()
        answer = client.get(trace["url"] + "compiles.json")
        assert answer.status_code == 502, answer.text
