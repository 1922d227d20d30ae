"""The ASGI application of `tlscope serve` (Starlette): the routes of docs/SERVER.md.

`create_app(server)` builds it from a `Server` (the config, the traces, the viewers); tests run it
in-process on port 0 (uvicorn in a thread) and drive it with httpx. Every route answers bad input
with a 4xx and a JSON `{"error": ...}` (or plain text for file routes), never a 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tlscope import __version__
from tlscope.format import layout
from tlscope.format.json_boundary import JsonError
from tlscope.format.json_boundary import decode as decode_json
from tlscope.serve import remote
from tlscope.serve.config import ServeConfig
from tlscope.serve.files import combined_chromium, file_response
from tlscope.serve.index import Filter
from tlscope.serve.openapi import document
from tlscope.serve.paths import BadPath, check_raw, confine, segments
from tlscope.serve.security import PAGE_CSP, TOKEN_COOKIE, TRACE_HTML_CSP, VIEWER_CSP, Guard, is_loopback_bind
from tlscope.serve.stores import RemoteError, Store
from tlscope.serve.traces import NotReady, ServedTrace, Traces, remote_trace
from tlscope.serve.viewerdirs import DEFAULT, Viewer
from tlscope.viewers import LIB
from tlscope.viewers.build import BuildError, built_explorer

_MAX_BODY = 16 * 1024
_JSON = "application/json"


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class Server:
    """Everything the routes need."""

    config: ServeConfig
    traces: Traces
    viewers: dict[str, Viewer]
    stores: dict[str, Store] = field(default_factory=dict)
    default_viewer: str = DEFAULT
    #: Added to each trace's viewer link (`--source-url`: config.viewer_query).
    viewer_query: str = ""


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(msgspec.json.encode(data), status_code=status, media_type=_JSON, headers=headers)


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def _trace(request: Request) -> ServedTrace:
    trace = _server(request).traces.by_id.get(request.path_params["id"])
    if trace is None:
        raise ApiError(404, "no such trace")
    return trace


async def _ready(server: Server, trace: ServedTrace) -> None:
    """Wait (up to request_timeout) for the trace's parse or download; 503 while it goes on."""
    if server.traces.is_ready(trace):
        server.traces.note_use(trace)
        return  # the common case, without wait_for's task per request
    try:
        await asyncio.wait_for(server.traces.ready(trace), server.config.request_timeout)
    except asyncio.TimeoutError:
        raise ApiError(503, "the trace is still being prepared", {"retry-after": "5"}) from None
    except NotReady as err:
        raise ApiError(err.status, str(err)) from None
    except RemoteError as err:
        raise ApiError(err.status, str(err)) from None


async def list_traces(request: Request) -> Response:
    server = _server(request)
    traces = list(server.traces.by_id.values())
    await asyncio.gather(*(_summary(server, t) for t in traces))
    return _json([t.describe(server.default_viewer, server.viewer_query) for t in traces])


async def _summary(server: Server, trace: ServedTrace) -> None:
    with contextlib.suppress(asyncio.TimeoutError, RemoteError, OSError):
        await asyncio.wait_for(server.traces.summary(trace), 10)


async def add_trace(request: Request) -> Response:
    """POST {"url": "<store URL>"}: serve a trace from a configured store (nothing else)."""
    server = _server(request)
    body = await _body(request)
    try:
        url = decode_json(body, _ADD_TRACE).url
    except JsonError as err:
        raise ApiError(400, f'expected {{"url": "..."}}: {err}') from None
    try:
        trace = server.traces.add(remote_trace(server.traces.store_ref(url)))
    except RemoteError as err:
        raise ApiError(err.status, str(err)) from None
    await _summary(server, trace)
    return _json(
        trace.describe(server.default_viewer, server.viewer_query), 201, {"location": f"/api/traces/{trace.id}"}
    )


class _AddTrace(msgspec.Struct, forbid_unknown_fields=True):
    url: str


_ADD_TRACE = msgspec.json.Decoder(_AddTrace)


async def _body(request: Request) -> bytes:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > _MAX_BODY:
            raise ApiError(413, "request body too large")
    return bytes(data)


async def one_trace(request: Request) -> Response:
    server, trace = _server(request), _trace(request)
    await _summary(server, trace)
    return _json(trace.describe(server.default_viewer, server.viewer_query))


async def trace_status(request: Request) -> Response:
    """The trace as listed, at once; starts its parse or download when not started (as the first
    request for one of its files does), so a page can show the progress while it waits."""
    server, trace = _server(request), _trace(request)
    server.traces.start(trace)
    await _summary(server, trace)
    if trace.state == "ready" and trace.summary is None:
        # The parse ended while the summary was asked for (wait_for runs it as a task of its own,
        # which found the trace still parsing): "ready" is said with its summary, which the
        # explorer reads to know the folder's layout, or not yet.
        await _summary(server, trace)
    return _json(trace.describe(server.default_viewer, server.viewer_query), headers={"cache-control": "no-store"})


