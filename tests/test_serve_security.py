"""docs/SECURITY.md "Server", one test per promise: CORS, Host check, token, confinement, no 500.

Hostile paths are sent byte for byte over a socket (an HTTP client would normalise `..` away).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import LiveServer, raw_request

from tlscope.serve.config import ConfigError, normalise_origin
from tlscope.serve.paths import BadPath, confine

ALLOWED = "http://127.0.0.1:9"
SECRET = b"TOP-SECRET-OUTSIDE-THE-TRACE"


@pytest.fixture(scope="module")
def world(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A trace folder (a copy, with symlinks planted in it) and a secret file beside it."""
    import shutil

    tmp = tmp_path_factory.mktemp("serve-sec")
    folder = tmp / "trace"
    shutil.copytree(viewer_traces["single"], folder)
    (tmp / "secret.txt").write_bytes(SECRET)
    os.symlink(tmp / "secret.txt", folder / "link-out.txt")
    os.symlink(tmp, folder / "dir-out")
    os.symlink("payloads", folder / "link-in")  # a symlink that stays inside is fine
    server = LiveServer([str(folder)], tmp, allow_origins=[ALLOWED])
    yield {"server": server, "folder": folder, "tid": server.trace_ids()[0]}
    server.close()


def url(world: dict[str, object]) -> str:
    server = world["server"]
    assert isinstance(server, LiveServer)
    return server.url


HOSTILE = [
    "../secret.txt",
    "..%2fsecret.txt",
    "%2e%2e/secret.txt",
    "%2E%2E%2Fsecret.txt",
    "..%5csecret.txt",
    "..\\secret.txt",
    "%2e%2e%5csecret.txt",
    "payloads/../../secret.txt",
    "payloads/%2e%2e/%2e%2e/secret.txt",
    "./../secret.txt",
    "//etc/passwd",
    "/etc/passwd",
    "%2fetc%2fpasswd",
    "manifest.json%00.txt",
    "link-out.txt",
    "dir-out/secret.txt",
    "....//secret.txt",
    "%252e%252e/secret.txt",
    "payloads/..;/../secret.txt",
    "%c0%ae%c0%ae/secret.txt",
]


@pytest.mark.parametrize("spelling", HOSTILE)
def test_no_path_leaves_the_trace(world: dict[str, object], spelling: str) -> None:
    for prefix in (f"/traces/{world['tid']}/", "/lib/", "/viewers/explorer/"):
        status, body = raw_request(url(world), prefix + spelling)
        assert 400 <= status < 500, (prefix + spelling, status)
        assert SECRET not in body and b"root:" not in body


def test_literal_nul_and_absolute_forms_are_refused(world: dict[str, object]) -> None:
    base = url(world)
    for target in (b"/traces/" + str(world["tid"]).encode() + b"/manifest.json\x00", b"http://evil.example/etc/passwd"):
        status, body = raw_request(base, target)
        assert 400 <= status < 500 and SECRET not in body


def test_symlink_inside_is_served(world: dict[str, object]) -> None:
    folder = world["folder"]
    assert isinstance(folder, Path)
    name = next((folder / "payloads").iterdir()).name
    status, body = raw_request(url(world), f"/traces/{world['tid']}/link-in/{name}")
    assert status == 200 and body == (folder / "payloads" / name).read_bytes()


