"""Issue 11's acceptance check, as its user runs it:

    tlscope serve LOG --port P --no-browser --allow-origin http://127.0.0.1:9

on a raw real log (a corpus trace made with torch): the trace is listed at once (its parse starts
on first use); its files come back byte-exact with ETag, 304 and 206; the events API's totals and
pages agree with raw.jsonl; the allowed origin gets Access-Control-Allow-Origin (preflight too),
others nothing; no request of any spelling reads a file outside the trace; Ctrl-C stops it (130).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from helpers import CORPUS, free_port, key_of, raw_request

from tlscope.cli import main as tlscope_main

LOG = next((CORPUS / "recompiles").glob("*.log.gz"))
ALLOWED = "http://127.0.0.1:9"
SPELLINGS = ["../", "..%2f", "%2e%2e/", "%2E%2E%2F", "..%5c", "..\\", "%2e%2e%5c", "payloads/../../", "%252e%252e/"]


def test_acceptance(tmp_path: Path) -> None:
    reference = tmp_path / "reference"  # the same log parsed by `tlscope LOG -o OUT`
    assert tlscope_main([str(LOG), "-o", str(reference), "--no-browser"]) == 0
    (tmp_path / "outside.txt").write_text("SECRET")
    port = free_port()
    command = [sys.executable, "-m", "tlscope", "serve", str(LOG), "--port", str(port), "--no-browser",
               "--allow-origin", ALLOWED, "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert f"http://127.0.0.1:{port}/" in proc.stdout.readline()  # listening, the address printed
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            check_served(client, reference, port)
    finally:
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=30)
    assert status == 130 and "stopped" in (proc.stderr.read() if proc.stderr else "")
    assert not list((tmp_path / "cache" / "tmp").iterdir())


def check_served(client: httpx.Client, reference: Path, port: int) -> None:
    listed = client.get("/api/traces", timeout=5).json()
    assert len(listed) == 1 and listed[0]["kind"] == "log" and listed[0]["state"] in ("pending", "parsing", "ready")
    trace = listed[0]
    check_files(client, trace["url"], reference)
    check_events(client, trace["id"], reference)
    check_cors(client, trace["url"])
    for spelling in SPELLINGS:
        for target in (f"{trace['url']}{spelling}outside.txt", f"{trace['url']}{spelling}{spelling}outside.txt"):
            status, body = raw_request(f"http://127.0.0.1:{port}", target)
            assert 400 <= status < 500 and b"SECRET" not in body, target


def check_files(client: httpx.Client, url: str, reference: Path) -> None:
    raw = (reference / "raw.jsonl").read_bytes()
    whole = client.get(url + "raw.jsonl", headers={"accept-encoding": "identity"})
    assert whole.status_code == 200 and whole.content == raw
    tag = whole.headers["etag"]
    assert client.get(url + "raw.jsonl", headers={"if-none-match": tag}).status_code == 304
    part = client.get(url + "raw.jsonl", headers={"range": "bytes=100-1099"})
    assert part.status_code == 206 and part.content == raw[100:1100]
    # httpx accepts gzip, but the default (compress "auto") sends none to a client on this machine.
    assert "content-encoding" not in client.get(url + "raw.jsonl").headers
    for path in sorted((reference / "payloads").iterdir())[:20]:
        r = client.get(f"{url}payloads/{path.name}")
        assert r.content == path.read_bytes() and "immutable" in r.headers["cache-control"]
    chromium = client.get(url + "chromium_events.json")
    assert chromium.content == (reference / "chromium_events.json").read_bytes()
    assert chromium.headers["content-type"] == "application/json"
    manifest = client.get(url + "manifest.json").json()
    assert manifest["compile_ids"] == json.loads((reference / "manifest.json").read_text())["compile_ids"]


def check_events(client: httpx.Client, tid: str, reference: Path) -> None:
    lines = [line for line in (reference / "raw.jsonl").read_bytes().splitlines()[1:] if line]
    got: list[bytes] = []
    while True:
        body = client.get(f"/api/traces/{tid}/events", params={"offset": len(got), "limit": 50}).content
        page = json.loads(body)
        assert page["total"] == len(lines) and page["offset"] == len(got)
        if not page["events"]:
            break
        got += [json.dumps(e, separators=(",", ":")).encode() for e in page["events"]]
        assert b",".join(lines[page["offset"] : len(got)]) in body  # the raw lines, byte for byte
    assert len(got) == len(lines)
    kinds = json.loads(client.get(f"/api/traces/{tid}/events", params={"kind": "dynamo_start", "limit": 0}).content)
    assert kinds["total"] == sum(1 for line in lines if key_of(json.loads(line)) == "dynamo_start") > 0


def check_cors(client: httpx.Client, url: str) -> None:
    allowed = client.get(url + "manifest.json", headers={"origin": ALLOWED})
    assert allowed.headers["access-control-allow-origin"] == ALLOWED and "Origin" in allowed.headers["vary"]
    preflight = client.options(url + "raw.jsonl", headers={"origin": ALLOWED, "access-control-request-method": "GET",
                                                          "access-control-request-headers": "range"})  # fmt: skip
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == ALLOWED
    for other in ("http://127.0.0.1:90", "http://localhost:9", "https://127.0.0.1:9", "null"):
        r = client.get(url + "manifest.json", headers={"origin": other})
        assert "access-control-allow-origin" not in r.headers, other
        p = client.options(url + "raw.jsonl", headers={"origin": other, "access-control-request-method": "GET"})
        assert "access-control-allow-origin" not in p.headers and p.status_code == 403, other


def _serve(tmp_path: Path, source: Path, recorder: Path, *flags: str) -> tuple[subprocess.Popen[str], str]:
    """`tlscope serve SOURCE` as its user runs it, $BROWSER being `recorder`; (process, base URL)."""
    port = free_port()
    command = [sys.executable, "-m", "tlscope", "serve", str(source), "--port", str(port),
               "--cache-dir", str(tmp_path / "cache"), *flags]  # fmt: skip
    env = {**os.environ, "BROWSER": str(recorder)}  # webbrowser runs `recorder URL`
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert f"http://127.0.0.1:{port}/" in first, first  # 127.0.0.1 when no --host is given
    return proc, f"http://127.0.0.1:{port}"


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    return proc.stderr.read() if proc.stderr else ""


def test_browser_opens_on_the_viewer_and_the_parse_shows_progress(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser"
    recorder.write_text(f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    recorder.chmod(0o755)
    proc, url = _serve(tmp_path, LOG, recorder)
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            trace = client.get("/api/traces").json()[0]
            assert client.get(trace["url"] + "manifest.json").status_code == 200  # waits for the parse
            deadline = time.monotonic() + 30
            while not opened.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        stderr = _stop(proc)
    assert opened.read_text().splitlines() == [url + trace["viewer_url"]]  # the trace's default viewer
    assert trace["viewer_url"].startswith("/viewers/explorer/?trace=")
    assert f"tlscope serve: {trace['id']}: parsing, 100% of" in stderr, stderr  # progress on stderr
    opened.unlink()
    proc, url = _serve(tmp_path, LOG, recorder, "--no-browser")
    try:
        httpx.get(url + "/api/traces", timeout=30).raise_for_status()
        time.sleep(2)  # the browser opens 0.5 s after the address is printed: it would have by now
    finally:
        _stop(proc)
    assert not opened.exists()
