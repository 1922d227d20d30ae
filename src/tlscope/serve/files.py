"""Files of a trace folder (and of viewers) as HTTP responses: validators, ranges, gzip, streaming.

* `ETag` is strong: a payload's is its MD5 (payloads are content-addressed, so it is also
  `Cache-Control: immutable`); any other file's is made of its size, modification time (ns) and
  inode (tlscope writes outputs whole and renames them into place, so a changed file is a new
  inode). A gzip-encoded answer is another representation and gets its own tag (`...-gz"`).
* `If-None-Match` (either tag, or `*`) -> 304. `Range: bytes=a-b | a- | -n` -> 206 with
  `Content-Range`; a range starting past the end -> 416 with `Content-Range: bytes */size`;
  `If-Range` that does not match -> the whole file; several ranges or a malformed header -> the
  whole file (RFC 9110 lets a server ignore Range).
* gzip when the client accepts it (and the caller allows it: `compress`), for text types of 1 KiB
  or more, never for a range.
* Bytes are read and sent a chunk at a time (never a whole file in memory); small files are read
  in one system call on the event loop, bigger ones chunk by chunk in a worker thread.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import anyio.to_thread
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

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


def content_type(name: str) -> str:
    return _TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")


def is_payload(path: Path) -> bool:
    return path.parent.name == "payloads" and _MD5_NAME.match(path.name) is not None


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


def file_response(
    path: Path,
    headers: Mapping[str, str],
    *,
    method: str,
    cache: str | None = None,
    extra: Mapping[str, str] | None = None,
    compress: bool = True,
) -> Response:
    """The answer for file `path` (which exists and is confined) to a GET or HEAD with `headers`;
    gzip-encoded where the client accepts it and `compress` allows it."""
    st = path.stat()
    tag = etag_of(path, st)
    gz_tag = tag[:-1] + '-gz"'
    base = {
        "cache-control": cache or (IMMUTABLE if is_payload(path) else REVALIDATE),
        "vary": "Accept-Encoding",
        **(extra or {}),
    }
    ctype = content_type(path.name)
    inm = headers.get("if-none-match")
    if inm is not None and matches(inm, (tag, gz_tag)):
        return Response(status_code=304, headers={**base, "etag": gz_tag if matches(inm, (gz_tag,)) else tag})
    wanted = headers.get("range")
    if wanted is not None and _if_range_ok(headers.get("if-range"), tag):
        span = parse_range(wanted, st.st_size)
        if span is False:
            return Response(status_code=416, headers={**base, "content-range": f"bytes */{st.st_size}"})
        if span is not None and span is not True:
            start, end = span
            return FileBody(path, start, end + 1, status=206, head=method == "HEAD", headers={
                **base, "etag": tag, "content-type": ctype, "accept-ranges": "bytes",
                "content-range": f"bytes {start}-{end}/{st.st_size}",
            })  # fmt: skip
    text = st.st_size >= _GZIP_MIN and ctype.startswith(_TEXT)
    gzip = compress and text and accepts_gzip(headers.get("accept-encoding", ""))
    head = {**base, "content-type": ctype, "accept-ranges": "bytes"}
    if gzip:
        return FileBody(path, 0, st.st_size, head=method == "HEAD", gzip=True,
                        headers={**head, "etag": gz_tag, "content-encoding": "gzip"})  # fmt: skip
    return FileBody(path, 0, st.st_size, head=method == "HEAD", headers={**head, "etag": tag})


def _if_range_ok(if_range: str | None, tag: str) -> bool:
    """Without If-Range, or when it names the current (strong) tag; a date is never trusted."""
    return if_range is None or if_range.strip() == tag


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
