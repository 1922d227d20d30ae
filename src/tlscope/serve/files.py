"""Files of a trace folder (and of viewers) as HTTP responses: validators, ranges, gzip, streaming.

* `ETag` is strong: a payload's is its MD5 (payloads are content-addressed, so it is also
  `Cache-Control: immutable`); any other file's is made of its size, modification time (ns) and
  inode (tlscope writes outputs whole and renames them into place, so a changed file is a new
  inode). A gzip-encoded answer is another representation and gets its own tag (`...-gz"`).
* `If-None-Match` (either tag, or `*`) -> 304. `Range: bytes=a-b | a- | -n` -> 206 with
  `Content-Range`; a range starting past the end -> 416 with `Content-Range: bytes */size`;
  `If-Range` that does not match -> the whole file; several ranges or a malformed header -> the
  whole file (RFC 9110 lets a server ignore Range).
* gzip when the client accepts it (and the caller allows it: `compress`), for text types and
  timeline.bin (packed, yet gzip takes 30 % off: 2.6 -> 1.8 MB on a 1,000-rank job, the Ranks
  view's first read) of 1 KiB or more, never for a range.
* Bytes are read and sent a chunk at a time (never a whole file in memory); small files are read
  in one system call on the event loop, bigger ones chunk by chunk in a worker thread.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import anyio.to_thread
import msgspec
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from tlscope.format import layout
from tlscope.write.landing import chromium

CHUNK = 256 * 1024
_SMALL = 64 * 1024
_GZIP_MIN = 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_MD5_NAME = re.compile(r"^[0-9a-f]{32}\.txt$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

_TYPES = {
    ".json": "application/json",
    ".jsonl": "application/x-ndjson; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".map": "application/json",
    ".ts": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".gz": "application/gzip",
    ".wasm": "application/wasm",
}
_TEXT = ("text/", "application/json", "application/x-ndjson", "image/svg+xml")
#: Binary files that gzip well, by name.
_PACKED = frozenset({layout.TIMELINE})


def content_type(name: str) -> str:
    return _TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")


def is_payload(path: Path) -> bool:
    return is_payload_name((path.parent.name, path.name))


def etag_of(path: Path, st: os.stat_result) -> str:
    if is_payload(path):
        return f'"{path.name[:32]}"'
    return f'"{st.st_size:x}-{st.st_mtime_ns:x}-{st.st_ino:x}"'


def matches(if_none_match: str, tags: tuple[str, ...]) -> bool:
    """Whether an If-None-Match header names one of `tags` (weak comparison, as RFC 9110 asks)."""
    if if_none_match.strip() == "*":
        return True
    sent = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return any(t in sent for t in tags)


def accepts_gzip(accept_encoding: str) -> bool:
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            q = params.strip()
            return not (q.startswith("q=") and _zero(q[2:]))
    return False


def _zero(q: str) -> bool:
    try:
        return float(q) == 0
    except ValueError:
        return False


def parse_range(header: str, size: int) -> tuple[int, int] | bool | None:
    """(start, end inclusive) for one satisfiable range; False if unsatisfiable; None to ignore it."""
    m = _RANGE.match(header.strip().replace(" ", ""))
    if m is None or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if len(first) > 19 or len(last) > 19:
        return None
    if not first:  # the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            return False
        return max(0, size - n), size - 1
    start = int(first)
    end = size - 1 if not last else min(int(last), size - 1)
    if last and int(last) < start:
        return None  # invalid: ignore it
    if start >= size:
        return False
    return start, end


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """How to answer a GET or HEAD of one file: decided from its facts and the request headers alone."""

    status: int
    headers: dict[str, str]
    #: The bytes [start, stop) to send (none for 304 and 416), gzip-encoded on the way when `gzip`.
    start: int = 0
    stop: int = 0
    gzip: bool = False
    #: False for HEAD and for answers without a body (304, 416).
    body: bool = False


def is_payload_name(parts: Sequence[str]) -> bool:
    """A content-addressed payload (`.../payloads/<md5>.txt`): its bytes never change (immutable)."""
    return len(parts) >= 2 and parts[-2] == layout.PAYLOADS and _MD5_NAME.match(parts[-1]) is not None


def _if_range_ok(if_range: str | None, tag: str) -> bool:
    """Without If-Range, or when it names the current (strong) tag; a date is never trusted."""
    return if_range is None or if_range.strip() == tag


def plan_response(
    *,
    name: str,
    size: int,
    etag: str,
    immutable: bool,
    headers: Mapping[str, str],
    method: str,
    cache: str | None = None,
    extra: Mapping[str, str] | None = None,
    html_csp: str | None = None,
    compress: bool = True,
) -> Plan:
    """The one rule for file answers, local or from a store (the module doc says it in words).

    `name` gives the content type (and `html_csp`, added to an `.html` file's answer); `etag` is
    the file's strong tag (its gzip representation's is derived); `immutable` picks the cache
    policy unless `cache` is given; `extra` headers go on every answer.
    """
    gz_tag = etag[:-1] + '-gz"'
    base = {"cache-control": cache or (IMMUTABLE if immutable else REVALIDATE), "vary": "Accept-Encoding"}
    if html_csp is not None and name.endswith(".html"):
        base["content-security-policy"] = html_csp
    base.update(extra or {})
    send = method != "HEAD"
    inm = headers.get("if-none-match")
    if inm is not None and matches(inm, (etag, gz_tag)):
        return Plan(status=304, headers={**base, "etag": gz_tag if matches(inm, (gz_tag,)) else etag})
    ctype = content_type(name)
    head = {**base, "content-type": ctype, "accept-ranges": "bytes"}
    wanted = headers.get("range")
    if wanted is not None and _if_range_ok(headers.get("if-range"), etag):
        span = parse_range(wanted, size)
        if span is False:
            return Plan(status=416, headers={**base, "content-range": f"bytes */{size}"})
        if isinstance(span, tuple):
            start, end = span
            ranged = {**head, "etag": etag, "content-range": f"bytes {start}-{end}/{size}"}
            return Plan(status=206, headers={**ranged, "content-length": str(end + 1 - start)},
                        start=start, stop=end + 1, body=send)  # fmt: skip
    packs = ctype.startswith(_TEXT) or os.path.basename(name) in _PACKED
    if compress and size >= _GZIP_MIN and packs and accepts_gzip(headers.get("accept-encoding", "")):
        gz = {**head, "etag": gz_tag, "content-encoding": "gzip"}
        return Plan(status=200, headers=gz, start=0, stop=size, gzip=True, body=send)
    plain = {**head, "etag": etag, "content-length": str(size)}
    return Plan(status=200, headers=plain, start=0, stop=size, body=send)


def file_response(
    path: Path,
    headers: Mapping[str, str],
    *,
    method: str,
    cache: str | None = None,
    extra: Mapping[str, str] | None = None,
    html_csp: str | None = None,
    compress: bool = True,
) -> Response:
    """The answer for file `path` (which exists and is confined) to a GET or HEAD with `headers`."""
    st = path.stat()
    plan = plan_response(
        name=path.name, size=st.st_size, etag=etag_of(path, st), immutable=is_payload(path), headers=headers,
        method=method, cache=cache, extra=extra, html_csp=html_csp, compress=compress,
    )  # fmt: skip
    if plan.status in (304, 416):
        return Response(status_code=plan.status, headers=plan.headers)
    return FileBody(path, plan.start, plan.stop, status=plan.status, head=not plan.body, gzip=plan.gzip,
                    headers=plan.headers)  # fmt: skip


def combined_chromium(root: Path, *, method: str) -> Response:
    """A job folder's OUT/chromium_events.json, as tlparse writes it, made from its ranks' files as
    it is sent (not stored: write/landing/chromium.py). Not cached: the ranks' files may change."""
    headers = {"content-type": "application/json", "cache-control": "no-cache"}
    if method == "HEAD":
        return Response(status_code=200, headers=headers)
    return StreamingResponse(chromium.chunks(root, chromium.job_ranks(root)), headers=headers)


