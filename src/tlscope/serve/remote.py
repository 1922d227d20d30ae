"""Files of a remote output folder, passed through: the same validators, ranges and gzip as local files.

The store's ETag (an object's MD5 on S3, its generation on GCS, the file host's ETag) is the
response's; `If-None-Match` is answered 304 from the store's metadata alone; `Range` is served
by a ranged read (on a file host, a GET with `Range`, skipping only if the host ignores it); the
body is streamed from the
store as it arrives (the first chunk is read before the status is sent, so a store that fails at
once gets its proper status, not a cut-off 200).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from starlette.responses import Response, StreamingResponse

from tlscope.serve.files import IMMUTABLE, REVALIDATE, accepts_gzip, content_type, gzipped, matches, parse_range
from tlscope.serve.paths import segments
from tlscope.serve.security import TRACE_HTML_CSP
from tlscope.serve.stores import RemoteError, StoreRef

_TEXT = ("text/", "application/json", "application/x-ndjson", "image/svg+xml")


async def file_response(
    ref: StoreRef, rel: str, headers: Mapping[str, str], *, method: str, compress: bool = True
) -> Response:
    """The answer for file `rel` of remote folder `ref` (a folder's index.html for a folder path);
    gzip-encoded where the client accepts it and `compress` allows it."""
    parts = segments(rel)
    if not parts or rel.endswith("/"):
        parts.append("index.html")
    name = "/".join(parts)
    store = ref.store
    key = store.child(ref, name)
    info = await store.info(key)
    payload = len(parts) == 2 and parts[0] == "payloads"
    base = {"cache-control": IMMUTABLE if payload else REVALIDATE, "vary": "Accept-Encoding"}
    if name.endswith(".html"):
        base["content-security-policy"] = TRACE_HTML_CSP
    gz_tag = info.etag[:-1] + '-gz"'
    inm = headers.get("if-none-match")
    if inm is not None and matches(inm, (info.etag, gz_tag)):
        return Response(status_code=304, headers={**base, "etag": gz_tag if matches(inm, (gz_tag,)) else info.etag})
    ctype = content_type(parts[-1])
    head = {**base, "content-type": ctype, "accept-ranges": "bytes"}
    wanted = headers.get("range")
    if wanted is not None and headers.get("if-range") in (None, info.etag):
        span = parse_range(wanted, info.size)
        if span is False:
            return Response(status_code=416, headers={**base, "content-range": f"bytes */{info.size}"})
        if isinstance(span, tuple):
            start, end = span
            head.update({"etag": info.etag, "content-range": f"bytes {start}-{end}/{info.size}"})
            head["content-length"] = str(end + 1 - start)
            return await _streamed(store.stream(key, start, end + 1), 206, head, method)
    if compress and ctype.startswith(_TEXT) and info.size >= 1024 and accepts_gzip(headers.get("accept-encoding", "")):
        head.update({"etag": gz_tag, "content-encoding": "gzip"})
        return await _streamed(gzipped(store.stream(key)), 200, head, method)
    head.update({"etag": info.etag, "content-length": str(info.size)})
    return await _streamed(store.stream(key), 200, head, method)


async def _streamed(chunks: AsyncIterator[bytes], status: int, headers: dict[str, str], method: str) -> Response:
    if method == "HEAD":
        await chunks.aclose()  # type: ignore[attr-defined]
        return Response(status_code=status, headers=headers)
    try:
        first = await chunks.__anext__()
    except StopAsyncIteration:
        first = b""
    except RemoteError:
        await chunks.aclose()  # type: ignore[attr-defined]
        raise

    async def body() -> AsyncIterator[bytes]:
        try:
            yield first
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    return StreamingResponse(body(), status_code=status, headers=headers)