def test_confine_unit(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    assert confine(tmp_path / "a", "f.txt") == (tmp_path / "a" / "f.txt").resolve()
    for bad in ("../a/f.txt", "/f.txt", "a\\f", "f.txt\x00", "./f.txt", "x//f.txt", "\x1bf"):
        with pytest.raises(BadPath):
            confine(tmp_path / "a", bad)


def test_cors_exact_allowlist(world: dict[str, object]) -> None:
    target = f"{url(world)}/traces/{world['tid']}/manifest.json"
    ok = httpx.get(target, headers={"origin": ALLOWED})
    assert ok.headers["access-control-allow-origin"] == ALLOWED
    assert "Origin" in ok.headers["vary"] and "access-control-allow-credentials" not in ok.headers
    for other in (
        "http://127.0.0.1:10",
        "https://127.0.0.1:9",
        "http://localhost:9",
        "null",
        "http://127.0.0.1:9.evil",
    ):
        r = httpx.get(target, headers={"origin": other})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers, other
        assert "Origin" in r.headers["vary"]
    no_origin = httpx.get(target)
    assert "access-control-allow-origin" not in no_origin.headers and "Origin" in no_origin.headers["vary"]


def test_cors_preflight(world: dict[str, object]) -> None:
    target = f"{url(world)}/api/traces/{world['tid']}/events"
    asks = {"access-control-request-method": "GET", "access-control-request-headers": "range"}
    ok = httpx.options(target, headers={"origin": ALLOWED, **asks})
    assert ok.status_code == 204 and ok.headers["access-control-allow-origin"] == ALLOWED
    assert "GET" in ok.headers["access-control-allow-methods"]
    assert "range" in ok.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in ok.headers
    denied = httpx.options(target, headers={"origin": "http://127.0.0.1:10", **asks})
    assert denied.status_code == 403 and "access-control-allow-origin" not in denied.headers


def test_star_only_when_asked(tmp_path: Path, world: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    from tlscope.serve.config import ServeConfig
    from tlscope.serve.serve_cli import warnings_for

    assert normalise_origin("HTTP://LOCALHOST:80") == "http://localhost"
    for bad in ("http://x/path", "ftp://x", "x", "http://u:p@x"):
        with pytest.raises(ConfigError):
            normalise_origin(bad)
    assert any("any web page" in w for w in warnings_for(ServeConfig(allow_origins=["*"])))
    assert warnings_for(ServeConfig(allow_origins=[ALLOWED])) == []
    server = LiveServer([str(world["folder"])], tmp_path, allow_origins=["*"])
    try:
        r = httpx.get(f"{server.url}/api/traces", headers={"origin": "https://anything.example"})
        assert r.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-credentials" not in r.headers
    finally:
        server.close()


def test_host_header_checked_on_loopback(world: dict[str, object]) -> None:
    base = url(world)
    for host in ("evil.example", "evil.example:80", "127.0.0.1.evil.example"):
        # raw_request sends a loopback Host first: a second Host header must not slip past the check
        status, body = raw_request(base, "/api/traces", method="GET", headers={"Host": host})
        assert status == 400 and b"traces" not in body, host
        r = httpx.get(f"{base}/api/traces", headers={"host": host})
        assert r.status_code == 421 and b"traces" not in r.content, host
    for host in ("127.0.0.1", "localhost", f"localhost:{base.rsplit(':', 1)[1]}", "[::1]:1"):
        assert httpx.get(f"{base}/api/traces", headers={"host": host}).status_code == 200, host


def test_bearer_token(world: dict[str, object], tmp_path: Path) -> None:
    server = LiveServer([str(world["folder"])], tmp_path, token="s3cret", allow_origins=[ALLOWED])
    try:
        base = server.url
        tid = server.trace_ids()[0]
        for path in ("/api/traces", f"/traces/{tid}/manifest.json", "/", "/openapi.json", "/viewers/explorer/"):
            r = httpx.get(base + path)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer"), path
        assert httpx.get(base + "/api/traces", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(base + "/api/traces", headers={"authorization": "Bearer s3cret"}).status_code == 200
        preflight = httpx.options(
            base + "/api/traces", headers={"origin": ALLOWED, "access-control-request-method": "GET"}
        )
        assert preflight.status_code == 204  # preflights carry no credentials
        assert httpx.get(base + "/login?token=nope").status_code == 401
        with httpx.Client(base_url=base) as c:
            login = c.get("/login", params={"token": "s3cret", "next": "//evil.example/"}, follow_redirects=False)
            assert login.status_code == 303 and login.headers["location"] == "/"
            cookie = login.headers["set-cookie"].lower()
            assert "httponly" in cookie and "samesite=strict" in cookie
            assert c.get("/api/traces").status_code == 200  # the cookie now
    finally:
        server.close()


MALFORMED = [
    ("GET", "/api/traces/%ff%fe/events"),
    ("GET", "/api/traces/x/events?offset=1e9999"),
    ("GET", "/api/traces/x/events?limit=%00"),
    ("GET", "/traces/%ff/"),
    ("GET", "/viewers/%00/"),
    ("GET", "/lib/%ff%fe"),
    ("GET", "/lib/" + "a/" * 600),
    ("POST", "/api/traces"),
    ("DELETE", "/api/traces"),
    ("PUT", "/traces/x/manifest.json"),
    ("GET", "/api/traces/x/events?x=" + "%" * 10),
    ("GET", "/login?next=%ff"),
]


@pytest.mark.parametrize(("method", "target"), MALFORMED)
def test_malformed_requests_get_4xx(world: dict[str, object], method: str, target: str) -> None:
    status, _ = raw_request(url(world), target, method=method)
    assert 400 <= status < 500, (method, target, status)


def test_range_and_validator_garbage(world: dict[str, object]) -> None:
    target = f"{url(world)}/traces/{world['tid']}/manifest.json"
    for headers in (
        {"range": "bytes=99999999999999999999999-"},
        {"range": "bytes=-"},
        {"range": "items=0-1"},
        {"range": "bytes=0-1,5-6"},
        {"if-none-match": "\x7f\x7f"},
        {"if-range": "garbage", "range": "bytes=0-1"},
        {"accept-encoding": "gzip;q=abc"},
    ):
        assert httpx.get(target, headers=headers).status_code in (200, 206, 400, 416), headers
