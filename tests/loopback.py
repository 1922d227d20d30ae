"""The test hosts' one way to listen (tests/filehost.py, slowhost.py, countproxy.py, lyinghost.py).

Each host is its own process on 127.0.0.1, on a port the system picks, which it prints as its
first stdout line: what `helpers.loopback_host` starts them with and reads.
"""

from __future__ import annotations

import http.server
from collections.abc import Callable


def serve_forever(handler: Callable[..., http.server.BaseHTTPRequestHandler]) -> None:
    """Serve `handler` on 127.0.0.1, a free port printed first, a thread a connection, until killed."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()
