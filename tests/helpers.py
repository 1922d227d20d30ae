"""What tests share, imported one way: `from helpers import ...` (pytest puts tests/ on sys.path).

Fixtures live in conftest.py and use these; test modules never import conftest or each other.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

import pytest

from tlscope.analyse.fxgraph import FxGraph
from tlscope.format.folder import OutputFolder
from tlscope.format.raw import display_compile_id, event_key

REPO = Path(__file__).resolve().parents[1]
#: CI clones the repo with ../shared beside it; tests that need it skip when it is absent.
#: A worktree elsewhere points at it with TLSCOPE_SHARED.
SHARED = Path(os.environ.get("TLSCOPE_SHARED", REPO.parent / "shared"))
TLPARSE_TRACES = SHARED / "traces" / "tlparse"
#: tlparse's upstream test logs (vLLM, subgraph names): graph payloads the 0.4.3 traces lack.
TLPARSE_UPSTREAM = SHARED / "traces" / "tlparse-upstream"
TLPARSE_VERSION = "0.4.3"
CORPUS = REPO / "corpus" / "traces"


def corpus_compiles(scenario: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """compiles.json of `tlscope corpus/traces/<scenario>` (a module fixture's, parsed once)."""
    from tlscope.cli import main

    out = tmp_path_factory.mktemp(scenario) / "out"
    assert main([str(CORPUS / scenario), "-o", str(out), "--no-browser"]) == 0
    found: dict[str, Any] = json.loads((out / "compiles.json").read_text("utf-8"))
    return found


def corpus_recompiles(scenario: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each recompile of a corpus scenario's compiles.json, by its compile id."""
    compiles = corpus_compiles(scenario, tmp_path_factory)["compiles"]
    return {c["id"]: c["recompile"] for c in compiles if c["recompile"]}


def chosen_failure(recompile: dict[str, Any]) -> dict[str, Any]:
    """A recompile's recommended guard failure (compiles.json `recompile.recommended`)."""
    failure: dict[str, Any] = recompile["guard_failures"][recompile["recommended"]["index"]]
    return failure


def require_shared() -> Path:
    """../shared/traces/tlparse, or skip the calling test with the reason."""
    if not TLPARSE_TRACES.is_dir():
        pytest.skip(f"shared traces not found at {TLPARSE_TRACES} (clone with ../shared beside the repo)")
    return TLPARSE_TRACES


def all_traces() -> list[str]:
    """Every file under the tlparse traces folder (empty ones too), or one id that skips."""
    if not TLPARSE_TRACES.is_dir():
        return ["<shared traces absent>"]
    return sorted(
        p.relative_to(TLPARSE_TRACES).as_posix()
        for p in TLPARSE_TRACES.rglob("*")
        if p.is_file() and p.name != "LICENSE"
    )


def trace_path(rel: str) -> Path:
    return require_shared() / rel


# -- an independent view of the log format (shares no code with tlscope's reader) -------------

#: Envelope fields that are context, not the event (from PyTorch's structured logging and
#: docs/FORMAT.md); written out here rather than imported so counts stay independent.
CONTEXT = {
    "rank",
    "compiled_autograd_id",
    "frame_id",
    "frame_compile_id",
    "attempt",
    "has_payload",
    "stack",
    "severity",
    "timestamp",
    "pathname",
    "thread",
}
GLOG = re.compile(rb"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] ")


# -- the browser tests ---------------------------------------------------------------------

#: As the machine notes say: headless, no sandbox as root, and no background connections
#: (the closed network refuses them, many at a time).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_or_skip() -> str:
    """The chromium executable; skip the test (with the reason) when it or Playwright is missing."""
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright for Python is not installed")
    return found


# -- scripts outside the package -------------------------------------------------------------


def load_script(folder: str, name: str) -> ModuleType:
    """Import <repo>/<folder>/<name>.py under a unique module name (bench/, tools/ are scripts)."""
    path = REPO / folder / f"{name}.py"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # for the script's own sibling imports
    spec = importlib.util.spec_from_file_location(f"tlscope_{folder}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def load_tool(name: str) -> ModuleType:
    """tools/<name>.py as a module."""
    return load_script("tools", name)


# -- a static stand-in for `tlscope serve` in viewer tests -----------------------------------

#: The viewer CSP of docs/SERVER.md (contract 3), sent on /viewers/ pages.
VIEWER_CSP = (
    "default-src 'self'; connect-src 'self'; script-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; style-src 'self' 'unsafe-inline'"
)


class StaticSite:
    """Serve /lib/, /viewers/<name>/ (with the viewer CSP) and /traces/<name>/ from folders, on 127.0.0.1:0.

    A plain file server in a thread (no events API), for viewer tests that need no `tlscope serve`.
    """

    def __init__(self, mounts: dict[str, Path]) -> None:
        import functools
        import http.server
        import threading

        self.mounts = {prefix.strip("/"): folder for prefix, folder in mounts.items()}
        handler = functools.partial(_StaticHandler, site=self)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def resolve(self, url_path: str) -> Path | None:
        from urllib.parse import unquote

        path = unquote(url_path.split("?", 1)[0].split("#", 1)[0]).lstrip("/")
        for prefix in sorted(self.mounts, key=len, reverse=True):
            if path == prefix or path.startswith(prefix + "/"):
                root = self.mounts[prefix].resolve()
                target = (root / path[len(prefix) :].lstrip("/")).resolve()
                if target != root and root not in target.parents:
                    return None
                return target / "index.html" if target.is_dir() else target
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _make_static_handler() -> type:
    import http.server
    import mimetypes

    class Handler(http.server.BaseHTTPRequestHandler):
        def __init__(self, *args: object, site: StaticSite, **kwargs: object) -> None:
            self.site = site
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, head_only: bool) -> None:
            target = self.site.resolve(self.path)
            if target is None or not target.is_file():
                self.send_error(404)
                return
            body = target.read_bytes()
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if target.suffix in (".js", ".mjs"):
                kind = "text/javascript"
            spec = self.headers.get("Range", "")
            if spec.startswith("bytes=") and "-" in spec:  # one range, as the JS client asks
                first, last = spec[6:].split("-", 1)
                start, end = int(first), min(int(last or len(body) - 1), len(body) - 1)
                body = body[start : end + 1]
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{target.stat().st_size}")
            else:
                self.send_response(200)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            if self.path.startswith("/viewers/"):
                self.send_header("Content-Security-Policy", VIEWER_CSP)
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(False)

        def do_HEAD(self) -> None:
            self._send(True)

    return Handler


_StaticHandler = _make_static_handler()


# -- driving viewers in the browser (docs/VIEWERS.md's window.__tlscope hook) -------------


def raw_events(folder: Path) -> list[dict[str, Any]]:
    """The events of raw.jsonl, of every rank in order for a multi-rank output (the format's reader)."""
    return [event for _, part in OutputFolder(folder).parts() for event in part.events()]


def manifest_ids(folder: Path) -> set[str]:
    return {c.id for _, part in OutputFolder(folder).parts() for c in part.manifest().compile_ids}


#: The tests' oracle of a raw.jsonl line's event key and display compile id is the format's own
#: rule (format/raw.py), the one the events API and tlscope.load use; the JS client is held to it.
key_of = event_key
compile_id_of = display_compile_id


def open_explorer(browser: Any, url: str, height: int = 900) -> Any:
    """A new page on `url`, loaded (hook `loaded`); `page.errors` collects uncaught page errors."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url)
    wait_hook(page, lambda h: h.get("loaded") is True)
    return page


def hook(page: Any) -> dict[str, Any]:
    value = page.evaluate("JSON.parse(JSON.stringify(window.__tlscope || {}))")
    assert isinstance(value, dict)
    return value


def wait_hook(page: Any, test: Callable[[dict[str, Any]], bool], timeout: float = 20.0) -> dict[str, Any]:
    """Poll window.__tlscope until `test` holds; fail with the last value seen."""
    end = time.monotonic() + timeout
    value: dict[str, Any] = {}
    while time.monotonic() < end:
        value = hook(page)
        if value.get("error"):
            pytest.fail(f"viewer error: {value['error']}")
        if test(value):
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting on window.__tlscope: {json.dumps(value)[:2000]}")


#: A viewer that fetches `?target=` and records whether it got through and which CSP directives it
#: violated (window.__tlscope {ready, fetched, violations}): what the viewer CSP must stop.
EXFILTRATOR = """<!doctype html><title>x</title><script type="module" src="x.js"></script>"""
EXFILTRATOR_JS = """
window.__tlscope = { ready: false, violations: [] };
document.addEventListener('securitypolicyviolation', (e) => window.__tlscope.violations.push(e.violatedDirective));
const target = new URL(location.href).searchParams.get('target');
fetch(target, { mode: 'no-cors' }).then(
  () => { window.__tlscope.fetched = true; window.__tlscope.ready = true; },
  (err) => {
    window.__tlscope.fetched = false;
    window.__tlscope.error_text = String(err);
    window.__tlscope.ready = true;
  },
);
"""


def write_leaky_viewer(folder: Path) -> Path:
    """EXFILTRATOR's two files in `folder` (made)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(EXFILTRATOR)
    (folder / "x.js").write_text(EXFILTRATOR_JS)
    return folder


# -- tlscope serve in-process (uvicorn in a thread on 127.0.0.1:0) -----------------------------


def free_port() -> int:
    """A port free on 127.0.0.1 now, for a process that takes no port 0 (`--port N`)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(port: int, proc: Any, timeout: float = 60) -> None:
    """Wait until something accepts on 127.0.0.1:`port`; fail if `proc` (a Popen) exits first."""
    import socket

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"the store process exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"nothing listens on 127.0.0.1:{port}")


#: moto's test credentials, as the environment gives them to s3fs and boto3.
S3_CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@contextlib.contextmanager
def moto_s3(bucket: str) -> Iterator[tuple[str, Any]]:
    """moto's S3 server in its own process on 127.0.0.1, with `bucket` made: (its endpoint, a boto3
    client of it to fill the bucket); stopped when done."""
    import subprocess

    import boto3

    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    env = {**os.environ, **S3_CREDS}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                              aws_secret_access_key="testing", region_name="us-east-1")  # fmt: skip
        client.create_bucket(Bucket=bucket)
        yield endpoint, client
    finally:
        stop_process(proc)


@contextlib.contextmanager
def loopback_host(script: Path, *args: str) -> Iterator[str]:
    """A test host started from `script` (tests/filehost.py, slowhost.py, countproxy.py: each
    listens on 127.0.0.1, port 0, and prints its port as its first line); yields its base URL,
    and stops it when done."""
    import subprocess

    proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        stop_process(proc)


def stop_process(proc: Any) -> None:
    """Terminate a Popen, kill it if it has not gone in 10 s, and reap it."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def add_trace(client: Any, url: str) -> dict[str, Any]:
    """POST a store URL to a live server's /api/traces (an httpx.Client); the trace it lists."""
    r = client.post("/api/traces", json={"url": url})
    assert r.status_code == 201, r.text
    trace: dict[str, Any] = r.json()
    assert r.headers["location"] == f"/api/traces/{trace['id']}"
    return trace


class LiveServer:
    """`tlscope serve`'s app for `sources`, served by uvicorn in a thread on 127.0.0.1, port 0.

    `config` takes ServeConfig fields (cache_dir defaults to a fresh folder under `tmp`).
    `.url` is the base URL, `.server` the tlscope.serve.app.Server; `close()` stops it.
    """

    def __init__(self, sources: list[str], tmp: Path, *, viewers: list[str] = (), **config: Any) -> None:  # type: ignore[assignment]
        import threading

        import uvicorn

        from tlscope.serve.app import create_app
        from tlscope.serve.config import ServeConfig, check
        from tlscope.serve.server import base_url, bind, build, uvicorn_config, wait_started

        config.setdefault("cache_dir", str(tmp / "serve-cache"))
        self.config = check(ServeConfig(**config))
        self.server = build(self.config, sources, viewer_paths=list(viewers))
        self.sock = bind("127.0.0.1", 0)
        self.url = base_url(self.sock)
        self.uvicorn = uvicorn.Server(uvicorn_config(create_app(self.server)))
        self.thread = threading.Thread(target=self.uvicorn.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        wait_started(self.uvicorn)

    def trace_ids(self) -> list[str]:
        return list(self.server.traces.by_id)

    def trace_url(self, source: Path) -> str:
        """The `/traces/<id>/` URL of the trace served from `source` (a path given to the server)."""
        wanted = str(Path(source).resolve())
        return next(t.url() for t in self.server.traces.by_id.values() if t.source == wanted)

    def close(self) -> None:
        self.uvicorn.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    @contextlib.contextmanager
    def compressing(self, mode: str = "always") -> Iterator[None]:
        """The server with config `compress` set to `mode` meanwhile: every test client is on
        loopback, which the default ("auto") sends no gzip to."""
        import msgspec

        before = self.server.config
        self.server.config = msgspec.structs.replace(before, compress=mode)
        try:
            yield
        finally:
            self.server.config = before


class ExplorerSite:
    """A live server's explorer over named traces: `url`, and each trace's `/traces/<id>/` path."""

    def __init__(self, url: str, traces: dict[str, str]) -> None:
        self.url = url
        self.traces = traces

    def explorer(self, name: str, more: str = "") -> str:
        """The explorer's page for trace `name`; `more` is appended (`&param=...`, `#state`)."""
        return f"{self.url}/viewers/explorer/?trace={quote(self.traces[name], safe='')}{more}"


@contextlib.contextmanager
def served_explorer(folders: dict[str, Path], tmp: Path) -> Iterator[ExplorerSite]:
    """`tlscope serve` (LiveServer) over `folders` (name -> output folder) while in the block."""
    server = LiveServer([str(f) for f in folders.values()], tmp)
    try:
        yield ExplorerSite(server.url, {name: server.trace_url(f) for name, f in folders.items()})
    finally:
        server.close()


def check_remote_log_parsed_once(client: Any, live: LiveServer, url: str, log: Path) -> dict[str, Any]:
    """A raw log in a store (`url`): added twice, one trace; parsed on first use, once, into the
    cache under the SHA-256 of its bytes; its events API agrees with its manifest; no download left."""
    import hashlib

    trace = add_trace(client, url)
    assert trace["kind"] == "remote-log" and add_trace(client, url)["id"] == trace["id"]
    manifest = client.get(trace["url"] + "manifest.json")
    assert manifest.status_code == 200
    events = client.get(f"/api/traces/{trace['id']}/events", params={"limit": 0}).json()
    assert events["total"] == manifest.json()["raw_jsonl_events"] > 0
    cache = Path(live.config.cache_dir or "")
    parsed = [p.stem for p in cache.iterdir() if p.suffix == ".json" and not p.name.startswith("remote-")]
    assert parsed == [hashlib.sha256(log.read_bytes()).hexdigest()]  # one parse, keyed by its bytes
    assert not list((cache / "tmp").iterdir())  # the download is gone
    return trace


def raw_request(
    url: str, target: str | bytes, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, bytes]:
    """Send `target` byte for byte (no client normalises '..' or '%2e' away); (status, body).

    Reads until the server closes (`Connection: close`); a chunked body comes back as sent.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    raw_target = target.encode("latin-1") if isinstance(target, str) else target
    lines = [method.encode() + b" " + raw_target + b" HTTP/1.1", f"Host: {parts.netloc}".encode(), b"Connection: close"]
    lines += [f"{k}: {v}".encode("latin-1") for k, v in (headers or {}).items()]
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


# -- timeline.bin's corner cases, written by its writer (for the Python and the JS decoder) ----

#: A day in µs past the epoch start of EDGE_EVENTS: far beyond one block's 2^32 µs.
_DAY_US = 86_400_000_000
_T0 = 1_795_291_054_605_924.8

#: (rank, chromium event) in log order: nesting, a span whose block is flushed (another rank)
#: before its end comes, a span of 2 hours (its duration in ms), starts a day apart (a new
#: block), an unclosed B, an E with no B, an X, an instant, non-ASCII names, junk left out.
EDGE_EVENTS: list[tuple[int | None, Any]] = [
    (
        0,
        {
            "name": "dynamo",
            "cat": "dynamo_timed",
            "ph": "B",
            "ts": _T0,
            "pid": 0,
            "tid": 0,
            "args": {"compile_id": "0/0"},
        },
    ),
    (
        0,
        {
            "name": "inner",
            "cat": "dynamo_timed",
            "ph": "B",
            "ts": _T0 + 10.5,
            "pid": 0,
            "tid": 0,
            "args": {"compile_id": "0/0"},
        },
    ),
    (
        0,
        {
            "name": "hit",
            "cat": "dynamo_timed",
            "ph": "i",
            "ts": _T0 + 11,
            "pid": 0,
            "tid": 0,
            "args": {"compile_id": "None"},
            "s": "p",
        },
    ),
    (1, {"name": "other rank", "cat": "c", "ph": "X", "ts": _T0 + 12, "dur": 99.9, "pid": 0, "tid": 0}),
    (0, {"name": "inner", "cat": "dynamo_timed", "ph": "E", "ts": _T0 + 20.25, "pid": 0, "tid": 0, "args": {}}),
    (0, {"name": "dynamo", "cat": "dynamo_timed", "ph": "E", "ts": _T0 + 7_200_000_000, "pid": 0, "tid": 0}),
    (
        0,
        {
            "name": "späť 名前",
            "cat": "ünïcode",
            "ph": "B",
            "ts": _T0 + _DAY_US,
            "pid": 0,
            "tid": 1,
            "args": {"compile_id": "!0/1/0_1"},
        },
    ),
    (0, {"name": "orphan end", "cat": "x", "ph": "E", "ts": _T0 + _DAY_US + 1, "pid": 0, "tid": 7}),
    (0, "not an event"),
    (0, {"name": "no ts", "ph": "i"}),
    (None, {"name": 3, "ph": "C", "ts": _T0 - _DAY_US, "pid": {"odd": 1}, "tid": [1]}),
]


def write_edge_timeline(path: Path) -> None:
    from tlscope.write.timeline_writer import TimelineWriter

    writer = TimelineWriter(path)
    for rank, event in EDGE_EVENTS:
        writer.add(event, rank)
    writer.close()


def packing_events() -> list[dict[str, Any]]:
    """Events of one rank that exercise timeline.bin version 2's packing once written in blocks
    of 64 (`write_packing_timeline`): spans closed after their block was written (their kind and
    padded duration patched in the file), one never closed, depths past the escape (31) and the
    cap (255), local tables of more than 127 labels and compile ids (two-byte varints), starts
    going back, durations beyond 2^32 µs that are not whole ms, and jumps of more than 2^52 µs
    (new blocks)."""
    t = 1_795_291_054_605_924
    thread = {"pid": 1, "tid": 1}
    events: list[dict[str, Any]] = [
        {"name": "outer", "cat": "c", "ph": "B", "ts": t, **thread, "args": {"compile_id": "0/0"}},
        {"name": "never closed", "cat": "c", "ph": "B", "ts": t + 1, "pid": 2, "tid": 2},
    ]
    events += [{"name": f"nest {d}", "cat": "n", "ph": "B", "ts": t + 2 + d, **thread} for d in range(300)]
    events += [
        {
            "name": f"i{i % 150}",
            "ph": "i",
            "ts": t + 400 + (i * 7919) % 1000 - 500,
            "args": {"compile_id": f"{i % 140}/0"},
        }
        for i in range(200)
    ]
    events += [{"ph": "E", "ts": t + 2_000 + d, **thread} for d in range(300)]
    events += [
        {"name": "long", "cat": "x", "ph": "X", "ts": t + 3_000, "dur": 5_000_000_123.75, **thread},
        {"name": "far", "cat": "x", "ph": "i", "ts": t + 2**52 + 5},
        {"name": "back", "cat": "x", "ph": "i", "ts": -(2**52) - 7},
        {"ph": "E", "ts": t + 10_000_000_000_001, **thread},
    ]
    return events


def write_packing_timeline(path: Path) -> None:
    from tlscope.write.timeline_writer import TimelineWriter

    writer = TimelineWriter(path, block_events=64)
    for event in packing_events():
        writer.add(event, 0)
    writer.close()


# -- one payload store per job -------------------------------------------------------------------


def stored_payloads_once(out: Path) -> tuple[int, int]:
    """Check one payload store per job: every payload's bytes are on disk once (one inode), in
    OUT/payloads/; a rank's report file holding a payload's bytes is that inode (a hard link).
    Returns (payload files, rank files linked to them)."""
    store = {p.name[:-4]: p.stat().st_ino for p in (out / "payloads").iterdir()}
    assert store and all(hashlib.md5(p.read_bytes()).hexdigest() == p.name[:-4] for p in (out / "payloads").iterdir())
    assert not list(out.glob("rank_*/payloads")), "no rank keeps a payloads/ of its own"
    linked = 0
    for rank in out.glob("rank_*"):
        for root, _, files in os.walk(rank):
            for name in files:
                path = Path(root) / name
                if name.endswith(".txt") and path.stat().st_size:
                    md5 = hashlib.md5(path.read_bytes()).hexdigest()
                    if md5 in store:
                        assert path.stat().st_ino == store[md5], f"{path} is a second copy of payloads/{md5}.txt"
                        linked += 1
    return len(store), linked


# -- printed FX graphs: an independent count of a payload's nodes (issue 23) -------------------

#: An assignment line as printed: `name = ...`, `name: "f32[4]" = ...` or `a, b, = ...`,
#: not a `x = None` that frees a value.
#: A node's assignment line; FX prints an in-place operator's node after the statement that does
#: it (`step_t += 1;  step_t_1: "f32[][]cpu" = step_t;  step_t = None`, a compiled optimizer's).
ASSIGNMENT = re.compile(
    r"^\s+(?:[A-Za-z_]\w*\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)=[^;\n]*;\s+)?"
    r'[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*,?\s*(:\s*"[^"]*")?\s*=(?!=)\s*(?!None\s*$)'
)
GRAPH_CLASS = re.compile(r"^(\s*)class \S+\(torch\.nn\.Module\):\s*$")


def assignment_lines(text: str) -> int:
    """Assignment lines of the first graph class's block (nested classes' included)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if GRAPH_CLASS.match(line))
    indent = len(lines[start]) - len(lines[start].lstrip())
    count = 0
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        count += bool(ASSIGNMENT.match(line))
    return count


