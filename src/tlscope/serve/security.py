"""The server's guard, in front of every route (docs/SECURITY.md, "Server").

In this order, for each HTTP request:

1. **Host check.** A request with more than one Host header gets 400 (RFC 9112), and so does
   one whose Host is not exactly `host[:port]` (`host_name`). The Host of an absolute-form
   target (`GET http://evil.example/ HTTP/1.1`) is the target's (protocol.py). Bound to
   loopback, only loopback host names (and `allowed_hosts`) are
   answered: a page on `evil.example` that re-points its name at 127.0.0.1 (DNS rebinding)
   gets 421 for every request, so it never reads a trace as a same-origin page.
2. **CORS.** `Access-Control-Allow-Origin` goes only to an origin on the allowlist, compared
   exactly (scheme, host, port); `*` only when configured so. `Vary: Origin` on every answer
   (caches must not hand one origin's grant to another). A preflight from an unlisted origin gets
   403 and no grant. No `Access-Control-Allow-Credentials`, ever.
3. **Token.** With a token configured, a request carries `Authorization: Bearer <token>` or the
   cookie `/login?token=` sets (HttpOnly, SameSite=Strict); otherwise 401. Preflights and
   `/login` itself are exempt (a preflight carries no credentials by design).
4. Every answer gets `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Sent on everything under /viewers/ (contract 3): a viewer may load code only from here and
#: connect only here, so an unreviewed viewer cannot send a trace elsewhere.
VIEWER_CSP = (
    "default-src 'self'; connect-src 'self'; script-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'none'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; worker-src 'self' blob:"
)
#: The home page and error pages: no script at all.
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'"
)
#: HTML inside a trace folder (tlparse's report pages, written from an untrusted log with every
#: log string escaped): the report's own inline scripts run, but nothing is loaded from or sent
#: to another origin by fetch, so a string that escaped the escaping still could not post a trace away.
TRACE_HTML_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
TOKEN_COOKIE = "tlscope_token"
_ALLOW_METHODS = "GET, HEAD, POST, OPTIONS"
_ALLOW_HEADERS = "Authorization, Content-Type, Range, If-None-Match, If-Range"
_EXPOSE = "ETag, Content-Range, Content-Length, Content-Encoding, Accept-Ranges, Content-Type"
_EXEMPT = frozenset({"/login"})


_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._~-]+))(?::(?P<port>[0-9]{1,5}))?")


def host_name(host_header: str) -> str | None:
    """The name part of a Host header (`[::1]:8000` -> `::1`), lower case; None unless the value
    is exactly `host[:port]` (RFC 9110 7.2): a DNS name or IPv4 address, or an IPv6 address in
    brackets, and a port of digits up to 65535. No userinfo (`localhost:80@evil`), no
    non-numeric port (`localhost:abc`), no spaces or other characters a name cannot hold."""
    match = _HOST.fullmatch(host_header.lower())
    if match is None or (match["port"] is not None and int(match["port"]) > 65535):
        return None
    if match["v6"] is not None:
        try:
            ipaddress.IPv6Address(match["v6"])
        except ValueError:
            return None
        return match["v6"]
    return match["name"]


def is_loopback_bind(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


class Guard:
    """ASGI middleware: host check, CORS, token, and the common headers (see the module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        origins: Iterable[str],
        hosts: Iterable[str] | None,
        token: str | None,
    ) -> None:
        self.app = app
        self.origins = frozenset(origins)
        self.any_origin = "*" in self.origins
        #: None: any Host (a public bind without allowed_hosts).
        self.hosts = None if hosts is None else frozenset(h.lower().strip("[]") for h in hosts)
        self.token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if sum(1 for key, _ in scope["headers"] if key.lower() == b"host") > 1:
            await _plain(send, 400, b"more than one Host header", [])  # RFC 9112 section 3.2
            return
        sent = headers.get("host")
        host = None if sent is None else host_name(sent)
        if (sent is not None and host is None) or not scope.get("raw_path", b"/").startswith(b"/"):
            await _plain(send, 400, b"malformed Host header or request target", [])
            return
        if self.hosts is not None and host not in self.hosts:
            await _plain(send, 421, b"unknown Host header", [])
            return
        origin = headers.get("origin")
        grant = self._grant(origin)
        if scope["method"] == "OPTIONS" and origin is not None and "access-control-request-method" in headers:
            await self._preflight(send, grant)
            return
        if self.token is not None and scope["path"] not in _EXEMPT and not self._authorised(headers):
            await _plain(send, 401, b"a bearer token is required", _cors(grant), auth=True)
            return
        await self.app(scope, receive, _adding(send, _cors(grant)))

    def _grant(self, origin: str | None) -> str | None:
        if origin is None:
            return None
        if self.any_origin:
            return "*"
        return origin if origin in self.origins else None

    async def _preflight(self, send: Send, grant: str | None) -> None:
        if grant is None:
            await _plain(send, 403, b"origin not allowed", [(b"vary", b"Origin")])
            return
        extra = [
            (b"access-control-allow-methods", _ALLOW_METHODS.encode()),
            (b"access-control-allow-headers", _ALLOW_HEADERS.encode()),
            (b"access-control-max-age", b"600"),
        ]
        await _plain(send, 204, b"", _cors(grant) + extra)

    def _authorised(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and hmac.compare_digest(auth[7:].strip().encode(), self.token):
            return True
        cookie = cookie_value(headers.get("cookie", ""), TOKEN_COOKIE)
        return cookie is not None and hmac.compare_digest(cookie.encode(), self.token)


def cookie_value(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name (the first of repeated ones), latin-1 as HTTP has it."""
    out: dict[str, str] = {}
    for key, value in scope["headers"]:
        out.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    return out


def _cors(grant: str | None) -> list[tuple[bytes, bytes]]:
    out = [(b"vary", b"Origin")]
    if grant is not None:
        out += [(b"access-control-allow-origin", grant.encode()), (b"access-control-expose-headers", _EXPOSE.encode())]
    return out


_COMMON = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]


def _adding(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            vary = [v for k, v in headers if k.lower() == b"vary"]
            headers = [(k, v) for k, v in headers if k.lower() != b"vary"]
            varies = [b"Origin", *vary] if vary else [b"Origin"]
            headers += [(b"vary", b", ".join(varies))] + [h for h in extra if h[0] != b"vary"] + _COMMON
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]], *, auth: bool = False) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    if auth:
        headers.append((b"www-authenticate", b'Bearer realm="tlscope"'))
    await send({"type": "http.response.start", "status": status, "headers": headers + extra + _COMMON})
    await send({"type": "http.response.body", "body": body})
