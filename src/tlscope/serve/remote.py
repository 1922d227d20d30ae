"""Files of a remote output folder, passed through: the same validators, ranges and gzip as local files
(one rule, serve/files.py `plan_response`; only the bytes come from elsewhere).

The store's ETag (an object's MD5 on S3, its generation on GCS, the file host's ETag) is the
response's. A GET costs the store one GET (`Store.open`), whose answer's headers give the facts the
plan needs (size, ETag, the 413 of an object too big) before its body is read; a `Range` is asked
of the store as the client asked it (a host that ignores it sends the whole body, skipped). An
`If-None-Match` is answered 304 from the store's metadata alone (`Store.info`: one HEAD). The body
is streamed from the store as it arrives (the first chunk is read before the status is sent, so a
store that fails at once gets its proper status, not a cut-off 200). docs/SERVER.md ("What a
remote file costs the store") has the requests per file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from starlette.responses import Response, StreamingResponse

from tlscope.serve.files import gzipped, is_payload_name, parse_range, plan_response
from tlscope.serve.paths import segments
from tlscope.serve.stores import Opened, RemoteError, Store, StoreRef


async def file_response(
    ref: StoreRef,
    rel: str,
    headers: Mapping[str, str],
    *,
    method: str,
    html_csp: str | None = None,
    compress: bool = True,
) -> Response:
    """The answer for file `rel` of remote folder `ref` (a folder's index.html for a folder path):
    files.plan_response's rule, the bytes from the store.

    A GET is answered from one GET to the store (`Store.open`: ranged when the client asked a
    range), planned from what that answer says of the object; a HEAD or a conditional GET from
    the object's facts alone (`Store.info`: one HEAD), as most such answers need no body."""
    parts = segments(rel)
    if not parts or rel.endswith("/"):
        parts.append("index.html")
    store = ref.store
    key = store.child(ref, "/".join(parts))
    opened = None
    if method == "GET" and "if-none-match" not in headers:
        opened = await store.open(key, asked_range(headers.get("range")))
    info = opened.facts if opened is not None else await store.info(key)
    plan = plan_response(
        name=parts[-1], size=info.size, etag=info.etag, immutable=is_payload_name(parts), headers=headers,
        method=method, html_csp=html_csp, compress=compress,
    )  # fmt: skip
    if plan.status in (304, 416):
        if opened is not None:
            await opened.close()
        return Response(status_code=plan.status, headers=plan.headers)
    if opened is not None:
        chunks = _answered(store, key, opened, plan.start, plan.stop)
    else:
        chunks = store.stream(key, plan.start, plan.stop) if plan.status == 206 else store.stream(key)
    return await _streamed(gzipped(chunks) if plan.gzip else chunks, plan.status, plan.headers, method)


def asked_range(header: str | None) -> str | None:
    """The client's `Range` to ask the store for as it is, when it is one range this server
    would honour (files.parse_range's forms); None to ask for the whole object."""
    if header is None:
        return None
    spec = header.strip().replace(" ", "")
    if not spec.isascii():  # sent on as a header: ASCII digits only (str.isdigit takes others)
        return None
    for size in (1, 1 << 62):  # a form valid for every size is either satisfiable or not: never ignored
        if parse_range(spec, size) is None:
            return None
    return spec


def _answered(store: Store, key: str, opened: Opened, start: int, stop: int) -> AsyncIterator[bytes]:
    """Bytes [start, stop) of the object from the store's answer when its body holds them (a
    host that ignored Range sent more: skipped), else from another GET (the plan wanted other
    bytes than were asked: an If-Range that does not match)."""
    facts = opened.facts
    if facts.status != 416 and facts.start <= start and stop <= facts.stop:
        return _window(opened, start - facts.start, stop - facts.start)

    async def again() -> AsyncIterator[bytes]:
        await opened.close()
        async for chunk in store.stream(key, start, stop):
            yield chunk

    return again()


async def _window(opened: Opened, skip: int, end: int) -> AsyncIterator[bytes]:
    """Bytes [skip, end) of `opened`'s body, closed when done or abandoned."""
    at = 0
    try:
        async for chunk in opened.chunks:
            lo, at = at, at + len(chunk)
            if at <= skip:
                continue
            yield chunk if lo >= skip and at <= end else chunk[max(0, skip - lo) : end - lo]
            if at >= end:
                return
    finally:
        await opened.close()


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
