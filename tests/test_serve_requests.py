"""What a remote file costs its store in requests (docs/SERVER.md, "Stores"), counted on the wire.

The stores are real processes on loopback: tests/filehost.py (an https-style file host; it lists
every request it was sent, refuses HEAD under /nohead/, answers without a length under
/nolength/) and moto's S3 server behind tests/countproxy.py (which lists every request it relays).
Each file is asked for alone, and the requests its answer cost are those the store saw meanwhile.

Shown, with the answers byte for byte those of the local folder: a GET is one GET to the store,
a range one ranged GET (a 416 too), a conditional GET one HEAD (one one-byte GET on a host that
refuses HEAD, whose refusal is remembered), a host that refuses HEAD serves a whole output folder
with one GET a file (its only HEADs those that learnt the refusal), an answer without a length is
served from its one GET, a missing file is one request, a GET that hangs 504, an If-Range and a
HEAD as before; S3 likewise (GetObject, no HeadObject before it); a raw log in a store is asked
for its facts once and read once.
"""

from __future__ import annotations

import hashlib
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
    add_trace,
    loopback_host,
    moto_s3,
)

from tlscope.serve.traces import local_summary

pytest.importorskip("boto3", reason="the S3 tests need moto[server] (the test extra)")
pytest.importorskip("s3fs", reason="the S3 tests need tlscope[remote] (the test extra)")

HERE = Path(__file__).resolve().parent
BUCKET = "counted"
RAW_LOG = next((CORPUS / "graph_breaks").glob("*.log*"))
IDENTITY = {"accept-encoding": "identity"}


