"""A file host whose answers lie, for the server's store tests: `python tests/lyinghost.py DIR`.

Run as its own process on 127.0.0.1 (a free port, printed on its first stdout line). A store at
`/KIND/` serves DIR: its markers (manifest.json, multi_rank_summary.json) honestly, so the folder
can be added, and every other file with the lie KIND names in its answer's head or body (see
LIES). The server must never answer such a file with a 500, nor with a body its own head
misstates: a store is not trusted to describe its bytes (docs/SECURITY.md).
"""

from __future__ import annotations

import gzip
import http.server
import os
import sys

from loopback import serve_forever

MARKERS = ("manifest.json", "multi_rank_summary.json")


Answer = tuple[int, list[tuple[str, str]], bytes, bool]


def _lies(body: bytes, asked: str | None) -> dict[str, Answer]:
    """KIND -> (status, headers, body, close after it) for a file whose bytes are `body`."""
    size, mid, packed = len(body), len(body) // 2, gzip.compress(body)

    def whole(*headers: tuple[str, str]) -> Answer:  # the right length, other headers lying
        return 200, [*headers, ("Content-Length", str(size))], body, False

    def part(span: str) -> Answer:  # a 206 of the whole body, its Content-Range lying
        return 206, [("Content-Range", span), ("Content-Length", str(size))], body, False

    return {
        # A length that is no number, or negative; longer than the body sent; past any store limit.
        "badlength": (200, [("Content-Length", "12abc")], body, True),
        "negative": (200, [("Content-Length", "-5")], body, True),
        "short": (200, [("Content-Length", str(size))], body[:mid], True),
        "huge": (200, [("Content-Length", str(10**13))], body[:100], True),
        # Ranges: backwards, past the total, no total, not a range; another span than asked.
        "inverted": part(f"bytes {mid}-10/{size}"),
        "beyond": part(f"bytes 0-{2 * size - 1}/{size}"),
        "rangenototal": part(f"bytes 0-{size - 1}/*"),
        "garbagerange": part("bytes x-y/z"),
        "otherspan": (206, [("Content-Range", f"bytes 0-9/{size}"), ("Content-Length", "10")], body[:10], False)
        if asked
        else whole(),
        "badtotal416": (416, [("Content-Range", "bytes */-7"), ("Content-Length", "0")], b"", False),
        # Bytes encoded though `identity` was asked.
        "gzip": (200, [("Content-Encoding", "gzip"), ("Content-Length", str(len(packed)))], packed, False),
        # An ETag the server would pass on: not UTF-8 (nor Latin-1 text), or 1,000 characters.
        "etagbytes": whole(("ETag", '"caf\udcc3\udca9\udcff"')),
        "etaghuge": whole(("ETag", '"' + "e" * 1_000 + '"')),
    }


#: The kinds of lie, each a store's prefix; `/loop/` answers every path with a redirect to another.
LIES = (*_lies(b"x", None), "loop")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def answer(self, with_body: bool) -> None:
        kind, _, rel = self.path.lstrip("/").partition("/")
        if kind == "loop":  # every path answers 302 to the next, relative to itself
            self.send_raw(302, [("Location", "loop-again"), ("Content-Length", "0")], b"", with_body, False)
            return
        path = os.path.join(ROOT, *[p for p in rel.split("?")[0].split("/") if p not in ("", ".", "..")])
        if kind not in LIES or not os.path.isfile(path):
            self.send_raw(404, [("Content-Length", "0")], b"", with_body, False)
            return
        with open(path, "rb") as f:
            body = f.read()
        if os.path.basename(path) in MARKERS:
            self.send_raw(200, [("Content-Length", str(len(body)))], body, with_body, False)
            return
        status, headers, data, close = _lies(body, self.headers.get("Range"))[kind]
        self.send_raw(status, headers, data, with_body, close)

    def send_raw(self, status: int, headers: list[tuple[str, str]], body: bytes, with_body: bool, close: bool) -> None:
        """The head as written (no header checked or added but Connection), then the body."""
        head = [f"HTTP/1.1 {status} Lie".encode()]
        head += [f"{name}: {value}".encode("utf-8", "surrogateescape") for name, value in headers]
        head.append(b"Connection: close" if close else b"Connection: keep-alive")
        self.wfile.write(b"\r\n".join(head) + b"\r\n\r\n")
        if with_body:
            self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = close

    def do_GET(self) -> None:
        self.answer(True)

    def do_HEAD(self) -> None:
        self.answer(False)


ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")


def main() -> None:
    serve_forever(Handler)


if __name__ == "__main__":
    main()
