"""Remote stores behind `tlscope serve` (docs/SERVER.md, "Stores"), each a real process on loopback.

- an S3-compatible store: moto's server mode, reached through s3fs with `endpoint_url`;
- an https-style file host: tests/filehost.py (the standard library's file server, no CORS headers).

Shown: output folders streamed through byte for byte with the store's validators, 304, 206 and
gzip; the events API over a remote folder; a raw log in a store parsed once into the cache; only
URLs under a configured store fetched; the SSRF policy on the address connected to (loopback
refused unless listed, a redirect re-checked); the largest object size.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import (
    CORPUS,
    S3_CREDS,
    LiveServer,
    check_remote_log_parsed_once,
    loopback_host,
    moto_s3,
)
from helpers import add_trace as add

from tlscope.serve.traces import local_summary

pytest.importorskip("boto3", reason="the S3 tests need moto[server] (the test extra)")
pytest.importorskip("s3fs", reason="the S3 tests need tlscope[remote] (the test extra)")

HERE = Path(__file__).resolve().parent
BUCKET = "team-traces"
RAW_LOG = next((CORPUS / "graph_breaks").glob("*.log*"))


@pytest.fixture(scope="module")
def moto(viewer_traces: dict[str, Path]) -> Iterator[str]:
    """moto's S3 server in its own process, with the single and multi-rank folders and a raw log."""
    with moto_s3(BUCKET) as (endpoint, s3):
        for name, folder in viewer_traces.items():
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                s3.upload_file(str(path), BUCKET, f"runs/{name}/{path.relative_to(folder).as_posix()}")
            for path in sorted(p for p in folder.rglob("*") if p.is_file() and name == "single"):
                s3.upload_file(str(path), BUCKET, f"small/{name}/{path.relative_to(folder).as_posix()}")
        s3.upload_file(str(RAW_LOG), BUCKET, f"logs/{RAW_LOG.name}")
        s3.upload_file(str(RAW_LOG), BUCKET, f"small/{RAW_LOG.name}")
        yield endpoint