@pytest.fixture(scope="module")
def filehost(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("counted-host")
    shutil.copytree(viewer_traces["single"], root / "single")
    shutil.copytree(viewer_traces["single"], root / "tiny" / "single")  # the "nolength-tiny" store's
    shutil.copytree(viewer_traces["single"], root / "opened")  # added by one test only
    shutil.copy(RAW_LOG, root / RAW_LOG.name)
    with loopback_host(HERE / "filehost.py", str(root)) as url:
        yield url


@pytest.fixture(scope="module")
def s3(viewer_traces: dict[str, Path]) -> Iterator[str]:
    """moto's S3 server with the single folder and a raw log, behind the counting proxy."""
    with moto_s3(BUCKET) as (endpoint, client):
        folder = viewer_traces["single"]
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            client.upload_file(str(path), BUCKET, f"runs/single/{path.relative_to(folder).as_posix()}")
            client.upload_file(str(path), BUCKET, f"unranged/single/{path.relative_to(folder).as_posix()}")
        client.upload_file(str(RAW_LOG), BUCKET, f"logs/{RAW_LOG.name}")
        with loopback_host(HERE / "countproxy.py", endpoint) as url:
            yield url


@pytest.fixture(scope="module")
def s3_unranged(s3: str) -> Iterator[str]:
    """The same S3 through a proxy that drops every request's Range (as a proxy or cache in front
    of a store may): a ranged GetObject gets the whole object."""
    with loopback_host(HERE / "countproxy.py", s3, "--drop-range") as url:
        yield url


@pytest.fixture(scope="module")
def live(filehost: str, s3: str, s3_unranged: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from tlscope.serve.config import StoreConfig

    loopback = ["127.0.0.1/32"]
    stores = {
        "files": StoreConfig(url=f"{filehost}/", allow_networks=loopback),
        "nohead": StoreConfig(url=f"{filehost}/nohead/", allow_networks=loopback),
        "nolength": StoreConfig(url=f"{filehost}/nolength/", allow_networks=loopback),
        "nolength-tiny": StoreConfig(
            url=f"{filehost}/nolength/tiny/", allow_networks=loopback, max_object_bytes=50_000
        ),
        "stallget": StoreConfig(url=f"{filehost}/stallget/", allow_networks=loopback, timeout=1.0),
        # Its own store: the HEAD refusal it learns is the store's (the "files" store answers HEAD).
        "getto405": StoreConfig(url=f"{filehost}/getto405/", allow_networks=loopback),
        "runs": StoreConfig(url=f"s3://{BUCKET}/runs/", endpoint_url=s3),
        "logs": StoreConfig(url=f"s3://{BUCKET}/logs/", endpoint_url=s3),
        "unranged": StoreConfig(url=f"s3://{BUCKET}/unranged/", endpoint_url=s3_unranged),
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in S3_CREDS.items():
            mp.setenv(key, value)
        server = LiveServer([], tmp_path_factory.mktemp("counted"), stores=stores)
        yield server
        server.close()


class Counted:
    """The requests a store saw while `get` answered (the store lists its requests at `listing`)."""

    def __init__(self, client: httpx.Client, listing: str) -> None:
        self.client, self.listing = client, listing

    def seen(self) -> list[list[Any]]:
        requests: list[list[Any]] = httpx.get(self.listing).json()
        return requests

    def get(self, url: str, **headers: str) -> tuple[httpx.Response, list[tuple[str, str | None]]]:
        before = len(self.seen())
        r = self.client.get(url, headers=headers)
        return r, [(method, asked) for method, _, asked in self.seen()[before:]]


def ready(client: httpx.Client, url: str) -> dict[str, Any]:
    """The trace of store folder `url`, its readiness checked (its marker read) before counting."""
    trace = add_trace(client, url)
    assert client.get(trace["url"] + "manifest.json").status_code == 200
    return trace


def files_of(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def host_etag(size: int) -> str:
    """The ETag of a file host's object without one of its own: size and an empty time's hash
    (Store.info's rule before this change too: a client's cached tags stay valid)."""
    return f'"{size:x}-{hashlib.sha256(b"").hexdigest()[:16]}"'


@pytest.mark.parametrize("prefix", ["", "nohead/"])
def test_a_file_host_answers_each_get_from_one_get(
    client: httpx.Client, filehost: str, viewer_traces: dict[str, Path], prefix: str
) -> None:
    """Every file of an output folder byte for byte with the local folder's size and tag, each
    from one GET and no HEAD; a host that refuses HEAD serves the whole folder, summary included."""
    counted = Counted(client, f"{filehost}/requests")
    folder = viewer_traces["single"]
    trace = ready(client, f"{filehost}/{prefix}single/")
    assert client.get(f"/api/traces/{trace['id']}").json()["summary"] == local_summary(folder)
    for rel in files_of(folder):
        data = (folder / rel).read_bytes()
        r, cost = counted.get(trace["url"] + rel, **IDENTITY)
        assert (r.status_code, r.content) == (200, data), rel
        assert r.headers["content-length"] == str(len(data)) and r.headers["etag"] == host_etag(len(data))
        assert cost == [("GET", None)], (rel, cost)
    if prefix:  # the HEADs that learnt the refusal: the readiness check's two markers, asked at once
        assert sum(method == "HEAD" for method, path, _ in counted.seen() if path.startswith("/nohead/")) <= 2


@pytest.mark.parametrize("prefix", ["", "nohead/"])
def test_a_file_host_answers_a_range_from_one_ranged_get(
    client: httpx.Client, filehost: str, viewer_traces: dict[str, Path], prefix: str
) -> None:
    """A range is asked of the store as the client asked it (the plain host ignores Range and
    sends the whole body, skipped to the range; the nohead host honours it): one GET, a 416 too."""
    counted = Counted(client, f"{filehost}/requests")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    url = ready(client, f"{filehost}/{prefix}single/")["url"] + "raw.jsonl"
    for spec, want in {"bytes=10-99": raw[10:100], "bytes=-50": raw[-50:], "bytes=100-": raw[100:]}.items():
        r, cost = counted.get(url, range=spec)
        assert (r.status_code, r.content) == (206, want), spec
        assert r.headers["etag"] == host_etag(len(raw)) and r.headers["content-range"].endswith(f"/{len(raw)}")
        assert cost == [("GET", spec)], (spec, cost)
    r, cost = counted.get(url, range=f"bytes={len(raw) + 5}-")
    assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{len(raw)}"
    assert cost == [("GET", f"bytes={len(raw) + 5}-")]


def test_a_conditional_get_is_one_request(client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]) -> None:
    """A matching If-None-Match is answered 304 from one HEAD; where HEAD is refused, from one GET
    of one byte (after the refusal is learnt once), never a whole GET whose body is dropped. The
    tag is the one a GET gave (the rule is one, whichever request told the facts)."""
    counted = Counted(client, f"{filehost}/requests")
    size = len((viewer_traces["single"] / "manifest.json").read_bytes())
    for prefix, learnt in (("", []), ("nohead/", [("HEAD", None)])):
        url = ready(client, f"{filehost}/{prefix}single/")["url"] + "manifest.json"
        tag = client.get(url, headers=IDENTITY).headers["etag"]
        assert tag == host_etag(size)
        once = [("HEAD", None)] if not prefix else [("GET", "bytes=0-0")]
        for first in (True, False):  # the refusal learnt by now (the readiness check's HEAD) or here
            r, cost = counted.get(url, **{"if-none-match": tag})
            assert r.status_code == 304 and r.headers["etag"] == tag and not r.content
            assert cost == once or (first and cost == learnt + once), (prefix, cost)
        r, cost = counted.get(url, **{"if-none-match": '"other"', **IDENTITY})
        assert r.status_code == 200 and len(r.content) == size  # a stale tag: the facts, then the GET
        assert cost == [*once, ("GET", None)], (prefix, cost)


def test_an_answer_without_a_length_is_served_from_its_one_get(
    client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]
) -> None:
    """A host that sends no Content-Length (GET or HEAD): the body is read to its end to learn its
    size (up to READ_AHEAD), then answered as any other; over max_object_bytes it is 413 with no
    byte of it sent."""
    counted = Counted(client, f"{filehost}/requests")
    folder = viewer_traces["single"]
    trace = ready(client, f"{filehost}/nolength/single/")
    for rel in ("manifest.json", "raw.jsonl", "compiles.json"):
        data = (folder / rel).read_bytes()
        r, cost = counted.get(trace["url"] + rel, **IDENTITY)
        assert (r.status_code, r.content, r.headers["content-length"]) == (200, data, str(len(data))), rel
        assert cost == [("GET", None)]
    small = ready(client, f"{filehost}/nolength/tiny/single/")  # the "nolength-tiny" store: 50,000 bytes at most
    r, cost = counted.get(small["url"] + "raw.jsonl")
    assert r.status_code == 413 and "max_object_bytes" in r.text and cost == [("GET", None)]


def test_missing_files_cost_one_request(client: httpx.Client, filehost: str, s3: str) -> None:
    host = Counted(client, f"{filehost}/requests")
    trace = ready(client, f"{filehost}/single/")
    r, cost = host.get(trace["url"] + "no-such.json")
    assert r.status_code == 404 and cost == [("GET", None)]
    bucket = Counted(client, f"{s3}/_requests")
    trace = ready(client, f"s3://{BUCKET}/runs/single/")
    r, cost = bucket.get(trace["url"] + "no-such.json")
    assert r.status_code == 404 and cost == [("GET", None)]  # GetObject; not HeadObject then a listing


def test_s3_answers_each_get_from_one_get_object(client: httpx.Client, s3: str, viewer_traces: dict[str, Path]) -> None:
    """s3fs sent HeadObject (info) then GetObject (open_async) for each file; now GetObject alone,
    with Range for a range; a conditional GET is one HeadObject; the ETag is the object's."""
    counted = Counted(client, f"{s3}/_requests")
    folder = viewer_traces["single"]
    trace = ready(client, f"s3://{BUCKET}/runs/single/")
    for rel in files_of(folder)[:30]:
        data = (folder / rel).read_bytes()
        r, cost = counted.get(trace["url"] + rel, **IDENTITY)
        assert (r.status_code, r.content) == (200, data), rel
        assert r.headers["etag"] == f'"{hashlib.md5(data).hexdigest()}"'  # S3's ETag of a simple upload
        assert cost == [("GET", None)], (rel, cost)
    raw = (folder / "raw.jsonl").read_bytes()
    url = trace["url"] + "raw.jsonl"
    r, cost = counted.get(url, range="bytes=-70")
    assert (r.status_code, r.content, cost) == (206, raw[-70:], [("GET", "bytes=-70")])
    r, cost = counted.get(url, **{"if-none-match": f'"{hashlib.md5(raw).hexdigest()}"'})
    assert (r.status_code, cost) == (304, [("HEAD", None)])
    r, cost = counted.get(url, range=f"bytes={len(raw)}-")
    assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{len(raw)}"
    assert cost == [("GET", f"bytes={len(raw)}-"), ("HEAD", None)]  # s3fs's 416 carries no size


@pytest.mark.parametrize("store", ["s3", "file host"])
def test_a_raw_log_costs_its_facts_then_one_get(client: httpx.Client, filehost: str, s3: str, store: str) -> None:
    """A raw log in a store: its facts once (the parse cache's key: one HEAD), then one GET for
    its download (its size for the progress from that GET: no second HEAD)."""
    url, listing = (f"s3://{BUCKET}/logs/{RAW_LOG.name}", f"{s3}/_requests") if store == "s3" else (
        f"{filehost}/{RAW_LOG.name}", f"{filehost}/requests")  # fmt: skip
    counted = Counted(client, listing)
    trace = add_trace(client, url)
    r, cost = counted.get(trace["url"] + "manifest.json")
    assert r.status_code == 200
    assert [method for method, _ in cost] == ["HEAD", "GET"], cost


def test_a_get_that_hangs_is_504_before_any_byte(client: httpx.Client, filehost: str) -> None:
    """The one GET is under the store's timeout: a host whose GET does not answer within it (its
    HEAD does: the readiness check passes) gets 504, not a cut-off 200."""
    counted = Counted(client, f"{filehost}/requests")
    trace = add_trace(client, f"{filehost}/stallget/single/")
    assert client.head(trace["url"] + "manifest.json").status_code == 200  # ready, from HEADs alone
    r, cost = counted.get(trace["url"] + "manifest.json", **IDENTITY)
    assert r.status_code == 504 and "no answer within 1 s" in r.text and cost == [("GET", None)]


def test_if_range_and_head(client: httpx.Client, filehost: str, viewer_traces: dict[str, Path]) -> None:
    """An If-Range naming the current tag keeps the range (one ranged GET); one naming another
    gets the whole file (the ranged GET's answer told the tag: then a GET of the whole). A HEAD is
    answered from one HEAD, with the GET's headers."""
    counted = Counted(client, f"{filehost}/requests")
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    url = ready(client, f"{filehost}/nohead/single/")["url"] + "raw.jsonl"
    tag = host_etag(len(raw))
    r, cost = counted.get(url, range="bytes=5-9", **{"if-range": tag})
    assert (r.status_code, r.content, cost) == (206, raw[5:10], [("GET", "bytes=5-9")])
    r, cost = counted.get(url, range="bytes=5-9", **{"if-range": '"old"', **IDENTITY})
    assert (r.status_code, r.content) == (200, raw) and r.headers["etag"] == tag
    assert cost == [("GET", "bytes=5-9"), ("GET", f"bytes=0-{len(raw) - 1}")]
    url = ready(client, f"{filehost}/single/")["url"] + "raw.jsonl"
    before = len(counted.seen())
    head = client.head(url, headers=IDENTITY)
    assert [m for m, _, _ in counted.seen()[before:]] == ["HEAD"]
    get = client.get(url, headers=IDENTITY)
    same = {k: v for k, v in get.headers.items() if k != "date"}
    assert (
        head.status_code == 200 and not head.content and {k: v for k, v in head.headers.items() if k != "date"} == same
    )


@pytest.mark.parametrize("prefix", ["", "nohead/"])
def test_opening_a_folder_reads_its_markers_once(client: httpx.Client, filehost: str, prefix: str) -> None:
    """Adding a folder makes its summary from one GET of each marker (manifest.json, and the job
    summary it lacks: a 404), not a HEAD then a GET; its first file then needs no readiness check
    (a summary is made only of an output folder): one GET. Main's: 4 (5 where HEAD is refused),
    then 2 HEADs, a GET, a HEAD and the file's GET."""
    counted = Counted(client, f"{filehost}/requests")
    before = len(counted.seen())
    trace = add_trace(client, f"{filehost}/{prefix}opened/")
    names = sorted((method, path.rsplit("/", 1)[1]) for method, path, _ in counted.seen()[before:])
    assert trace["summary"] is not None and names == [("GET", "manifest.json"), ("GET", "multi_rank_summary.json")]
    r, cost = counted.get(trace["url"] + "compiles.json", **IDENTITY)
    assert r.status_code == 200 and cost == [("GET", None)]


def test_the_one_get_and_the_one_byte_get_keep_redirects_inside(client: httpx.Client, filehost: str) -> None:
    """Redirects on the requests this change added are checked as every other: a GET redirected
    out of the store's prefix (to 127.0.0.2, the metadata address, a private one) is refused,
    403, on the one-GET path (its HEAD answered: the trace is ready) and on the one-byte GET that
    asks a HEAD-refusing host for an object's facts; a redirect inside the prefix is followed."""
    port = filehost.rsplit(":", 1)[1]
    inside = add_trace(client, f"{filehost}/getto/127.0.0.1/{port}/single/")
    assert client.head(inside["url"] + "manifest.json").status_code == 200  # ready, from HEADs
    assert client.get(inside["url"] + "manifest.json").json()["raw_jsonl_events"] > 0
    for host, to_port in (("127.0.0.2", port), ("169.254.169.254", "80"), ("10.0.0.1", "80")):
        for prefix in ("getto", "getto405"):
            trace = add_trace(client, f"{filehost}/{prefix}/{host}/{to_port}/single/")
            if prefix == "getto":
                assert client.head(trace["url"] + "manifest.json").status_code == 200
            r = client.get(trace["url"] + "manifest.json")
            assert r.status_code == 403 and "not allowed" in r.text, (prefix, host, r.status_code, r.text)


@pytest.mark.slow
def test_s3_range_not_honoured_is_skipped_to(client: httpx.Client, viewer_traces: dict[str, Path]) -> None:
    """A ranged GetObject answered with the whole object (a proxy in front of the store dropped the
    Range) is read on to the range's first byte, on both paths a range takes: a plain range (the
    one GetObject whose answer plans the reply) and a range with a validator that does not match
    (the object's facts first, then the ranged read)."""
    raw = (viewer_traces["single"] / "raw.jsonl").read_bytes()
    url = add_trace(client, f"s3://{BUCKET}/unranged/single/")["url"] + "raw.jsonl"
    for asked, want in (("bytes=100-1099", raw[100:1100]), ("bytes=-50", raw[-50:]), ("bytes=5000-", raw[5000:])):
        for validator in ({}, {"if-none-match": '"not-it"'}):
            r = client.get(url, headers={"range": asked, **IDENTITY, **validator})
            assert (r.status_code, r.content) == (206, want), (asked, validator)
