"""A file host that holds its answers, for the per-store limits' tests: `python tests/slowhost.py DIR`.

Run as its own process (a real remote store on loopback, 127.0.0.1, a free port printed on the
first stdout line). It serves DIR under any first path segment (`/hold/single/raw.jsonl` and
`/queue/single/raw.jsonl` are both `DIR/single/raw.jsonl`: one prefix per store under test) and
counts the requests it is answering at once: a request is counted from its arrival until just
before its answer's last bytes go out. (Counted until after them, a client that had its whole
answer could free its slot and send the next request before this thread took the first one off
the count: a store keeping its limit was seen with 3 in flight of 2, in a loaded CI run.) While
its gate is closed, a GET's status and
headers go out at once but its body drips, one byte every 0.2 s: the request stays in flight
without ever idling long enough for a read timeout. Opening the gate sends the rest.

Control (not under any store's prefix, so only the test reaches it):
`/_close` and `/_open` (the gate), `/_stats` (JSON: `in_flight`, `max_in_flight`, `served`, and
`at_most`: the requests in flight when the maximum was last reached),
`/_reset` (zero the maximum and the count of served requests), `/_fail?GET%20/hold/x/manifest.json`
(that request answers 503 once, as a store failing for a moment; `&status=403` another status).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import sys
import threading
import urllib.parse
from pathlib import Path

from loopback import serve_forever

GATE = threading.Event()
GATE.set()
LOCK = threading.Lock()
STATS = {"in_flight": 0, "max_in_flight": 0, "served": 0}
#: Requests ("GET /hold/x/manifest.json") to answer once each with an error status (/_fail).
FAILING: dict[str, int] = {}
AT_MOST: list[str] = []


#: The requests in flight now, and those in flight when the maximum was last reached (`at_most`
#: in /_stats: which requests a failed limit test saw at once).
IN_FLIGHT: dict[int, str] = {}


def count(delta: int, what: str = "") -> None:
    with LOCK:
        if delta > 0:
            IN_FLIGHT[threading.get_ident()] = what
        else:
            IN_FLIGHT.pop(threading.get_ident(), None)
        STATS["in_flight"] += delta
        if STATS["in_flight"] > STATS["max_in_flight"]:
            STATS["max_in_flight"] = STATS["in_flight"]
            AT_MOST[:] = sorted(IN_FLIGHT.values())
        STATS["served"] += delta < 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real file host

    def __init__(self, *args: object, directory: str) -> None:
        self.root = Path(directory)
        super().__init__(*args)  # type: ignore[arg-type]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/_"):
            self.control()
            return
        self.arrived()
        try:
            self.answer(body=True)
        finally:
            self.answered()

    def do_HEAD(self) -> None:
        self.arrived()
        try:
            self.answer(body=False)
        finally:
            self.answered()

    def arrived(self) -> None:
        self.counted = True
        count(+1, f"{self.command} {self.path}")

    def answered(self) -> None:
        """Off the count, once: before the answer's last bytes (see the module's note), or after a failure."""
        if getattr(self, "counted", False):
            self.counted = False
            count(-1)

    def control(self) -> None:
        with LOCK:
            if self.path == "/_open":
                GATE.set()
            elif self.path == "/_close":
                GATE.clear()
            elif self.path.startswith("/_fail?"):
                asked = urllib.parse.parse_qs(self.path.split("?", 1)[1], keep_blank_values=True)
                status = int(asked.pop("status", ["503"])[0])
                FAILING.update(dict.fromkeys(asked, status))
            elif self.path == "/_reset":
                STATS["max_in_flight"], STATS["served"] = STATS["in_flight"], 0
                AT_MOST[:] = sorted(IN_FLIGHT.values())
            data = json.dumps({**STATS, "at_most": AT_MOST}).encode()
        self.send(200, data, "application/json")

    def answer(self, body: bool) -> None:
        if status := self.failing():
            self.send(status, b"failing on purpose", "text/plain")
            return
        parts = self.path.split("?", 1)[0].split("/")[2:]
        path = self.root.joinpath(*parts) if parts and ".." not in parts else self.root / "-"
        if not path.is_file():
            self.send(404, b"not found", "text/plain")
            return
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", f'"{os.stat(path).st_mtime_ns:x}-{len(data):x}"')
        if not body:
            self.answered()  # the headers are the whole answer
        self.end_headers()
        if body:
            self.drip(data)

    def drip(self, data: bytes) -> None:
        at = 0
        while at < len(data) and not GATE.wait(0.2):
            self.wfile.write(data[at : at + 1])
            self.wfile.flush()
            at += 1
        self.answered()
        self.wfile.write(data[at:])

    def send(self, status: int, data: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.answered()
        self.end_headers()
        if self.command != "HEAD":
            # A HEAD answer has no body. With one (this host's 404 had it), the client took those
            # bytes for the next answer's status line on the kept-alive connection: a store read
            # failed ("Bad status line"), a summary read 0 events, and fsspec's GET fallback for
            # a failed HEAD left a GET in flight here after the store's slot was free (3 of 2).
            self.wfile.write(data)

    def failing(self) -> int:
        """The error status /_fail asked this request to answer with (once), or 0."""
        with LOCK:
            return FAILING.pop(f"{self.command} {self.path}", 0)


def main() -> None:
    serve_forever(functools.partial(Handler, directory=sys.argv[1]))


if __name__ == "__main__":
    main()