@pytest.fixture(scope="module")
def filehost(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """tests/filehost.py serving the single folder and the raw log; yields its base URL."""
    root = tmp_path_factory.mktemp("filehost")
    shutil.copytree(viewer_traces["single"], root / "single")
    shutil.copy(RAW_LOG, root / RAW_LOG.name)
    shutil.copytree(viewer_traces["single"], root / "tiny" / "single")  # the "tiny" store's
    shutil.copy(RAW_LOG, root / "tiny" / RAW_LOG.name)
    with loopback_host(HERE / "filehost.py", str(root)) as url:
        yield url


@pytest.fixture(scope="module")
def env_creds() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for key, value in S3_CREDS.items():
            mp.setenv(key, value)
        yield


@pytest.fixture(scope="module")
def live(moto: str, filehost: str, env_creds: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    port = filehost.rsplit(":", 1)[1]
    stores = {
        "runs": {"url": f"s3://{BUCKET}/runs/", "endpoint_url": moto},
        "logs": {"url": f"s3://{BUCKET}/logs/", "endpoint_url": moto},
        "small": {"url": f"s3://{BUCKET}/small/", "endpoint_url": moto, "max_object_bytes": 100},
        "files": {"url": f"{filehost}/", "allow_networks": ["127.0.0.1/32"]},
        # The same host by name, loopback not allowed: what an https store gets by default.
        "strict": {"url": f"http://localhost:{port}/"},
        "stalls": {"url": f"{filehost}/stall/", "allow_networks": ["127.0.0.1/32"], "timeout": 1.0},
        "slowbody": {"url": f"{filehost}/slowbody/", "allow_networks": ["127.0.0.1/32"], "timeout": 1.0},
        "tiny": {"url": f"{filehost}/tiny/", "allow_networks": ["127.0.0.1/32"], "max_object_bytes": 100},
        # s3fs against an S3 endpoint that answers nothing for 5 s (moto itself cannot be slowed):
        # the file host's stall path, which botocore reaches as http://127.0.0.1:PORT/stall/BUCKET/KEY.
        "s3stalls": {"url": "s3://stalled-bucket/runs/", "endpoint_url": f"{filehost}/stall", "timeout": 1.0},
    }
    server = LiveServer([], tmp_path_factory.mktemp("remote"), stores=_store_configs(stores))
    yield server
    server.close()


def _store_configs(raw: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from tlscope.serve.config import StoreConfig

    return {name: StoreConfig(**options) for name, options in raw.items()}


def raw_events(folder: Path) -> list[bytes]:
    parts = sorted(folder.glob("rank_*/raw.jsonl"), key=lambda p: int(p.parent.name[5:])) or [folder / "raw.jsonl"]
    return [line for p in parts for line in p.read_bytes().splitlines()[1:] if line]


@pytest.mark.parametrize("name", ["single", "multi"])
def test_s3_folder_streamed_through(client: httpx.Client, viewer_traces: dict[str, Path], name: str) -> None:
    folder = viewer_traces[name]
    trace = add(client, f"s3://{BUCKET}/runs/{name}/")
    assert trace["kind"] == "remote-folder" and trace["url"] == f"/traces/{trace['id']}/"
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".txt", ".html")]
    for path in sorted(files)[:40]:
        rel = path.relative_to(folder).as_posix()
        r = client.get(trace["url"] + rel, headers={"accept-encoding": "identity"})
        assert r.status_code == 200 and r.content == path.read_bytes(), rel
    listed = client.get(f"/api/traces/{trace['id']}").json()
    assert listed["summary"]["events"] == len(raw_events(folder))
    # The store's folder is read by the format's reader as the local one is: the same ranks, the same line.
    assert listed["summary"] == local_summary(folder)
    events = client.get(f"/api/traces/{trace['id']}/events", params={"limit": 1}).json()
    assert events["total"] == len(raw_events(folder))


def test_s3_validators_ranges_gzip(client: httpx.Client, live: LiveServer, viewer_traces: dict[str, Path]) -> None:
    with live.compressing():
        _s3_validators_ranges_gzip(client, viewer_traces)


def _s3_validators_ranges_gzip(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    trace = add(client, f"s3://{BUCKET}/runs/single/")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    url = trace["url"] + "raw.jsonl"
    whole = client.get(url, headers={"accept-encoding": "identity"})
    tag = whole.headers["etag"]
    assert whole.content == raw and tag.startswith('"') and not tag.startswith("W/")
    assert client.get(url, headers={"if-none-match": tag}).status_code == 304
    part = client.get(url, headers={"range": "bytes=10-99", "accept-encoding": "gzip"})
    assert part.status_code == 206 and part.content == raw[10:100]
    assert part.headers["content-range"] == f"bytes 10-99/{len(raw)}" and "content-encoding" not in part.headers
    assert client.get(url, headers={"range": f"bytes={len(raw) + 5}-"}).status_code == 416
    with httpx.stream("GET", client.base_url.join(url), headers={"accept-encoding": "gzip"}) as r:
        assert r.headers["content-encoding"] == "gzip"
        assert gzip.decompress(b"".join(r.iter_raw())) == raw
    payload = next((viewer_traces["single"] / "payloads").glob("*.txt"))
    r = client.get(f"{trace['url']}payloads/{payload.name}", headers={"accept-encoding": "identity"})
    assert r.content == payload.read_bytes() and "immutable" in r.headers["cache-control"]


def test_s3_raw_log_parsed_once(client: httpx.Client, live: LiveServer) -> None:
    check_remote_log_parsed_once(client, live, f"s3://{BUCKET}/logs/{RAW_LOG.name}", RAW_LOG)


def test_file_host_folder_and_raw_log(client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]) -> None:
    trace = add(client, f"{filehost}/single/")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    r = client.get(trace["url"] + "raw.jsonl", headers={"accept-encoding": "identity"})
    assert r.status_code == 200 and r.content == raw and r.headers["etag"]
    part = client.get(trace["url"] + "raw.jsonl", headers={"range": "bytes=-50"})
    assert part.status_code == 206 and part.content == raw[-50:]
    log = add(client, f"{filehost}/{RAW_LOG.name}")
    assert client.get(log["url"] + "manifest.json").status_code == 200


def test_file_host_ranges_are_asked_for_not_skipped_to(
    client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]
) -> None:
    """A Range request through an https store sends the range upstream (the host honours it under
    /ranged/): the server neither downloads the bytes before it nor sends more than was asked."""
    trace = add(client, f"{filehost}/ranged/single/")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    size = len(raw)
    asked = {
        "bytes=100-199": raw[100:200],
        "bytes=-50": raw[-50:],
        f"bytes={size - 70}-": raw[-70:],
        "bytes=0-9": raw[:10],
    }
    for spec, want in asked.items():
        part = client.get(trace["url"] + "raw.jsonl", headers={"range": spec})
        assert (part.status_code, part.content) == (206, want), spec
    whole = client.get(trace["url"] + "raw.jsonl", headers={"accept-encoding": "identity"})
    assert whole.content == raw
    sent = httpx.get(f"{filehost}/ranges").json()
    # The client's range as it asked it: the one GET that answers it also tells the size.
    upstream = ["bytes=100-199", "bytes=-50", f"bytes={size - 70}-", "bytes=0-9", None]
    assert sent[-5:] == upstream


