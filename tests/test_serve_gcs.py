"""gs:// stores behind `tlscope serve`: gcsfs against a real GCS emulator process on loopback.

The emulator is gcp-storage-emulator (pure Python, from PyPI, in the `test` extra), run as its own
process on 127.0.0.1; the store points gcsfs at it with `endpoint_url` and reads anonymously (no
credentials, no metadata-server lookup). Objects are put with the emulator's JSON upload API.

Shown: a remote output folder listed (summary and events API) and its files byte-exact with the
store's ETag, 304, 206 and gzip; a raw log in the bucket parsed on first use, once, keyed by its
bytes; 404 for what the bucket lacks; 403 for a URL outside the store; what a file costs the
bucket, counted by tests/countproxy.py in front of the emulator.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import (
    CORPUS,
    LiveServer,
    add_trace,
    check_remote_log_parsed_once,
    free_port,
    loopback_host,
    raw_request,
    stop_process,
    wait_listening,
)

pytest.importorskip("gcsfs", reason="gs:// stores need gcsfs (tlscope[gcs], in the test extra)")
pytest.importorskip("gcp_storage_emulator", reason="the GCS tests need gcp-storage-emulator (the test extra)")

BUCKET = "team-traces"
RAW_LOG = next((CORPUS / "graph_breaks").glob("*.log*"))


def put(endpoint: str, name: str, data: bytes) -> None:
    url = f"{endpoint}/upload/storage/v1/b/{BUCKET}/o"
    r = httpx.post(url, params={"uploadType": "media", "name": name}, content=data, timeout=30)
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def emulator(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The emulator in its own process, holding the single and multi-rank folders and a raw log."""
    port = free_port()
    cmd = [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1", "--port", str(port),
           "--in-memory", "--default-bucket", BUCKET, "--quiet"]  # fmt: skip
    cwd = tmp_path_factory.mktemp("gcs-emulator")  # where it would write, were it not in memory
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        endpoint = f"http://127.0.0.1:{port}"
        for name, folder in viewer_traces.items():
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                put(endpoint, f"runs/{name}/{path.relative_to(folder).as_posix()}", path.read_bytes())
        put(endpoint, f"logs/{RAW_LOG.name}", RAW_LOG.read_bytes())
        put(endpoint, "runs/empty/readme.txt", b"no manifest here")
        put(endpoint, "private/secret.txt", b"SECRET")
        yield endpoint
    finally:
        stop_process(proc)


@pytest.fixture(scope="module")
def counted(emulator: str) -> Iterator[str]:
    """tests/countproxy.py in front of the emulator: it lists every request it relays."""
    with loopback_host(Path(__file__).parent / "countproxy.py", emulator) as url:
        yield url


@pytest.fixture(scope="module")
def unranged(emulator: str) -> Iterator[str]:
    """tests/countproxy.py in front of the emulator, dropping every request's Range (as a proxy
    or cache in front of a store may): a ranged GET gets the whole object."""
    with loopback_host(Path(__file__).parent / "countproxy.py", emulator, "--drop-range") as url:
        yield url


