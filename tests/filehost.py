"""A plain file host for the server's remote-store tests: `python tests/filehost.py DIR`.

Run as its own process (a real remote store on loopback). It serves DIR with the standard
library's handler, which sends no CORS headers (the browser never talks to it: tlscope serve
does), listens on 127.0.0.1 on a free port and prints that port on its first stdout line.
`GET /to/HOST/PORT/PATH` answers 302 to http://HOST:PORT/PATH (a redirect the client must check
again before following it). `GET /stall/PATH` waits 5 s before answering (a store that hangs).
`GET /getto/HOST/PORT/PATH` redirects as `/to/` does while its HEAD answers for /PATH (a store
whose GET alone leaves its prefix); `/getto405/` the same with HEAD refused (405).
`GET /stallget/PATH` waits 5 s, its HEAD does not (a store whose GET hangs).
`GET /slowbody/PATH` sends PATH's headers and first half, then stalls for a minute (a store that
hangs mid-body). `GET /ranged/PATH` serves PATH honouring one `Range: bytes=A-B` (the standard handler ignores
Range and always sends the whole file); `GET /ranges` lists, as JSON, the Range header of every
`/ranged/` GET so far (null for none), so a test can tell what the server asked the store for.
`/nohead/PATH` refuses HEAD (405, as a host serving only GET, or a URL signed for GET, does) and
serves GET as `/ranged/` does. `/nolength/PATH` answers without a Content-Length (GET and HEAD:
the body ends when the connection closes, as a chunked answer's length is known only at its end).
`GET /requests` lists, as JSON, every request so far other than these lists (`[method, path,
Range or null]`): what each file cost the store.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import sys
import time

from loopback import serve_forever

RANGES: list[str | None] = []
REQUESTS: list[tuple[str, str, str | None]] = []


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path not in ("/ranges", "/requests"):
            REQUESTS.append(("GET", self.path, self.headers.get("Range")))
        if self.path == "/requests":
            self._send(200, json.dumps(REQUESTS).encode(), {})
            return
        if self.path.startswith("/nohead/"):
            self.path = "/ranged/" + self.path[len("/nohead/") :]
        if self.path.startswith("/nolength/"):
            self._without_length(self.translate_path(self.path[len("/nolength") :]), body=True)
            return
        if self.path.startswith("/stall/"):
            time.sleep(5)
            self.path = self.path[len("/stall") :]
        if self.path.startswith("/stallget/"):  # HEAD answers at once (do_HEAD)
            time.sleep(5)
            self.path = self.path[len("/stallget") :]
        for prefix in ("/getto/", "/getto405/"):  # GET redirects; HEAD answers (or refuses): do_HEAD
            if self.path.startswith(prefix):
                self.path = "/to/" + self.path[len(prefix) :]
        if self.path.startswith("/to/"):
            self.send_response(302)
            host, port, rest = [*self.path[4:].split("/", 2), "", ""][:3]
            self.send_header("Location", f"http://{host}:{port}/{rest}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/ranges":
            self._send(200, json.dumps(RANGES).encode(), {})
            return
        if self.path.startswith("/slowbody/"):
            self._half_then_stall(self.translate_path(self.path[len("/slowbody") :]))
            return
        if self.path.startswith("/ranged/"):
            self.path = self.path[len("/ranged") :]
            RANGES.append(self.headers.get("Range"))
            if self._ranged():
                return
        super().do_GET()

    def _ranged(self) -> bool:
        """Answer a single `bytes=A-B`, `bytes=A-` or `bytes=-N` range with 206; False otherwise."""
        spec, path = self.headers.get("Range", ""), self.translate_path(self.path)
        if not spec.startswith("bytes=") or "," in spec or not os.path.isfile(path):
            return False
        size = os.path.getsize(path)
        first, _, last = spec[6:].partition("-")
        if not first:
            start, end = max(0, size - int(last)), size - 1
        else:
            start, end = int(first), min(int(last or size - 1), size - 1)
        if start >= size:
            self._send(416, b"", {"Content-Range": f"bytes */{size}"})
            return True
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end + 1 - start)
        self._send(206, body, {"Content-Range": f"bytes {start}-{end}/{size}"})
        return True

    def _without_length(self, path: str, body: bool) -> None:
        if not os.path.isfile(path):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if body:
            with open(path, "rb") as f:
                self.wfile.write(f.read())
        self.close_connection = True

    def _half_then_stall(self, path: str) -> None:
        if not os.path.isfile(path):  # a 404, as a file host answers (not a dropped connection)
            self.send_error(404)
            return
        with open(path, "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        time.sleep(60)

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:
        REQUESTS.append(("HEAD", self.path, self.headers.get("Range")))
        if self.path.startswith(("/nohead/", "/getto405/")):
            self._send(405, b"", {"Allow": "GET"})
            return
        if self.path.startswith("/getto/"):  # HEAD of the file where the GET would be sent
            self.path = "/" + self.path.split("/", 4)[4]
        if self.path.startswith("/nolength/"):
            self._without_length(self.translate_path(self.path[len("/nolength") :]), body=False)
            return
        if self.path.startswith("/stall/"):
            time.sleep(5)
            self.path = self.path[len("/stall") :]
        if self.path.startswith("/to/"):
            self.do_GET()
            return
        for prefix in ("/ranged", "/slowbody", "/stallget"):
            if self.path.startswith(prefix + "/"):
                self.path = self.path[len(prefix) :]
        super().do_HEAD()


def main() -> None:
    serve_forever(functools.partial(Handler, directory=sys.argv[1]))


if __name__ == "__main__":
    main()
