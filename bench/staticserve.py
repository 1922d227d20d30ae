"""`python bench/staticserve.py ROOT [--rate MBPS]`: serve ROOT on 127.0.0.1 (a free port, printed) over HTTP/1.1.

`--rate` paces each response body to MBPS MB/s, as a store across a network link would send it
(1 Gbit/s is 125 MB/s, 10 Gbit/s 1,250 MB/s); without it, bodies go as fast as loopback takes them.
`--delay-ms D` holds every request D ms before it is answered (a store D ms away: each request a
round trip); `--no-head` answers HEAD with 405 (a host serving only GET). `GET /_requests` gives,
as JSON, how many requests of each method it answered so far (itself not counted).

http.server's handler speaks HTTP/1.0 unless told otherwise: a new connection per request,
which made a page of a dozen modules wait on connection set-up rather than on the viewer.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import socket
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COUNTS: dict[str, int] = {}
_COUNTING = threading.Lock()


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every reply has a Content-Length
    rate: float | None = None  # bytes per second of a body, or as fast as it goes
    delay = 0.0  # seconds each request is held before its answer
    no_head = False

    def counted(self) -> bool:
        """Count this request and hold it `delay`; False for the count's own request (answered here)."""
        if self.path == "/_requests":
            with _COUNTING:
                body = json.dumps(COUNTS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return False
        with _COUNTING:
            COUNTS[self.command] = COUNTS.get(self.command, 0) + 1
        if self.delay:
            time.sleep(self.delay)
        return True

    def do_HEAD(self) -> None:
        if not self.counted():
            return
        if self.no_head:
            self.send_response(405)
            self.send_header("Allow", "GET")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_HEAD()

    def setup(self) -> None:
        super().setup()
        # http.server writes a reply's headers and its body in separate sends; without NODELAY the
        # body waits for the client's delayed ACK of the headers (40 ms on Linux): every module
        # and index file of a page paid it. Static hosts (nginx's tcp_nodelay, the default) do not.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def copyfile(self, source: Any, outputfile: Any) -> None:
        if self.rate is None:
            # sendfile(2), as static hosts send files (nginx's `sendfile on`): the file host's
            # own cost per byte is the kernel's, in the direct reads and through a store alike.
            outputfile.flush()
            self.connection.sendfile(source)
            return
        start, sent = time.perf_counter(), 0
        while block := source.read(256 * 1024):
            outputfile.write(block)
            sent += len(block)
            time.sleep(max(0.0, start + sent / self.rate - time.perf_counter()))

    def end_headers(self) -> None:
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def do_GET(self) -> None:
        if not self.counted():
            return
        # Range requests (one `bytes=A-B`), as tlscope serve and most static hosts answer them:
        # the JS client reads dropped blocks of a big raw.jsonl again with them.
        spec = self.headers.get("Range", "")
        path = self.translate_path(self.path)
        if not spec.startswith("bytes=") or not os.path.isfile(path):
            super().do_GET()
            return
        first, _, last = spec[6:].partition("-")
        size = os.path.getsize(path)
        if not first:  # the last N bytes
            start, end = max(0, size - int(last)), size - 1
        else:
            start, end = int(first), min(int(last) if last else size - 1, size - 1)
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(max(0, end - start + 1))
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.copyfile(io.BytesIO(body), self.wfile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--rate", type=float, help="MB/s of each response body (default: unpaced)")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="hold each request this long (default 0)")
    parser.add_argument("--no-head", action="store_true", help="answer HEAD with 405")
    args = parser.parse_args()
    Handler.rate = args.rate * 1e6 if args.rate else None
    Handler.delay, Handler.no_head = args.delay_ms / 1000, args.no_head
    handler = functools.partial(Handler, directory=args.root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
