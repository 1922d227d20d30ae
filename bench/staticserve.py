"""`python bench/staticserve.py ROOT`: serve ROOT on 127.0.0.1 (a free port, printed) over HTTP/1.1.

http.server's handler speaks HTTP/1.0 unless told otherwise: a new connection per request,
which made a page of a dozen modules wait on connection set-up rather than on the viewer.
"""

from __future__ import annotations

import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every reply has a Content-Length

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def main() -> None:
    handler = functools.partial(Handler, directory=sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
