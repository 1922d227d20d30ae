"""gs:// stores: gcsfs's JSON-API client, with the streamed reads the server's stores need.

Two things in gcsfs do not fit a server that streams objects through:

- gcsfs (2025.x and later) registers an "extended" filesystem for `gs://` that, before an
  operation, asks Google's gRPC storage-control API for the bucket's layout (zonal or
  hierarchical). A store with its own `endpoint_url` (an emulator, a GCS-compatible service)
  serves no such API: each call then waits out gcsfs's 60 s retries before it falls back, and the
  answer "unknown" is never cached, so every request would. The JSON-API client below is what that
  fallback uses anyway; the server only reads objects, which it does for every bucket type.
- gcsfs has no `open_async` (fsspec's default raises NotImplementedError), so `Store.stream`
  could not read a whole object a chunk at a time. `open_async` below issues one GET for the
  object's media and hands its body out as it arrives: never the whole object in memory;
  `open_range` the same with `Range` (gcsfs's `_cat_file` reads a range a MiB a GET).

gcsfs is imported only when a gs:// store is first used (the `gcs` extra).
"""

from __future__ import annotations

import importlib
from typing import Any


class StreamedObject:
    """An object's body as an async file: `read(n)` gives the next bytes (b"" at the end)."""

    def __init__(self, fs: Any, path: str, start: int = 0, stop: int | None = None) -> None:
        self.fs = fs
        self.path = path
        #: The bytes [start, stop) asked with `Range` (the whole object when 0, None).
        self.span = (start, stop)
        self._response: Any = None

    async def _open(self) -> None:
        fs = self.fs
        await fs._set_session()
        # gcsfs's own headers (credentials, refreshed when due) and parameters (requester pays).
        headers = fs._get_headers(None)
        start, stop = self.span
        if start or stop is not None:
            headers["Range"] = f"bytes={start}-{'' if stop is None else stop - 1}"
        response = await fs.session.get(fs.url(self.path), headers=headers, params=fs._get_params({}))
        if response.status >= 400:
            # gcsfs's own mapping of an error answer: FileNotFoundError for 404, its HttpError else.
            content = await response.read()
            response.release()
            importlib.import_module("gcsfs.retry").validate_response(response.status, content, self.path)
        self._response = response

    async def answer(self) -> tuple[int, str]:
        """The store's answer to the GET, sent now if not yet: its status (200 where a range asked
        was not honoured, 206 where it was) and its Content-Range ("" without one)."""
        if self._response is None:
            await self._open()
        return self._response.status, self._response.headers.get("Content-Range", "")

    async def read(self, length: int = -1) -> bytes:
        if self._response is None:
            await self._open()
        data: bytes = await self._response.content.read(length)
        return data

    async def close(self) -> None:
        response, self._response = self._response, None
        if response is None:
            return
        if response.content.at_eof():
            response.release()  # the connection goes back to the pool
        else:
            response.close()  # a body left unread: the connection cannot be reused


def filesystem(options: dict[str, Any]) -> Any:
    """A gcsfs JSON-API filesystem (asynchronous) with `open_async`; `options` are gcsfs's."""
    base: Any = importlib.import_module("gcsfs.core").GCSFileSystem

    class StreamingGCSFileSystem(base):  # type: ignore[misc]
        async def open_async(self, path: str, mode: str = "rb", **kwargs: Any) -> StreamedObject:
            if mode != "rb" or kwargs:
                raise ValueError("gs:// stores are read whole, in binary mode")
            return StreamedObject(self, self._strip_protocol(path))

        async def open_range(self, path: str, start: int, stop: int | None) -> StreamedObject:
            """Bytes [start, stop) of the object, from one ranged GET of its media."""
            return StreamedObject(self, self._strip_protocol(path), start, stop)

    return StreamingGCSFileSystem(asynchronous=True, skip_instance_cache=True, **options)