async def events(request: Request) -> Response:
    server, trace = _server(request), _trace(request)
    f, offset, limit = _events_query(request, server.config)
    await _ready(server, trace)
    try:
        index = await server.traces.index(trace)
    except (RemoteError, NotReady, OSError) as err:
        raise ApiError(getattr(err, "status", 502), f"events index unavailable: {err}") from None
    body = await asyncio.to_thread(index.page, f, offset, limit) if f.q else index.page(f, offset, limit)
    return Response(body, media_type=_JSON, headers={"cache-control": "no-cache"})


def _events_query(request: Request, config: ServeConfig) -> tuple[Filter, int, int]:
    q = request.query_params
    unknown = set(q.keys()) - {"kind", "compile_id", "rank", "q", "offset", "limit"}
    if unknown:
        raise ApiError(400, f"unknown parameter(s): {', '.join(sorted(unknown))}")
    offset = _int(q.get("offset"), "offset", 0, 0, 2**31)
    limit = _int(q.get("limit"), "limit", 200, 0, config.max_page)
    rank = None if q.get("rank") in (None, "") else _int(q.get("rank"), "rank", 0, -1, 2**31)
    text = q.get("q") or None
    if text is not None and len(text) > config.max_query:
        raise ApiError(400, f"q is longer than {config.max_query} characters")
    for name in ("kind", "compile_id"):
        if len(q.get(name) or "") > 512:
            raise ApiError(400, f"{name} is too long")
    return Filter(kind=q.get("kind") or None, compile_id=q.get("compile_id") or None, rank=rank, q=text), offset, limit


def _int(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    if raw is None or raw == "":
        return default
    try:
        value = int(raw, 10)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be in {low}..{high}")
    return value


async def trace_file(request: Request) -> Response:
    server, trace = _server(request), _trace(request)
    rel = _checked(request, request.path_params.get("path", ""))
    await _ready(server, trace)
    if trace.local is not None:
        if rel == layout.CHROMIUM_EVENTS and _is_job(trace.local):
            return combined_chromium(trace.local, method=request.method)
        path = _confined(trace.local, rel)
        return file_response(
            path, request.headers, method=request.method, html_csp=TRACE_HTML_CSP, compress=_compress(request)
        )
    assert trace.remote is not None
    try:
        return await remote.file_response(
            trace.remote,
            rel,
            request.headers,
            method=request.method,
            html_csp=TRACE_HTML_CSP,
            compress=_compress(request),
        )
    except RemoteError as err:
        raise ApiError(err.status, str(err)) from None


def _is_job(root: Path) -> bool:
    """A multi-rank output folder written without its combined chromium_events.json (by tlscope)."""
    return (root / layout.MULTI_RANK_SUMMARY).is_file() and not (root / layout.CHROMIUM_EVENTS).is_file()


def _compress(request: Request) -> bool:
    """Whether files may go gzip-encoded to this client (config `compress`). "auto" spares clients
    on this machine: over loopback bytes cost nothing, while gzip as it sends takes a CPU core
    (~200 MB/s), which on two cores slowed the explorer's first rows of a 108 MB raw.jsonl from a
    median of 256 ms to 329 (bench/viewers.py --server serve)."""
    mode = _server(request).config.compress
    if mode != "auto":
        return mode == "always"
    client = request.client
    return client is None or not _is_loopback(client.host)


@functools.lru_cache(maxsize=4096)
def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # not an address (a Unix socket's peer, a test transport's name)
        return False


def _checked(request: Request, rel: str) -> str:
    try:
        check_raw(request.scope.get("raw_path") or b"")
        segments(rel)  # decoded too: a remote folder has no confine() to refuse '..' later
    except BadPath as err:
        raise ApiError(400, str(err)) from None
    return rel


def _confined(root: Any, rel: str) -> Any:
    try:
        path = confine(root, rel)
    except BadPath as err:
        raise ApiError(400 if "leaves" not in str(err) else 404, str(err)) from None
    if not path.is_file():
        raise ApiError(404, "no such file")
    return path


def to_folder(request: Request) -> Response:
    return RedirectResponse(quote(request.url.path) + "/", status_code=308)


async def lib_file(request: Request) -> Response:
    rel = _checked(request, request.path_params.get("path", ""))
    return file_response(_confined(LIB, rel), request.headers, method=request.method, compress=_compress(request))


async def viewer_file(request: Request) -> Response:
    viewer = _server(request).viewers.get(request.path_params["name"])
    if viewer is None:
        raise ApiError(404, "no such viewer")
    rel = _checked(request, request.path_params.get("path", ""))
    path = _confined(_viewer_root(viewer), rel)
    csp = {"content-security-policy": VIEWER_CSP}
    return file_response(path, request.headers, method=request.method, extra=csp, compress=_compress(request))


def _viewer_root(viewer: Viewer) -> Path:
    """The built-in explorer goes out as its build (its modules bundled in one app.js:
    viewers/build.py), remade when its files change. Should that ever fail, its source files,
    which work as they are (one request per module), rather than no explorer."""
    if viewer.source != "built-in":
        return viewer.folder
    try:
        return built_explorer()
    except (BuildError, OSError):
        return viewer.folder


async def list_viewers(request: Request) -> Response:
    server = _server(request)
    return _json([dict(v.describe(), default=v.name == server.default_viewer) for v in server.viewers.values()])


async def list_stores(request: Request) -> Response:
    return _json([s.describe() for s in _server(request).stores.values()])


async def openapi(request: Request) -> Response:
    return _json(document(__version__))


async def home(request: Request) -> Response:
    from tlscope.write.templates import environment

    server = _server(request)
    traces = list(server.traces.by_id.values())
    await asyncio.gather(*(_summary(server, t) for t in traces))
    page = (
        environment("tlscope.serve", {})
        .get_template("home.html.jinja")
        .render(
            version=__version__,
            traces=[t.describe(server.default_viewer, server.viewer_query) for t in traces],
            viewers=[v.describe() for v in server.viewers.values()],
            stores=[s.describe() for s in server.stores.values()],
            default_viewer=server.default_viewer,
        )
    )
    return HTMLResponse(page, headers={"content-security-policy": PAGE_CSP, "cache-control": "no-cache"})


#: tlscope's icon, answered at /favicon.ico: every page a browser opens here (the report's pages
#: too, whose HTML stays tlparse's) asks for it, and a 404 on each was noise in the console.
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<rect width="16" height="16" rx="3" fill="#2b6cb0"/>'
    b'<circle cx="7" cy="7" r="3.6" fill="none" stroke="#fff" stroke-width="1.7"/>'
    b'<path d="M9.7 9.7 13.2 13.2" stroke="#fff" stroke-width="1.9" stroke-linecap="round"/></svg>'
)


