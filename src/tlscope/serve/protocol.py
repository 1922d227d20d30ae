"""The server's HTTP/1.1 connection: uvicorn's httptools protocol with the request head bounded.

uvicorn's `h11_max_incomplete_event_size` bounds the request head only for its pure-Python h11
parser; with httptools (a dependency: twice as fast), nothing bounded the headers, and a client
could send one header of 128 MiB, held whole in memory (issue 24). Here:

- **The head is bounded** (docs/SERVER.md, "Limits"): the request line and all header lines
  together at most `HEAD_LIMIT` bytes, so each of them too. While a head is incomplete, the
  bytes received for it are counted chunk by chunk and the request is answered 431 (and the
  connection closed) as soon as they pass the limit: memory stays within the limit and one read
  (256 KiB). When the head is complete, its exact size (target, names and values) is checked
  again, so a head that arrived in a single read is held to the same limit.
- **An absolute-form target** (`GET http://host/path HTTP/1.1`) names the host it is for, and
  RFC 9112 section 3.2.2 says the server must use that host and ignore the Host header: its
  authority becomes the request's only Host header, so the guard's Host check (security.py)
  judges it like any other. A target that is neither a path, `*`, nor an http(s) absolute URL
  gets 400.
- **A response goes out in one send.** uvicorn writes a response's head when the app starts it
  and its body when the app sends it: two `send` calls, two TCP segments (the socket is
  TCP_NODELAY), for every small file. Under load those syscalls were the server's largest cost
  (bench/serve.py payloads: 215 of ~400 us of server time per request with a busy core beside
  it). Writes made in one turn of the event loop are joined and sent once at its end (at once
  past 64 KiB, so big bodies stream and flow control sees them as before).
"""

from __future__ import annotations

import asyncio
import http
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: Request line plus headers, in bytes (docs/SERVER.md, "Limits").
HEAD_LIMIT = 64 * 1024
_LINE_OVERHEAD = 4  # ": " and CRLF of each header line
#: Writes waiting for the end of the event loop's turn are sent at once past this.
_COALESCE_MAX = 64 * 1024


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bounded request head, on a transport whose writes of
    one event-loop turn go out together (see the module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading_head = False
        self._messages = 0
        self._head_bytes = 0  # bytes of the current head received in earlier reads
        self._exact = 0  # target, names and values of the current head, as parsed
        self._refusal: tuple[int, str] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Coalescing(transport, self.loop))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None:
            return  # answered and closing: the rest is not read
        self._unset_keepalive_if_required()
        messages, reading = self._messages, self._reading_head
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError:
            refusal = self._refusal or (400, "Invalid HTTP request received.")
            self._refusal = None
            self._refuse(*refusal)
            return
        if self._reading_head:
            # A head that began in this read is not counted for it (the read may hold the end of
            # the previous, pipelined request): memory stays within the limit plus one read.
            if messages == self._messages and reading:
                self._head_bytes += len(data)
            if self._head_bytes > HEAD_LIMIT:
                self._refuse(431, f"request line and headers over {HEAD_LIMIT} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._messages += 1
        self._reading_head, self._head_bytes, self._exact = True, 0, 0

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + _LINE_OVERHEAD)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._reading_head = False
        target = self.url
        if not target.startswith(b"/") and target != b"*":
            authority = _authority(target)
            if authority is None:
                self._refusal = (400, "the request target is not a path nor an http(s) URL")
                raise _Refused
            # RFC 9112 3.2.2: the target's host is the request's; the received Host is ignored.
            self.headers[:] = [(n, v) for n, v in self.headers if n != b"host"] + [(b"host", authority)]
        super().on_headers_complete()

    def _count(self, size: int) -> None:
        self._exact += size
        if self._exact > HEAD_LIMIT:
            self._refusal = (431, f"request line and headers over {HEAD_LIMIT} bytes")
            raise _Refused

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` with a one-line reason and close the connection (no app involved)."""
        self._refusal = (status, message)
        body = message.encode("ascii")
        head = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}".encode()]
        head += [b"content-type: text/plain; charset=utf-8", b"content-length: %d" % len(body), b"connection: close"]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.transport.close()


class _Refused(Exception):
    """Raised from a parser callback to stop parsing (httptools reports it as a parser error)."""


def _authority(target: bytes) -> bytes | None:
    """The `host[:port]` of an absolute-form target (http or https), or None if it is not one."""
    scheme, sep, rest = target.partition(b"://")
    if not sep or scheme.lower() not in (b"http", b"https"):
        return None
    end = min((i for i in (rest.find(c) for c in (b"/", b"?", b"#")) if i >= 0), default=len(rest))
    return rest[:end] or None


class _Coalescing:
    """A transport whose writes made in one turn of the event loop reach the socket in one write
    (at the end of the turn, or at once when they pass 64 KiB); everything else is the real
    transport's. Flow control is unchanged: the real transport still pauses the protocol."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._pending.append(data if isinstance(data, bytes) else bytes(data))
        self._size += len(data)
        if self._size >= _COALESCE_MAX:
            self.flush()
        elif len(self._pending) == 1:
            self._loop.call_soon(self.flush)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending, self._size = [], 0
            self._transport.write(data)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
