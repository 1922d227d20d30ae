"""`tlscope serve`'s HTTP surface (docs/SERVER.md), in-process on port 0, driven by httpx, on real traces.

Trace files byte for byte with their validators (ETag, 304, 206, 416, gzip), the events API
against raw.jsonl for every filter (single and multi-rank), a raw log parsed on first use, the
JS client and viewers with the viewer CSP, and the OpenAPI document against the real routes.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import CORPUS, LiveServer, key_of

from tlscope.serve.app import ROUTES
from tlscope.serve.security import VIEWER_CSP
from tlscope.viewers import LIB

RAW_LOG = CORPUS / "graph_breaks"


@pytest.fixture(scope="module")
def live(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("serve-api")
    sources = [str(viewer_traces["single"]), str(viewer_traces["multi"]), str(RAW_LOG)]
    server = LiveServer(sources, tmp)
    yield server
    server.close()


def trace_by_source(client: httpx.Client, source: Path) -> dict[str, Any]:
    from tlscope.serve.traces import make_id

    where = source.resolve()
    listed = client.get("/api/traces").json()
    return next(t for t in listed if t["id"] == make_id(where.name, str(where)))


def raw_lines(folder: Path) -> list[bytes]:
    """Event lines of raw.jsonl (every rank in rank order), without the string-table line."""
    parts = sorted(folder.glob("rank_*/raw.jsonl"), key=lambda p: int(p.parent.name[5:])) or [folder / "raw.jsonl"]
    return [line for p in parts for line in p.read_bytes().splitlines()[1:] if line]


def events_raw(client: httpx.Client, tid: str, **params: Any) -> tuple[int, list[bytes]]:
    """(total, the events' lines), paging through every page; each page's body must be exactly
    `{"total":N,"offset":K,"events":[` + the events' raw.jsonl lines joined by ',' + `]}`."""
    out: list[bytes] = []
    offset, total = 0, None
    while total is None or offset < total:
        r = client.get(f"/api/traces/{tid}/events", params={**params, "offset": offset, "limit": 97})
        assert r.status_code == 200, r.text
        body = json.loads(r.content)
        total = body["total"]
        assert body["offset"] == offset
        head = b'{"total":%d,"offset":%d,"events":[' % (total, offset)
        assert r.content.startswith(head) and r.content.endswith(b"]}")
        lines = _split_events(r.content[len(head) : -2], len(body["events"]))
        out.extend(lines)
        if not body["events"]:
            break
        offset += len(body["events"])
    return total or 0, out


def _split_events(inner: bytes, n: int) -> list[bytes]:
    """The n JSON objects of `inner` (joined by ','), as bytes, cut where each one parses whole."""
    out, decoder, at = [], json.JSONDecoder(), 0
    text = inner.decode()
    for _ in range(n):
        _, end = decoder.raw_decode(text, at)
        out.append(text[at:end].encode())
        at = end + 1
    assert at - 1 == len(text) or n == 0
    return out


def test_listing_has_the_contract_fields(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    t = trace_by_source(client, viewer_traces["single"])
    assert t["url"] == f"/traces/{t['id']}/"
    # The name, never the absolute path on the server's machine (any allowed origin reads this).
    assert t["source"] == viewer_traces["single"].name
    assert str(viewer_traces["single"].resolve().parent) not in client.get("/api/traces").text
    assert t["viewer_url"] == f"/viewers/explorer/?trace=%2Ftraces%2F{t['id']}%2F"
    manifest = json.loads((viewer_traces["single"] / "manifest.json").read_text())
    s = t["summary"]
    assert s["torch_version"] == manifest["torch_version"]
    assert s["events"] == manifest["raw_jsonl_events"] == len(raw_lines(viewer_traces["single"]))
    assert s["compile_ids"] == len(manifest["compile_ids"])
    assert s["problems"] == manifest["problems"]["total"]
    multi = trace_by_source(client, viewer_traces["multi"])
    assert multi["summary"]["ranks"] == [0, 1]
    assert multi["summary"]["events"] == len(raw_lines(viewer_traces["multi"]))


@pytest.mark.parametrize("name", ["single", "multi"])
def test_files_are_byte_exact(client: httpx.Client, viewer_traces: dict[str, Path], name: str) -> None:
    folder = viewer_traces[name]
    base = trace_by_source(client, folder)["url"]
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert len(files) > 20
    for path in files:
        rel = path.relative_to(folder).as_posix()
        r = client.get(base + rel, headers={"accept-encoding": "identity"})
        assert r.status_code == 200, rel
        assert r.content == path.read_bytes(), rel
        assert r.headers["etag"].startswith('"') and not r.headers["etag"].startswith("W/")


def test_a_jobs_combined_chromium_events_are_made_from_its_ranks(
    client: httpx.Client, viewer_traces: dict[str, Path]
) -> None:
    """tlscope does not store a job's combined chromium_events.json (DEVIATIONS.md); serve sends
    tlparse's text of it, made from the ranks' files: every rank's events, pid = rank."""
    folder = viewer_traces["multi"]
    assert not (folder / "chromium_events.json").exists()
    url = trace_by_source(client, folder)["url"] + "chromium_events.json"
    r = client.get(url, headers={"accept-encoding": "identity"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    combined = json.loads(r.content)
    for rank in (0, 1):
        own = json.loads((folder / f"rank_{rank}" / "chromium_events.json").read_bytes())
        assert own and [e for e in combined if e["pid"] == rank] == [{**e, "pid": rank} for e in own]
    assert len(combined) == sum(len(json.loads(p.read_bytes())) for p in folder.glob("rank_*/chromium_events.json"))
    assert client.head(url).status_code == 200


def test_validators_ranges_gzip(client: httpx.Client, live: LiveServer, viewer_traces: dict[str, Path]) -> None:
    with live.compressing():
        _validators_ranges_gzip(client, viewer_traces)


def _validators_ranges_gzip(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["single"]
    url = trace_by_source(client, folder)["url"] + "raw.jsonl"
    data = (folder / "raw.jsonl").read_bytes()
    r = client.get(url, headers={"accept-encoding": "identity"})
    assert r.headers["content-type"].startswith("application/x-ndjson")
    tag = r.headers["etag"]
    assert client.get(url, headers={"if-none-match": tag, "accept-encoding": "identity"}).status_code == 304
    assert client.get(url, headers={"if-none-match": f'"other", W/{tag}'}).status_code == 304
    part = client.get(url, headers={"range": "bytes=10-99", "accept-encoding": "gzip"})
    assert part.status_code == 206 and part.content == data[10:100]
    assert part.headers["content-range"] == f"bytes 10-99/{len(data)}"
    assert "content-encoding" not in part.headers
    assert client.get(url, headers={"range": "bytes=-5"}).content == data[-5:]
    assert client.get(url, headers={"range": f"bytes={len(data) - 3}-"}).content == data[-3:]
    bad = client.get(url, headers={"range": f"bytes={len(data)}-"})
    assert bad.status_code == 416 and bad.headers["content-range"] == f"bytes */{len(data)}"
    assert client.get(url, headers={"range": "bytes=5-1"}).status_code == 200  # invalid: ignored
    assert client.get(url, headers={"range": "bytes=0-1", "if-range": '"stale"'}).status_code == 200
    zipped = client.send(client.build_request("GET", url, headers={"accept-encoding": "gzip"}), stream=True)
    raw = b"".join(zipped.iter_raw())
    assert zipped.headers["content-encoding"] == "gzip" and gzip.decompress(raw) == data
    assert zipped.headers["etag"] != tag
    assert client.get(url, headers={"if-none-match": zipped.headers["etag"]}).status_code == 304
    head = client.head(url, headers={"accept-encoding": "identity"})
    assert head.status_code == 200 and head.headers["content-length"] == str(len(data)) and not head.content
    # timeline.bin is binary but packs well: gzip too (the Ranks view's largest read).
    timeline = trace_by_source(client, folder)["url"] + "timeline.bin"
    zipped = client.send(client.build_request("GET", timeline, headers={"accept-encoding": "gzip"}), stream=True)
    raw = b"".join(zipped.iter_raw())
    assert zipped.headers["content-encoding"] == "gzip"
    assert gzip.decompress(raw) == (folder / "timeline.bin").read_bytes()
    assert zipped.headers["content-type"] == "application/octet-stream"


def test_payloads_are_immutable_and_content_addressed(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["single"]
    payload = next((folder / "payloads").iterdir())
    r = client.get(trace_by_source(client, folder)["url"] + "payloads/" + payload.name)
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["etag"] in (f'"{payload.stem}"', f'"{payload.stem}-gz"')
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    manifest = client.get(trace_by_source(client, folder)["url"] + "manifest.json")
    assert manifest.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize("name", ["single", "multi"])
def test_events_api_agrees_with_raw_jsonl(client: httpx.Client, viewer_traces: dict[str, Path], name: str) -> None:
    folder = viewer_traces[name]
    tid = trace_by_source(client, folder)["id"]
    lines = raw_lines(folder)
    events = [json.loads(line) for line in lines]
    total, got = events_raw(client, tid)
    assert total == len(lines) and got == lines
    for kind in Counter(key_of(e) for e in events):
        want = [line for line, e in zip(lines, events, strict=True) if key_of(e) == kind]
        assert events_raw(client, tid, kind=kind) == (len(want), want)
    if name == "multi":  # an event's rank is its `rank` field, else its rank folder's (as in the JS client)
        for rank in (0, 1):
            mine = set(raw_lines(folder / f"rank_{rank}"))
            want = [ln for ln in lines if json.loads(ln).get("rank", rank if ln in mine else None) == rank]
            assert events_raw(client, tid, rank=rank) == (len(want), want)
    want = [line for line in lines if b"dynamo" in line.lower()]
    assert events_raw(client, tid, q="DYNAMO") == (len(want), want)
    cid = '"frame_id":0,'
    assert events_raw(client, tid, compile_id="[0/0]", q=cid)[0] > 0


def test_events_api_compile_id_and_bad_queries(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    folder = viewer_traces["single"]
    tid = trace_by_source(client, folder)["id"]
    lines = raw_lines(folder)
    zero = [ln for ln in lines if (e := json.loads(ln)).get("frame_id") == 0 and e.get("frame_compile_id") == 0]
    zero = [
        ln for ln in zero if json.loads(ln).get("attempt") in (None, 0) and "compiled_autograd_id" not in json.loads(ln)
    ]
    assert events_raw(client, tid, compile_id="[0/0]") == (len(zero), zero)
    assert events_raw(client, tid, compile_id="[9/9]") == (0, [])
    base = f"/api/traces/{tid}/events"
    for params in (
        {"offset": "-1"},
        {"limit": "x"},
        {"limit": "100000"},
        {"rank": "1.5"},
        {"q": "x" * 1000},
        {"z": "1"},
    ):
        r = client.get(base, params=params)
        assert r.status_code == 400 and "error" in r.json(), params
    assert client.get("/api/traces/nope/events").status_code == 404
    page = client.get(base, params={"offset": len(lines) + 5}).json()
    assert page == {"total": len(lines), "offset": len(lines) + 5, "events": []}


def test_raw_log_is_parsed_on_first_use(client: httpx.Client, live: LiveServer) -> None:
    t = trace_by_source(client, RAW_LOG)
    assert t["kind"] == "log"
    manifest = client.get(t["url"] + "manifest.json")
    assert manifest.status_code == 200
    folder = live.server.traces.by_id[t["id"]].local
    assert folder is not None and folder.parent == Path(live.config.cache_dir or "")
    assert manifest.content == (folder / "manifest.json").read_bytes()
    after = client.get(f"/api/traces/{t['id']}").json()
    assert after["state"] == "ready" and after["summary"]["events"] == len(raw_lines(folder))
    _, got = events_raw(client, t["id"])
    assert got == raw_lines(folder)
    landing = client.get(t["url"])
    assert landing.status_code == 200 and landing.content == (folder / "index.html").read_bytes()
    assert "content-security-policy" in landing.headers


def test_lib_viewers_and_csp(client: httpx.Client) -> None:
    r = client.get("/lib/tlscope.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert (
        r.content == (LIB / "tlscope.js").read_bytes()
        or gzip.decompress(r.content) == (LIB / "tlscope.js").read_bytes()
    )
    page = client.get("/viewers/explorer/")
    assert page.status_code == 200 and b"tlscope explorer" in page.content
    assert page.headers["content-security-policy"] == VIEWER_CSP
    for directive in ("default-src 'self'", "connect-src 'self'", "script-src 'self'", "object-src 'none'",
                      "base-uri 'none'", "frame-ancestors 'none'"):  # fmt: skip
        assert directive in VIEWER_CSP
    assert client.get("/viewers/explorer/app.js").headers["content-security-policy"] == VIEWER_CSP
    assert client.get("/viewers/explorer", follow_redirects=False).status_code == 308
    assert client.get("/viewers/nope/").status_code == 404
    viewers = client.get("/api/viewers").json()
    assert {"name": "explorer", "url": "/viewers/explorer/", "source": "built-in", "default": True} in viewers


def test_viewer_from_path_and_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "my-view"
    (mine / "dist").mkdir(parents=True)
    (mine / "dist" / "index.html").write_text("<!doctype html><title>mine</title>")
    # A Vite project's own index.html is its dev entry: the built dist/ must win over it.
    (mine / "index.html").write_text('<!doctype html><script type="module" src="/src/main.tsx"></script>')
    pkg = tmp_path / "site"
    (pkg / "tlscope_viewer_ep").mkdir(parents=True)
    (pkg / "tlscope_viewer_ep" / "index.html").write_text("<!doctype html><title>ep</title>")
    (pkg / "tlscope_viewer_ep" / "__init__.py").write_text(
        "from pathlib import Path\ndef folder():\n    return Path(__file__).parent\n"
    )
    dist = pkg / "tlscope_viewer_ep-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tlscope-viewer-ep\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[tlscope.viewers]\nep-view = tlscope_viewer_ep:folder\nbroken = nowhere:x\n"
    )
    monkeypatch.syspath_prepend(str(pkg))
    trace = next((CORPUS / "simple").glob("*.gz"))
    server = LiveServer([str(trace)], tmp_path, viewers=[str(mine)])
    try:
        with httpx.Client(base_url=server.url) as c:
            # A viewer given with --viewer is what each trace's viewer_url opens.
            listed = c.get("/api/traces").json()
            assert listed[0]["viewer_url"] == f"/viewers/my-view/?trace=%2Ftraces%2F{listed[0]['id']}%2F"
            names = {v["name"]: v for v in c.get("/api/viewers").json()}
            assert names["my-view"]["source"] == "path" and names["ep-view"]["source"] == "package tlscope-viewer-ep"
            assert "broken" not in names
            assert b"<title>mine</title>" in c.get("/viewers/my-view/").content
            ep = c.get("/viewers/ep-view/index.html")
            assert b"<title>ep</title>" in ep.content and ep.headers["content-security-policy"] == VIEWER_CSP
    finally:
        server.close()


def test_home_page_and_openapi_match_routes(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    home = client.get("/")
    assert home.status_code == 200 and trace_by_source(client, viewer_traces["single"])["id"].encode() in home.content
    assert "script-src" not in home.headers["content-security-policy"]  # default-src 'none': no script
    # Each trace's report is called so, not "files" (issue 20, finding 7).
    url = trace_by_source(client, viewer_traces["single"])["url"]
    assert f'<a href="{url}" title="index.html: the report' in home.text and ">report</a>" in home.text
    assert ">files</a>" not in home.text
    doc = client.get("/openapi.json").json()
    documented = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    served = set()
    for route in ROUTES:
        for method in route.methods or ():
            if method != "HEAD":
                served.add((route.path.replace("{path:path}", "{path}"), method))
    assert documented == served
    for path, ops in doc["paths"].items():
        for op in ops.values():
            names = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert names == {seg[1:-1] for seg in path.split("/") if seg.startswith("{")}, path


def test_post_trace_only_from_stores(client: httpx.Client) -> None:
    r = client.post("/api/traces", json={"url": "https://example.com/trace/"})
    assert r.status_code == 403 and "no configured store" in r.json()["error"]
    assert client.post("/api/traces", content=b"{not json").status_code == 400
    assert client.post("/api/traces", json={"url": "x", "extra": 1}).status_code == 400
    assert client.post("/api/traces", content=b"x" * 100_000).status_code == 413
    assert client.get("/api/stores").json() == []


def test_connections_get_tcp_nodelay() -> None:
    """asyncio sets TCP_NODELAY only when the socket's proto says TCP; without it, Nagle held each
    body back for the client's delayed ACK (40 ms a request on a keep-alive connection)."""
    import asyncio
    import socket

    from tlscope.serve.server import bind

    sock = bind("127.0.0.1", 0)
    seen: list[int] = []

    async def main() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(main())
    assert seen == [1]


def test_events_index_is_built_once(
    viewer_traces: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrent first requests share one build; later pages and filters reuse it (no rescan)."""
    import threading

    import tlscope.serve.traces as traces_module

    builds: list[int] = []

    class Counted(traces_module.EventIndex):  # type: ignore[misc,name-defined]
        def __init__(self, parts: Any) -> None:
            builds.append(len(parts))
            super().__init__(parts)

    monkeypatch.setattr(traces_module, "EventIndex", Counted)
    folder = viewer_traces["multi"]
    server = LiveServer([str(folder)], tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            tid = trace_by_source(client, folder)["id"]
            base = f"{server.url}/api/traces/{tid}/events"
            totals: list[int] = []
            threads = [
                threading.Thread(target=lambda: totals.append(httpx.get(base).json()["total"])) for _ in range(4)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            lines = raw_lines(folder)
            assert totals == [len(lines)] * 4
            index = server.server.traces.by_id[tid].index
            for params in ({"offset": 5, "limit": 3}, {"kind": "dynamo_start"}, {"rank": 1}, {"q": "inductor"}):
                assert client.get(f"/api/traces/{tid}/events", params=params).status_code == 200
            assert events_raw(client, tid) == (len(lines), lines)
            assert server.server.traces.by_id[tid].index is index
        assert builds == [2]  # one build, over both ranks' raw.jsonl
    finally:
        server.close()


def test_the_stack_is_starlette_and_uvicorn(tmp_path: Path) -> None:
    """Issue 11's stack point: an established ASGI stack; no hand-written HTTP, no http.server in the package."""
    import ast

    import uvicorn
    from starlette.applications import Starlette

    import tlscope
    from tlscope.serve.app import create_app
    from tlscope.serve.config import ServeConfig, check
    from tlscope.serve.server import build, uvicorn_config

    banned = {"http.server", "socketserver", "wsgiref", "wsgiref.simple_server"}
    for path in Path(tlscope.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            assert not banned & set(names), (path, names)
    app = create_app(build(check(ServeConfig(cache_dir=str(tmp_path))), []))
    assert isinstance(app, Starlette) and isinstance(uvicorn_config(app), uvicorn.Config)


def test_compress_policy(live: LiveServer, viewer_traces: dict[str, Path]) -> None:
    """Config `compress`: "auto" (the default) gzips for clients elsewhere, never for one on this
    machine (loopback bytes are free, gzip as it sends costs a core); "always" and "never" mean it."""
    from tlscope.serve.app import create_app

    url = live.trace_url(viewer_traces["single"]) + "raw.jsonl"
    size = (viewer_traces["single"] / "raw.jsonl").stat().st_size

    async def encodings(peer: str) -> list[str | None]:
        # The app in-process with a chosen peer address (httpx's ASGI transport sets the client).
        transport = httpx.ASGITransport(app=create_app(live.server), client=(peer, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            out = []
            for path in (url, "/lib/trace.js", "/viewers/explorer/app.js"):
                r = await c.get(path, headers={"accept-encoding": "gzip"})
                assert r.status_code == 200
                out.append(r.headers.get("content-encoding"))
            return out

    assert live.server.config.compress == "auto"
    assert asyncio.run(encodings("10.1.2.3")) == ["gzip"] * 3
    assert asyncio.run(encodings("2001:db8::7")) == ["gzip"] * 3
    for loopback in ("127.0.0.1", "127.3.4.5", "::1"):
        assert asyncio.run(encodings(loopback)) == [None] * 3
    with httpx.Client(base_url=live.url) as c:  # a real loopback connection
        r = c.get(url, headers={"accept-encoding": "gzip"})
        assert "content-encoding" not in r.headers and r.headers["content-length"] == str(size)
    with live.compressing("never"):
        assert asyncio.run(encodings("10.1.2.3")) == [None] * 3
    with live.compressing("always"):
        assert asyncio.run(encodings("127.0.0.1")) == ["gzip"] * 3


def test_compress_flag_and_config(tmp_path: Path) -> None:
    from tlscope.serve.config import ConfigError, load
    from tlscope.serve.serve_cli import add_server_flags, config_from

    parser = argparse.ArgumentParser()
    add_server_flags(parser)
    assert config_from(parser.parse_args([])).compress == "auto"
    assert config_from(parser.parse_args(["--compress", "never"])).compress == "never"
    file = tmp_path / "serve.toml"
    file.write_text('compress = "always"\n')
    assert config_from(parser.parse_args(["--config", str(file)])).compress == "always"
    assert config_from(parser.parse_args(["--config", str(file), "--compress", "auto"])).compress == "auto"
    file.write_text('compress = "sometimes"\n')
    with pytest.raises(ConfigError, match="compress"):
        load(file)
    with pytest.raises(SystemExit):
        parser.parse_args(["--compress", "sometimes"])