async def favicon(request: Request) -> Response:
    return Response(FAVICON, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"})


async def login(request: Request) -> Response:
    """`/login?token=T[&next=/path]`: check T, keep it in a cookie for this origin, go on."""
    import hmac

    token = _server(request).config.token
    sent = request.query_params.get("token", "")
    if token is None or not hmac.compare_digest(sent.encode(), token.encode()):
        raise ApiError(401, "wrong or missing token")
    target = request.query_params.get("next", "/")
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        target = "/"
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/")
    return response


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    if request.url.path.startswith("/api/"):
        return _json({"error": exc.message}, exc.status, exc.headers)
    return PlainTextResponse(exc.message, exc.status, headers=exc.headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _json({"error": exc.detail}, exc.status_code, dict(exc.headers or {}))


FILE_METHODS = ["GET", "HEAD"]
ROUTES = [
    # First: a trace's files are most of the requests (a viewer's payloads and pages), and Starlette
    # tries the routes in order; no other pattern matches a path under /traces/{id}/.
    Route("/traces/{id}/{path:path}", trace_file, methods=FILE_METHODS),
    Route("/", home, methods=FILE_METHODS),
    Route("/login", login, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=FILE_METHODS),
    Route("/openapi.json", openapi, methods=FILE_METHODS),
    Route("/api/traces", list_traces, methods=FILE_METHODS),
    Route("/api/traces", add_trace, methods=["POST"]),
    Route("/api/traces/{id}", one_trace, methods=FILE_METHODS),
    Route("/api/traces/{id}/events", events, methods=FILE_METHODS),
    Route("/api/traces/{id}/status", trace_status, methods=FILE_METHODS),
    Route("/api/viewers", list_viewers, methods=FILE_METHODS),
    Route("/api/stores", list_stores, methods=FILE_METHODS),
    Route("/traces/{id}", to_folder, methods=FILE_METHODS),
    Route("/lib/{path:path}", lib_file, methods=FILE_METHODS),
    Route("/viewers/{name}", to_folder, methods=FILE_METHODS),
    Route("/viewers/{name}/{path:path}", viewer_file, methods=FILE_METHODS),
]


def create_app(server: Server) -> Starlette:
    """The application for `server`, behind the guard (host check, CORS, token)."""
    app = Starlette(
        routes=ROUTES,
        exception_handlers={ApiError: _api_error, HTTPException: _http_error},
        lifespan=_lifespan,
    )
    app.state.server = server
    config = server.config
    loopback = is_loopback_bind(config.host)
    hosts = None if not loopback and not config.allowed_hosts else _hosts(config, loopback)
    app.add_middleware(Guard, origins=config.allow_origins, hosts=hosts, token=config.token)
    return app


def _hosts(config: ServeConfig, loopback: bool) -> list[str]:
    from tlscope.serve.security import LOOPBACK_NAMES

    return [*config.allowed_hosts, *(LOOPBACK_NAMES if loopback else ())]


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    server: Server = app.state.server
    for store in server.stores.values():
        await store.close()