class FileBody(Response):
    """Bytes [start, stop) of a file, sent a chunk at a time, optionally gzip-encoded on the fly."""

    def __init__(
        self,
        path: Path,
        start: int,
        stop: int,
        *,
        headers: Mapping[str, str],
        status: int = 200,
        head: bool = False,
        gzip: bool = False,
    ) -> None:
        self.path, self.start, self.stop, self.head, self.gzip = path, start, stop, head, gzip
        self.status_code = status
        self.background = None
        all_headers = dict(headers)
        if not gzip:
            all_headers["content-length"] = str(stop - start)
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in all_headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if self.head:
            await send({"type": "http.response.body", "body": b""})
            return
        chunks = self._chunks()
        if self.gzip:
            chunks = gzipped(chunks)
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def _chunks(self) -> AsyncIterator[bytes]:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            at = self.start
            while at < self.stop:
                n = min(CHUNK, self.stop - at)
                if self.stop - self.start <= CHUNK:  # one read from the page cache beats a thread hop
                    data = os.pread(fd, n, at)
                else:
                    data = await anyio.to_thread.run_sync(os.pread, fd, n, at)
                if not data:
                    return  # the file shrank under us: end the body where it ends
                at += len(data)
                yield data
        finally:
            os.close(fd)


async def gzipped(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    packer = zlib.compressobj(5, zlib.DEFLATED, 31)  # wbits 31: a gzip stream
    async for chunk in chunks:
        out = packer.compress(chunk) if len(chunk) <= _SMALL else await anyio.to_thread.run_sync(packer.compress, chunk)
        if out:
            yield out
    yield packer.flush()
