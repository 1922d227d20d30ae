"""A counting reverse proxy for the store tests: `python tests/countproxy.py http://127.0.0.1:PORT`.

Run as its own process on 127.0.0.1 (a free port, printed on its first stdout line), in front of a
store emulator (moto's S3 server, the GCS emulator): every request is passed to the upstream as
it came (method, path, headers, body) and its answer passed back, and is recorded first.
`GET /_requests` lists, as JSON, every request so far (`[method, path, Range or null]`): what a
file cost the store, counted on the wire, whatever the client library does inside. With
`--drop-range` it relays every request without its `Range` (as a proxy or cache in front of a
store may), so a ranged GET is answered with the whole object.
"""

from __future__ import annotations

import http.client
import http.server
import json
import sys
import urllib.parse

from loopback import serve_forever

UPSTREAM = urllib.parse.urlsplit(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:1")
DROP_RANGE = "--drop-range" in sys.argv[2:]
REQUESTS: list[tuple[str, str, str | None]] = []
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def relay(self) -> None:
        if self.path == "/_requests":
            data = json.dumps(REQUESTS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        REQUESTS.append((self.command, self.path, self.headers.get("Range")))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        dropped = _HOP | ({"range"} if DROP_RANGE else set())
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        upstream = http.client.HTTPConnection(UPSTREAM.hostname or "127.0.0.1", UPSTREAM.port, timeout=60)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            self.send_response(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in _HOP:
                    self.send_header(name, value)
            self.end_headers()  # HTTP/1.0: the body ends when this connection closes
            if self.command != "HEAD":
                while chunk := answer.read(64 * 1024):
                    self.wfile.write(chunk)
        finally:
            upstream.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = relay


def main() -> None:
    serve_forever(Handler)


if __name__ == "__main__":
    main()