@pytest.fixture(scope="module")
def live(emulator: str, counted: str, unranged: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from tlscope.serve.config import StoreConfig

    stores = {
        "gruns": StoreConfig(url=f"gs://{BUCKET}/runs/", endpoint_url=emulator, anon=True, timeout=20),
        "glogs": StoreConfig(url=f"gs://{BUCKET}/logs/", endpoint_url=emulator, anon=True, timeout=20),
        # The same objects through the counting proxy (its longer prefix wins for runs/single/).
        "gcounted": StoreConfig(url=f"gs://{BUCKET}/runs/single/", endpoint_url=counted, anon=True, timeout=20),
        "gunranged": StoreConfig(url=f"gs://{BUCKET}/runs/breaks/", endpoint_url=unranged, anon=True, timeout=20),
    }
    server = LiveServer([], tmp_path_factory.mktemp("gcs"), stores=stores)
    yield server
    server.close()


def events_in(folder: Path) -> int:
    parts = list(folder.glob("rank_*/raw.jsonl")) or [folder / "raw.jsonl"]
    return sum(1 for p in parts for line in p.read_bytes().splitlines()[1:] if line)


@pytest.mark.parametrize("name", ["single", "multi"])
def test_gcs_folder_listed_and_byte_exact(client: httpx.Client, viewer_traces: dict[str, Path], name: str) -> None:
    folder = viewer_traces[name]
    trace = add_trace(client, f"gs://{BUCKET}/runs/{name}/")
    assert trace["kind"] == "remote-folder"
    listed = {t["id"]: t for t in client.get("/api/traces").json()}
    assert listed[trace["id"]]["url"] == f"/traces/{trace['id']}/"
    summary = client.get(f"/api/traces/{trace['id']}").json()["summary"]
    assert summary["events"] == events_in(folder) > 0
    assert summary["ranks"] == ([0, 1] if name == "multi" else [])
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".txt", ".html"))
    for path in files[:30]:
        rel = path.relative_to(folder).as_posix()
        r = client.get(trace["url"] + rel, headers={"accept-encoding": "identity"})
        assert r.status_code == 200 and r.content == path.read_bytes(), rel
        assert r.headers["etag"].startswith('"') and r.headers["content-length"] == str(path.stat().st_size)
    page = client.get(f"/api/traces/{trace['id']}/events", params={"limit": 5}).json()
    assert page["total"] == events_in(folder) and len(page["events"]) == 5


def test_gcs_validators_ranges_gzip(client: httpx.Client, live: LiveServer, viewer_traces: dict[str, Path]) -> None:
    with live.compressing():
        _gcs_validators_ranges_gzip(client, viewer_traces)


