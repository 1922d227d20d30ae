"""Files of a remote output folder, passed through: the same validators, ranges and gzip as local files
(one rule, serve/files.py `plan_response`; only the bytes come from elsewhere).

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

from tlscope.serve.files import gzipped, is_payload_name, plan_response
from tlscope.serve.paths import segments
from tlscope.serve.stores import RemoteError, StoreRef


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
    files.plan_response's rule, the bytes from the store."""
    parts = segments(rel)
    if not parts or rel.endswith("/"):
        parts.append("index.html")
    store = ref.store
    key = store.child(ref, "/".join(parts))
    info = await store.info(key)
    plan = plan_response(
        name=parts[-1], size=info.size, etag=info.etag, immutable=is_payload_name(parts), headers=headers,
        method=method, html_csp=html_csp, compress=compress,
    )  # fmt: skip
    if plan.status in (304, 416):
        return Response(status_code=plan.status, headers=plan.headers)
    chunks = store.stream(key, plan.start, plan.stop) if plan.status == 206 else store.stream(key)
    return await _streamed(gzipped(chunks) if plan.gzip else chunks, plan.status, plan.headers, method)


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
