"""The server's answers to the attack of issue 24 (docs/SECURITY.md, "Server" 4, 6 and 8).

Each test here failed on the code before issue 24 (main cd2489c):

- a request with 1 MiB of headers was answered 200 after reading it all (128 MiB took the
  server from 47 to 308 MB): now 431 within 2 s, on a real `tlscope serve` process, whose
  memory stays flat;
- `Host: localhost:80@evil`, `Host: localhost:abc` and `GET http://evil.example/ HTTP/1.1` with
  a loopback Host were answered 200: now 400, 400 and 421;
- stores at `[::127.0.0.1]`, `[64:ff9b::a9fe:a9fe]` and `[2002:a9fe:a9fe::1]` were connected
  to (or allowed): now 403 without any connection attempt (the event loop's connect is watched);
- a store's 302 from /traces/go/manifest.json to /private/secret.txt was followed and the
  secret served as the manifest: now 403, and a redirect inside the store's prefix still works.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx
import pytest
from helpers import LiveServer, stop_process

pytest.importorskip("aiohttp", reason="http stores need tlscope[remote] (the test extra)")

MiB = 1024 * 1024


# ---- 1. the request head is bounded ---------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real `tlscope serve` process on 127.0.0.1, port 0: (base URL, pid)."""
    tmp = tmp_path_factory.mktemp("served")
    cmd = [sys.executable, "-m", "tlscope", "serve", "--port", "0", "--no-browser", "--cache-dir", str(tmp)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        url = line.split()[2].rstrip("/")
        assert httpx.get(url + "/api/traces").status_code == 200
        yield url, proc.pid
    finally:
        stop_process(proc)


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def exchange(url: str, head: bytes, timeout: float = 10.0) -> tuple[int, float]:
    """Send `head` (request line and headers, CRLF-terminated) byte for byte; (status, seconds
    to the first byte of the answer). Sending stops when the server answers and closes."""
    parts = urlsplit(url)
    start = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sender = threading.Thread(target=_send_all, args=(sock, head), daemon=True)
        sender.start()
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        took = time.monotonic() - start
    return int(data.split(b" ", 2)[1]), took


def _send_all(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            sent = sock.send(view[: 64 * 1024])
            view = view[sent:]
    except OSError:  # the server answered and closed while the rest was on its way
        pass


def head(host: str, *headers: bytes, target: bytes = b"/api/traces") -> bytes:
    lines = [b"GET " + target + b" HTTP/1.1", b"Host: " + host.encode(), *headers, b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


@pytest.mark.parametrize(
    "shape",
    ["one 1 MiB header", "1024 headers of 1 KiB", "a 1 MiB request line", "64 KiB + 1 in two headers"],
)
def test_oversized_heads_get_431_at_once_and_memory_stays_flat(served: tuple[str, int], shape: str) -> None:
    url, pid = served
    host = urlsplit(url).netloc
    assert exchange(url, head(host))[0] == 200  # a normal head, warming the server up
    before = rss(pid)
    for _ in range(4):
        if shape == "one 1 MiB header":
            request = head(host, b"X-Big: " + b"a" * MiB)
        elif shape == "1024 headers of 1 KiB":
            request = head(host, *(b"X-%d: %s" % (i, b"b" * 1024) for i in range(1024)))
        elif shape == "a 1 MiB request line":
            request = head(host, target=b"/api/traces?" + b"q" * MiB)
        else:
            request = head(host, b"X-A: " + b"c" * 32 * 1024, b"X-B: " + b"d" * 32 * 1024)
        status, took = exchange(url, request)
        assert status in (400, 431) and took < 2.0, (shape, status, took)
    grown = rss(pid) - before
    assert grown < 8 * MiB, f"{shape}: the server grew by {grown / MiB:.1f} MiB"
    assert exchange(url, head(host, b"X-Fine: " + b"e" * 60 * 1024))[0] == 200  # under the limit: served


# ---- 4. the Host header, strictly ---------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "target", "status"),
    [
        ("localhost:80@evil", b"/api/traces", 400),
        ("localhost:abc", b"/api/traces", 400),
        ("localhost:99999", b"/api/traces", 400),
        ("local host", b"/api/traces", 400),
        ("[::1", b"/api/traces", 400),
        ("evil.example", b"/api/traces", 421),
        ("LOCALHOST:8000", b"/api/traces", 200),
        ("[::1]:8000", b"/api/traces", 200),
        ("127.0.0.1", b"http://evil.example/api/traces", 421),
        ("127.0.0.1", b"http://user@127.0.0.1/api/traces", 400),
        ("127.0.0.1", b"ftp://127.0.0.1/api/traces", 400),
        ("evil.example", b"http://127.0.0.1/api/traces", 200),  # RFC 9112 3.2.2: the target's host
    ],
)
def test_host_is_parsed_strictly(served: tuple[str, int], host: str, target: bytes, status: int) -> None:
    url, _ = served
    assert exchange(url, head(host, target=target))[0] == status


# ---- 2. the address policy, end to end: no connection attempt ----------------------------


@pytest.fixture(scope="module")
def connects() -> Iterator[list[Any]]:
    """Every address the server's event loop connects a socket to, while the module runs."""
    seen: list[Any] = []
    original = asyncio.selector_events.BaseSelectorEventLoop.sock_connect

    async def watched(self: Any, sock: socket.socket, address: Any) -> None:
        seen.append(address)
        await original(self, sock, address)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(asyncio.selector_events.BaseSelectorEventLoop, "sock_connect", watched)
        yield seen


HIDDEN = ["[::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "[::ffff:0:7f00:1]", "[fec0::1]"]


@pytest.fixture(scope="module")
def store_server(
    connects: list[Any], store_host: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    from tlscope.serve.config import StoreConfig

    stores = {f"h{i}": StoreConfig(url=f"http://{host}:{_PORT}/traces/") for i, host in enumerate(HIDDEN)}
    stores["store"] = StoreConfig(url=f"{store_host}/traces/", allow_networks=["127.0.0.1/32"])
    server = LiveServer([], tmp_path_factory.mktemp("hardening"), stores=stores)
    yield server, store_host
    server.close()


_PORT = 9  # nothing listens there; nothing may even be tried


@pytest.mark.parametrize("host", HIDDEN)
def test_private_addresses_in_ipv6_clothing_get_403_without_a_connection(
    store_server: tuple[LiveServer, str], connects: list[Any], host: str
) -> None:
    live, _ = store_server
    with httpx.Client(base_url=live.url, timeout=60) as client:
        added = client.post("/api/traces", json={"url": f"http://{host}:{_PORT}/traces/run/"})
        assert added.status_code == 201, added.text
        r = client.get(added.json()["url"] + "manifest.json")
    assert r.status_code == 403 and "not allowed" in r.text, (host, r.status_code, r.text)
    assert not [a for a in connects if a[1] == _PORT], connects


# ---- 3. redirects stay inside the store -------------------------------------------------


class _Store(http.server.BaseHTTPRequestHandler):
    """/traces/go/* 302s out of the prefix, /traces/moved/* 302s inside it, /traces/run/ is a
    trace folder (a manifest), /private/secret.txt a secret."""

    FILES: ClassVar[dict[str, bytes]] = {"/traces/run/manifest.json": b"{}", "/private/secret.txt": b"SECRET-BYTES"}

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        rest = self.path.rsplit("/", 1)[-1]
        target = {"/traces/go/": "/private/secret.txt", "/traces/moved/": "/traces/run/" + rest}
        for prefix, location in target.items():
            if self.path.startswith(prefix):
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        data = self.FILES.get(self.path)
        self.send_response(200 if data is not None else 404)
        self.send_header("Content-Length", str(len(data or b"")))
        self.send_header("ETag", '"x1"')
        self.end_headers()
        if body and data:
            self.wfile.write(data)


@pytest.fixture(scope="module")
def store_host() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_redirect_out_of_the_store_prefix_is_not_followed(store_server: tuple[LiveServer, str]) -> None:
    live, host = store_server
    assert httpx.get(f"{host}/private/secret.txt").content == b"SECRET-BYTES"  # it is there
    with httpx.Client(base_url=live.url, timeout=60) as client:
        inside = client.post("/api/traces", json={"url": f"{host}/traces/moved/"}).json()
        r = client.get(inside["url"] + "manifest.json")
        assert (r.status_code, r.content) == (200, b"{}")  # a redirect within the prefix: followed
        out = client.post("/api/traces", json={"url": f"{host}/traces/go/"}).json()
        for name in ("manifest.json", "x.json"):
            r = client.get(out["url"] + name, headers={"accept-encoding": "identity"})
            assert r.status_code == 403 and b"SECRET" not in r.content, (r.status_code, r.content)
            assert "leaves the store" in r.text
        listed = json.dumps(client.get("/api/traces").json())
    assert "SECRET" not in listed


def test_the_store_prefix_check() -> None:
    from tlscope.serve.config import StoreConfig
    from tlscope.serve.stores import Store

    store = Store("s", StoreConfig(url="https://Host.example/traces/"))
    for url in ("https://host.example/traces/a/manifest.json", "https://host.example:443/traces/a%20b/x?sig=1"):
        assert store.inside(url), url
    for url in (
        "http://host.example/traces/a",  # another scheme
        "https://host.example:8443/traces/a",  # another port
        "https://other.example/traces/a",
        "https://user@host.example/traces/a",
        "https://host.example/private/secret.txt",
        "https://host.example/traces",  # the prefix's parent
        "https://host.example/tracesX/a",
        "https://host.example/traces/%2e%2e/private",
        "https://host.example/traces/a/../../private",
        "https://host.example/traces/a%2fb",
        "https://host.example:abc/traces/a",
    ):
        assert not store.inside(url), url


# ---- 6. a response in one send ------------------------------------------------------------


def test_writes_of_one_turn_go_out_together() -> None:
    """protocol.py's transport: a response's head and body (two writes in one turn of the event
    loop) reach the socket in one write; 64 KiB or more go at once; close() sends what waits."""
    from tlscope.serve.protocol import _Coalescing

    class Recorder:
        def __init__(self) -> None:
            self.writes: list[bytes] = []
            self.closed = False

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def close(self) -> None:
            self.closed = True

        def is_closing(self) -> bool:
            return self.closed

    async def scenario() -> list[list[bytes]]:
        real = Recorder()
        transport = _Coalescing(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        seen = []
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        transport.write(memoryview(b"body"))
        transport.write(b"")
        seen.append(list(real.writes))  # nothing yet: the turn goes on
        await asyncio.sleep(0)
        seen.append(list(real.writes))
        transport.write(b"x" * 70_000)  # past 64 KiB: at once
        seen.append(list(real.writes[1:]))
        transport.write(b"tail")
        transport.close()
        seen.append(list(real.writes[2:]))
        assert real.closed and transport.is_closing()  # the real transport's, through
        return seen

    before, after_turn, big, closing = asyncio.run(scenario())
    assert before == [] and after_turn == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    assert big == [b"x" * 70_000] and closing == [b"tail"]
