"""Putting a server together from a config, and running it with uvicorn on a bound socket.

`build(config, sources)` is what `tlscope serve` and `tlscope run` call (and tests, in-process);
`bind` opens the listening socket first, so port 0 works and the real address can be printed
before the first request; `run` serves until Ctrl-C (uvicorn's graceful shutdown).
"""

from __future__ import annotations

import errno
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette

from tlscope.format.errors import TlscopeError
from tlscope.serve.app import Server, create_app
from tlscope.serve.cache import Cache
from tlscope.serve.config import ServeConfig, default_cache_dir, viewer_query
from tlscope.serve.stores import Store
from tlscope.serve.traces import ServedTrace, Traces
from tlscope.serve.viewerdirs import DEFAULT, discover


class ProgressPrinter:
    """One stderr line per trace per step: parsing started, each tenth done, ready or failed."""

    def __init__(self) -> None:
        self.shown: dict[str, tuple[str, int]] = {}
        self.last = 0.0

    def __call__(self, trace: ServedTrace) -> None:
        p = trace.progress
        done, total = p.get("bytes", p.get("downloaded", 0)), p.get("total", 0)
        tenth = done * 10 // total if total else 0
        step = (trace.state, tenth if total else p.get("ranks_done", 0))
        if self.shown.get(trace.id) == step:
            return
        self.shown[trace.id] = step
        what = "downloading" if "downloaded" in p else trace.state
        amount = f"{tenth * 10}% of {total / 1e6:.1f} MB" if total else f"{p.get('ranks_done', 0)} rank(s) done"
        print(f"tlscope serve: {trace.id}: {what}, {amount}", file=sys.stderr, flush=True)


def build(
    config: ServeConfig,
    sources: Sequence[str],
    *,
    viewer_paths: Sequence[str] = (),
    progress: bool = False,
    warn: list[str] | None = None,
    latest: bool = False,
    user_code: tuple[str, ...] = (),
) -> Server:
    """A Server for `sources` (paths or store URLs) and the config's. Raises TlscopeError (a path
    with nothing to serve), OSError, RemoteError (a URL in no store) or ViewerError. `latest`: a
    folder of several logs serves its newest only; `user_code`: --user-code's patterns for the logs
    parsed (a parse cached with other patterns is not reused)."""
    warnings = warn if warn is not None else []
    cache = Cache(Path(config.cache_dir) if config.cache_dir else default_cache_dir(), config.cache_max_bytes)
    stores = {name: Store(name, store) for name, store in config.stores.items()}
    traces = Traces(cache, stores, ProgressPrinter() if progress else None, user_code)
    for source in [*sources, *config.traces]:
        traces.add_source(source, latest=latest)
    viewers = discover([*config.viewers, *viewer_paths], warnings)
    # A viewer hosted with --viewer is what each trace's viewer_url opens (the first given): its
    # own test reads the links serve prints and /api/traces, with nothing to rewrite.
    default = Path(viewer_paths[0]).expanduser().resolve().name if viewer_paths else DEFAULT
    return Server(
        config=config,
        traces=traces,
        viewers=viewers,
        stores=stores,
        default_viewer=default,
        viewer_query=viewer_query(config),
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free one). Raises TlscopeError naming them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # accepted sockets copy it from this one. With proto 0, Nagle held each response body back
    # until the client's delayed ACK of the headers: 40 ms a request on a keep-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if err.errno == errno.EADDRINUSE:
            raise TlscopeError(f"port {port} is already in use on {host}; pass --port 0 for any free port") from None
        raise TlscopeError(f"cannot listen on {where}: {err.strerror or err}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def uvicorn_config(app: Starlette, **overrides: Any) -> Any:
    import uvicorn

    from tlscope.serve.protocol import BoundedHttpToolsProtocol

    options: dict[str, Any] = {
        "http": BoundedHttpToolsProtocol,  # httptools, with the request head bounded (protocol.py)
        "log_level": "warning",
        "access_log": False,
        "server_header": False,
        "timeout_keep_alive": 5,  # idle keep-alive connections are closed after 5 s
        "timeout_graceful_shutdown": 5,
        "lifespan": "on",
        "h11_max_incomplete_event_size": 64 * 1024,  # the same bound, should h11 be asked for
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


def run(server: Server, sock: socket.socket) -> None:
    """Serve on `sock` until Ctrl-C or SIGTERM (uvicorn stops gracefully, then re-raises the signal)."""
    import uvicorn

    uvicorn.Server(uvicorn_config(create_app(server))).run(sockets=[sock])


def wait_started(server: Any, timeout: float = 30.0) -> None:
    """Wait until a uvicorn.Server started in another thread is listening."""
    end = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > end:
            raise TimeoutError("the server did not start")
        time.sleep(0.01)