def _gcs_validators_ranges_gzip(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    trace = add_trace(client, f"gs://{BUCKET}/runs/single/")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    url = trace["url"] + "raw.jsonl"
    whole = client.get(url, headers={"accept-encoding": "identity"})
    tag = whole.headers["etag"]
    assert whole.content == raw and whole.headers["content-type"].startswith("application/x-ndjson")
    assert client.get(url, headers={"if-none-match": tag}).status_code == 304
    assert client.get(url, headers={"if-none-match": '"other"', "accept-encoding": "identity"}).content == raw
    part = client.get(url, headers={"range": "bytes=100-1099"})
    assert part.status_code == 206 and part.content == raw[100:1100]
    assert part.headers["content-range"] == f"bytes 100-1099/{len(raw)}"
    assert client.get(url, headers={"range": "bytes=-64"}).content == raw[-64:]
    assert client.get(url, headers={"range": f"bytes={len(raw)}-"}).status_code == 416
    with httpx.stream("GET", client.base_url.join(url), headers={"accept-encoding": "gzip"}) as r:
        assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
        zipped_tag = r.headers["etag"]
        assert gzip.decompress(b"".join(r.iter_raw())) == raw
    assert zipped_tag != tag and client.get(url, headers={"if-none-match": zipped_tag}).status_code == 304
    payload = next((viewer_traces["single"] / "payloads").glob("*.txt"))
    r = client.get(f"{trace['url']}payloads/{payload.name}", headers={"accept-encoding": "identity"})
    assert r.content == payload.read_bytes() and "immutable" in r.headers["cache-control"]


def test_gcs_raw_log_parsed_on_first_use(client: httpx.Client, live: LiveServer) -> None:
    trace = check_remote_log_parsed_once(client, live, f"gs://{BUCKET}/logs/{RAW_LOG.name}", RAW_LOG)
    summary = client.get(f"/api/traces/{trace['id']}").json()["summary"]
    assert summary["events"] == client.get(trace["url"] + "manifest.json").json()["raw_jsonl_events"]


def test_gcs_missing_is_404(client: httpx.Client) -> None:
    trace = add_trace(client, f"gs://{BUCKET}/runs/single/")
    r = client.get(trace["url"] + "payloads/0123456789abcdef0123456789abcdef.txt")
    assert r.status_code == 404
    for url in (f"gs://{BUCKET}/runs/empty/", f"gs://{BUCKET}/runs/absent/", f"gs://{BUCKET}/logs/absent.log"):
        added = add_trace(client, url)
        assert client.get(added["url"] + "manifest.json").status_code == 404, url


def test_gcs_outside_the_store_refused(client: httpx.Client, emulator: str) -> None:
    for url in (
        f"gs://{BUCKET}/private/secret.txt",  # the bucket, but under no store's prefix
        f"gs://{BUCKET}/runs/../private/",
        f"gs://{BUCKET}/runs/%2e%2e/private/",
        f"gs://{BUCKET}/runs/..%2fprivate/",
        "gs://other-bucket/runs/single/",
        f"gcs://{BUCKET}/runs/single/",  # the store is configured as gs://: no second spelling
        f"{emulator}/storage/v1/b/{BUCKET}/o/private%2Fsecret.txt?alt=media",
    ):
        r = client.post("/api/traces", json={"url": url})
        assert r.status_code == 403, (url, r.status_code, r.text)
    trace = add_trace(client, f"gs://{BUCKET}/runs/single/")
    for rel in ("../../private/secret.txt", "..%2f..%2fprivate%2fsecret.txt", "%2e%2e/%2e%2e/private/secret.txt"):
        status, body = raw_request(str(client.base_url), trace["url"] + rel)
        assert status in (400, 403, 404) and b"SECRET" not in body, (rel, status)


def test_gcs_requests_per_file(client: httpx.Client, counted: str, viewer_traces: dict[str, Path]) -> None:
    """What a file costs the bucket, counted on the wire: its metadata (one GET of the object's
    resource: gcsfs's info also listed the prefix, to tell a directory) and one media GET, ranged
    for a range (gcsfs read a range a MiB a GET); a 304 or a 404 is the metadata GET alone."""
    folder = viewer_traces["single"]
    trace = add_trace(client, f"gs://{BUCKET}/runs/single/")
    assert client.get(trace["url"] + "manifest.json").status_code == 200  # the readiness check, not counted

    def cost(rel: str, **headers: str) -> tuple[httpx.Response, list[tuple[str, bool, str | None]]]:
        before = len(httpx.get(f"{counted}/_requests").json())
        r = client.get(trace["url"] + rel, headers=headers)
        seen = httpx.get(f"{counted}/_requests").json()[before:]
        return r, [(method, "alt=media" in path, asked) for method, path, asked in seen]

    metadata, media = ("GET", False, None), ("GET", True, None)
    for rel in ("manifest.json", "compiles.json", "raw.jsonl"):
        r, spent = cost(rel, **{"accept-encoding": "identity"})
        assert r.content == (folder / rel).read_bytes() and spent == [metadata, media], (rel, spent)
    raw = (folder / "raw.jsonl").read_bytes()
    r, spent = cost("raw.jsonl", range="bytes=100-1099")
    assert (r.status_code, r.content) == (206, raw[100:1100]) and spent == [metadata, ("GET", True, "bytes=100-1099")]
    r, spent = cost("raw.jsonl", **{"if-none-match": r.headers["etag"]})
    assert r.status_code == 304 and spent == [metadata]
    r, spent = cost("payloads/0123456789abcdef0123456789abcdef.txt")
    assert r.status_code == 404 and spent == [metadata]


def test_gcs_range_not_honoured_is_skipped_to(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    """A ranged GET answered with the whole object (a proxy in front of the bucket dropped the
    Range) is read on to the range's first byte: the bytes asked, not the object's first ones."""
    raw = (viewer_traces["breaks"] / "raw.jsonl").read_bytes()
    url = add_trace(client, f"gs://{BUCKET}/runs/breaks/")["url"] + "raw.jsonl"
    for asked, want in (("bytes=100-1099", raw[100:1100]), ("bytes=-50", raw[-50:]), ("bytes=5000-", raw[5000:])):
        r = client.get(url, headers={"range": asked, "accept-encoding": "identity"})
        assert (r.status_code, r.content) == (206, want), asked