def test_only_configured_stores_are_fetched(client: httpx.Client, filehost: str, moto: str) -> None:
    for url in (
        "http://127.0.0.1:1/x/",
        f"{filehost}:80/single/",
        f"{filehost}/single/?x=1",
        f"{moto}/{BUCKET}/runs/single/",  # the S3 endpoint as a plain URL: in no store
        "s3://other-bucket/runs/single/",
        f"s3://{BUCKET}/runs/../logs/",
        f"{filehost}/single/%2e%2e/",
        f"{filehost}/single/%252e%252e/",
        "file:///etc/passwd",
    ):
        r = client.post("/api/traces", json={"url": url})
        assert r.status_code == 403, (url, r.status_code, r.text)
    for body in (b"{", b'{"url": 1}', b'{"url": "s3://x/", "more": 1}', b"x" * 20000):
        assert client.post("/api/traces", content=body).status_code in (400, 413)


def test_ssrf_loopback_refused_unless_listed(client: httpx.Client, filehost: str) -> None:
    allowed = add(client, f"{filehost}/single/")  # "files" lists 127.0.0.1/32
    assert client.get(allowed["url"] + "manifest.json").status_code == 200
    port = filehost.rsplit(":", 1)[1]
    refused = add(client, f"http://localhost:{port}/single/")  # "strict": the same host, not listed
    r = client.get(refused["url"] + "manifest.json")
    assert r.status_code == 403 and "not allowed" in r.text, r.text
    assert client.get(f"/api/traces/{refused['id']}/events").status_code == 403


def test_ssrf_redirects_are_checked_again(client: httpx.Client, filehost: str) -> None:
    """The file host redirects /to/HOST/PORT/PATH: followed to itself, refused anywhere else."""
    port = filehost.rsplit(":", 1)[1]
    same = add(client, f"{filehost}/to/127.0.0.1/{port}/single/")
    assert client.get(same["url"] + "manifest.json").status_code == 200
    for host, to_port in (("127.0.0.2", port), ("169.254.169.254", "80"), ("10.0.0.1", "80"), ("0.0.0.0", port)):
        trace = add(client, f"{filehost}/to/{host}/{to_port}/single/")
        r = client.get(trace["url"] + "manifest.json")
        assert r.status_code == 403 and "not allowed" in r.text, (host, r.status_code, r.text)


@pytest.mark.parametrize("store", ["s3", "file host"])
def test_store_max_object_bytes(client: httpx.Client, filehost: str, store: str) -> None:
    """Objects over a store's max_object_bytes (100) get 413: a folder's file, and a raw log to parse."""
    base = f"s3://{BUCKET}/small/" if store == "s3" else f"{filehost}/tiny/"
    trace = add(client, f"{base}single/")
    r = client.get(trace["url"] + "raw.jsonl")
    assert r.status_code == 413 and "max_object_bytes" in r.text
    assert client.get(trace["url"] + "raw.jsonl", headers={"range": "bytes=0-9"}).status_code == 413
    log = add(client, base + RAW_LOG.name)
    r = client.get(log["url"] + "manifest.json")
    assert r.status_code == 413 and "max_object_bytes" in r.text, r.text


@pytest.mark.parametrize("store", ["s3", "file host"])
def test_a_store_that_hangs_times_out(client: httpx.Client, filehost: str, store: str) -> None:
    """A store that does not answer within its `timeout` (1 s) gets 504, for a file and for a raw log."""
    # The "stalls" store (its longer prefix wins over "files"), or s3fs against a stalling endpoint.
    base = f"{filehost}/stall/" if store == "file host" else "s3://stalled-bucket/runs/"
    for url in (base + "single/", base + RAW_LOG.name):
        trace = add(client, url)
        r = client.get(trace["url"] + "manifest.json")
        assert r.status_code == 504 and "no answer within 1 s" in r.text, (url, r.text)


def test_a_store_that_stalls_mid_body_is_cut_off(
    client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]
) -> None:
    """The store's timeout also bounds each read of a body already flowing: the host sends half of
    raw.jsonl and then nothing for a minute; the server gives up after its 1 s and closes the
    response, so the client sees a cut-off body, not its own read timeout (30 s)."""
    trace = add(client, f"{filehost}/slowbody/single/")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    got = bytearray()
    with pytest.raises(httpx.RemoteProtocolError):  # peer closed before Content-Length was reached
        headers = {"accept-encoding": "identity"}
        with client.stream("GET", trace["url"] + "raw.jsonl", headers=headers, timeout=30) as r:
            assert r.status_code == 200
            for chunk in r.iter_raw():
                got += chunk
    assert raw.startswith(bytes(got)) and len(got) < len(raw)


def test_store_listing_shows_no_secrets(client: httpx.Client, moto: str) -> None:
    stores = client.get("/api/stores").json()
    names = {"runs", "logs", "small", "files", "strict", "stalls", "slowbody", "tiny", "s3stalls"}
    assert {s["name"] for s in stores} == names
    assert moto not in json.dumps(stores)  # endpoints and options stay on the server
