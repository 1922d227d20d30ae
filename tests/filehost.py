"""A plain file host for the server's remote-store tests: `python tests/filehost.py DIR`.

Run as its own process (a real remote store on loopback). It serves DIR with the standard
library's handler, which sends no CORS headers (the browser never talks to it: tlscope serve
does), listens on 127.0.0.1 on a free port and prints that port on its first stdout line.
`GET /to/HOST/PORT/PATH` answers 302 to http://HOST:PORT/PATH (a redirect the client must check
again before following it). `GET /stall/PATH` waits 5 s before answering (a store that hangs).
"""

from __future__ import annotations

import functools
import http.server
import sys
import time


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/stall/"):
            time.sleep(5)
            self.path = self.path[len("/stall") :]
        if self.path.startswith("/to/"):
            self.send_response(302)
            host, port, rest = [*self.path[4:].split("/", 2), "", ""][:3]
            self.send_header("Location", f"http://{host}:{port}/{rest}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def do_HEAD(self) -> None:
        if self.path.startswith("/stall/"):
            time.sleep(5)
            self.path = self.path[len("/stall") :]
        if self.path.startswith("/to/"):
            self.do_GET()
            return
        super().do_HEAD()


def main() -> None:
    handler = functools.partial(Handler, directory=sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