def all_nodes(graph: FxGraph) -> int:
    return len(graph.nodes) + sum(all_nodes(sub) for sub in graph.subgraphs.values())


def unresolved(graph: FxGraph) -> list[str]:
    """References to a name that is neither an input nor an earlier node (nested graphs too)."""
    known = {i.name for i in graph.inputs}
    missing: list[str] = []
    for node in graph.nodes:
        missing += [f"{node.name} <- {arg}" for arg in node.args if arg not in known]
        known.update(node.names)
    missing += [f"return <- {out}" for out in graph.outputs if out not in known]
    for sub in graph.subgraphs.values():
        missing += unresolved(sub)
    return missing


def forget_rank_memos() -> None:
    """What a fresh rank worker knows: nothing of another rank (the per-process memos a worker
    keeps from one rank of a job to the next, issue 22)."""
    from tlscope.analyse.fold import compile_fold
    from tlscope.analyse.ranks import parity
    from tlscope.write import format as format_module
    from tlscope.write import graph_store
    from tlscope.write.report import stacks

    graph_store._KNOWN.clear()
    format_module._IN_JOB.clear()
    compile_fold._SHAPES.clear()
    compile_fold._JSON_ERRORS.clear()
    compile_fold._CACHE_FIELDS.clear()
    stacks._stack_box.cache_clear()
    parity._COUNTED.clear()


def file_tree(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by its relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


#: A glog prefix for the traces tests write (any valid one: tlscope keeps it, nothing reads its time).
TRACE_PREFIX = "V1128 04:30:00.000000 4242 torch/_logging/structured.py:28] "


def write_trace(path: Path, records: list[tuple[dict[str, Any], str | None]]) -> Path:
    """A TORCH_TRACE log of `records` (envelope, payload or None), each payload's MD5 on its
    envelope as torch logs it, its lines tab-indented."""
    lines = []
    for envelope, payload in records:
        if payload is not None:
            envelope = {**envelope, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
        lines.append(TRACE_PREFIX + json.dumps(envelope))
        if payload is not None:
            lines.extend("\t" + line for line in payload.split("\n"))
    path.write_text("\n".join(lines) + "\n")
    return path


def parse_job(source: Path, out: Path) -> tuple[dict[str, Any], str]:
    """`tlscope SOURCE --all-ranks-html -o OUT` as a user runs it: (ranks.json, its stdout)."""
    done = subprocess.run(
        [sys.executable, "-m", "tlscope", str(source), "--all-ranks-html", "-o", str(out), "--no-browser"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads((out / "ranks.json").read_text())
    return found, done.stdout
