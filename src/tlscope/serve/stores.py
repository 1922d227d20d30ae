"""Remote stores: traces in S3-compatible buckets, GCS, or on https:// file hosts, through fsspec.

Only a URL under a configured store's `url` is ever fetched (`Store.ref`): a request cannot make
the server fetch anything else. For https:// (and http://) stores, every request the client
sends, the first and each redirect's, must stay under the store's prefix (same scheme, host,
port, and a path below the prefix's: `Store.inside`), and every connection it opens is checked on
the address it is about to connect to by the one address policy (serve/addresses.py: globally
routable after unwrapping IPv4-in-IPv6 forms, or in the store's `allow_networks`). The check is
on the very socket address, after DNS, so a name that resolves differently the second time (DNS
rebinding) gains nothing: what is checked is what is connected to. s3:// and gs:// stores talk
to their configured endpoint (or the provider's) through their own clients.

Bytes are streamed a chunk at a time (never a whole object in memory); each store has a bounded
number of requests in flight, a timeout on every wait, and a largest object size.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tlscope.format import layout
from tlscope.format.errors import FormatError, TlscopeError
from tlscope.format.folder import StoredOutputFolder
from tlscope.format.manifest import Manifest
from tlscope.serve import gcs, s3
from tlscope.serve.addresses import AddressPolicy, Refused
from tlscope.serve.answer_headers import body_length, content_range, etag_of, parse_content_range, range_total
from tlscope.serve.config import StoreConfig
from tlscope.serve.listing import listing_summary
from tlscope.serve.paths import BadPath, check_raw, segments

CHUNK = 1024 * 1024
#: A file host's answer without a length (chunked, or encoded despite `identity`) is read ahead up
#: to this many bytes to learn its size from its end; a longer one is asked its size (`info`).
READ_AHEAD = 8 * CHUNK
#: A HEAD answered with these: the host does not answer HEAD (a URL signed for GET answers 403).
_HEAD_REFUSED = (403, 405, 501)
_SUMMARY_MAX = 64 * 1024 * 1024  # a manifest bigger than this is not read for a summary


class RemoteError(TlscopeError):
    """A remote request refused or failed, with the HTTP status to answer (`status`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StoreRef:
    """A trace (folder prefix or log object) inside a store: `key` is the fsspec path."""

    store: Store
    key: str
    url: str


@dataclass(frozen=True)
class Info:
    size: int
    etag: str


@dataclass
class Facts:
    """What a store's answer to one GET says: its status (200, 206, or 416 without a body), the
    object's size and ETag (by `Info`'s rule), and the bytes [start, stop) its body holds."""

    status: int = 0
    size: int = 0
    etag: str = ""
    start: int = 0
    stop: int = 0


@dataclass(frozen=True)
class Opened:
    """A store's answer to one GET, its body not read yet (`chunks`; `close` when not wanted)."""

    facts: Facts
    chunks: AsyncGenerator[bytes, None]

    async def close(self) -> None:
        await self.chunks.aclose()


class Store:
    """One configured store (see the module doc); fsspec's filesystem is made on first use."""

    def __init__(self, name: str, config: StoreConfig) -> None:
        self.name = name
        self.config = config
        parts = urlsplit(config.url)
        self.scheme = "gcs" if parts.scheme == "gs" else parts.scheme
        self.http = self.scheme in ("http", "https")
        self.prefix = config.url if config.url.endswith("/") else config.url + "/"
        self.policy = AddressPolicy(config.allow_networks)
        self._fs: Any = None
        self._limit: asyncio.Semaphore | None = None
        #: The filesystem being made, which every request arriving meanwhile awaits (`fs`).
        self._making: asyncio.Future[Any] | None = None
        #: A file host that refused a HEAD: its objects' facts are asked with a one-byte GET.
        self._no_head = False

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.prefix, "kind": self.scheme}

    def ref(self, url: str) -> StoreRef | None:
        """The ref of `url` if it lies under this store's prefix (checked segment by segment)."""
        if not url.startswith(self.prefix):
            return None
        rest = url[len(self.prefix) :]
        if "?" in rest or "#" in rest:
            return None
        try:
            # An encoded '.', '/', '\\' or NUL is refused for object stores too: their keys are
            # taken literally, but a URL that spells an escape is never what a user meant to share.
            check_raw(rest.encode())
            parts = segments(unquote(rest) if self.http else rest)
        except BadPath:
            return None
        if self.http and any(p != unquote(p) or "%" in p for p in rest.split("/")):
            return None  # no double encoding
        return StoreRef(self, self.key_of("/".join(parts)) + ("/" if url.endswith("/") and parts else ""), url)

    def key_of(self, rel: str) -> str:
        """The fsspec path of `rel` under the prefix: the URL for https, `bucket/key` for s3/gs."""
        full = self.prefix + rel
        return full if self.http else full.split("://", 1)[1]

    async def fs(self) -> Any:
        """The store's filesystem, made by the first request; the requests that arrive while it is
        made await that one, so the store has one filesystem (one HTTP session) and one set of
        request slots. (Each made its own before, and the last one's slots replaced the others'
        while theirs were held: a slot taken from one set and given back to the next let a third
        request in past a max_concurrency of 2.)"""
        if self._fs is None:
            if self._making is None:
                self._limit = asyncio.Semaphore(self.config.max_concurrency)
                self._making = asyncio.ensure_future(self._make_fs())
            making = self._making
            try:
                # Shielded: a request cancelled while it waits (its client gone) does not cancel
                # the making the others await.
                fs = await asyncio.shield(making)
            finally:
                failed = making.done() and (making.cancelled() or making.exception() is not None)
                if failed and self._making is making:
                    self._making = None  # a later request tries again
            self._fs = fs
        return self._fs

    async def _make_fs(self) -> Any:
        try:
            import fsspec
        except ImportError:  # pragma: no cover - fsspec is a dependency
            raise RemoteError(501, "fsspec is not installed") from None
        try:
            if self.http:
                fs = fsspec.filesystem("http", asynchronous=True, skip_instance_cache=True, get_client=self._client)
            elif self.scheme == "gcs":
                fs = gcs.filesystem(self._options())
            else:
                fs = fsspec.filesystem(self.scheme, asynchronous=True, skip_instance_cache=True, **self._options())
            for opener in ("set_session", "_set_session"):  # s3fs, http / gcsfs
                if hasattr(fs, opener):
                    await getattr(fs, opener)()
                    break
        except ImportError as err:
            extra = "gcs" if self.scheme == "gcs" else "remote"
            raise RemoteError(501, f"store {self.name}: install tlscope[{extra}] ({err})") from None
        return fs

    def _options(self) -> dict[str, Any]:
        """The backend's storage options: how it says anonymous, the config's options, the endpoint.

        s3fs takes `anon`; gcsfs `token="anon"` (without it, gcsfs tries the default credentials,
        then the metadata server at 169.254.169.254, and only then goes anonymous).
        """
        if self.scheme == "gcs":
            anon: dict[str, Any] = {"token": "anon"} if self.config.anon else {}
        else:
            anon = {"anon": self.config.anon}
        options: dict[str, Any] = {**anon, **self.config.options}
        if self.config.endpoint_url:
            options["endpoint_url"] = self.config.endpoint_url
        return options

    async def _client(self, **kwargs: Any) -> Any:
        import aiohttp

        timeout = aiohttp.ClientTimeout(sock_connect=self.config.timeout, sock_read=self.config.timeout)
        connector = aiohttp.TCPConnector(socket_factory=self.policy.socket_factory, use_dns_cache=False)
        kwargs.pop("loop", None)
        # read_bufsize: aiohttp stops reading the socket past twice this; its 64 KiB default
        # stopped it every 128 KiB of a 1 MiB chunk (memory stays bounded: 2 MiB a stream).
        kwargs.setdefault("read_bufsize", 1 << 20)
        return aiohttp.ClientSession(
            connector=connector, timeout=timeout, trust_env=False, middlewares=(self._kept_inside,), **kwargs
        )

    async def _kept_inside(self, request: Any, handler: Any) -> Any:
        """aiohttp client middleware, run for every request the session sends, each redirect's
        included: a URL outside the store's prefix is refused before it is sent (a store whose
        /traces/x/manifest.json redirects to /private/secret.txt must not serve the secret)."""
        if not self.inside(str(request.url)):
            raise Refused(f"a redirect to {request.url} leaves the store's {self.prefix}: not allowed")
        return await handler(request)

    def inside(self, url: str) -> bool:
        """Whether `url` has the store's scheme, host and port and a path under its prefix (with
        the same segment checks as `ref`; a query is allowed, as a redirect may add one)."""
        want, got = urlsplit(self.prefix), urlsplit(url)
        try:
            same = (got.scheme, got.hostname, _port(got)) == (want.scheme, want.hostname, _port(want))
        except ValueError:
            return False
        if not same or got.username is not None or not got.path.startswith(want.path):
            return False
        rest = got.path[len(want.path) :]
        try:
            check_raw(rest.encode())
            segments(unquote(rest))
        except (BadPath, UnicodeEncodeError):
            return False
        return True

    async def close(self) -> None:
        """Close the HTTP sessions of the filesystem (at server shutdown)."""
        fs, self._fs = self._fs, None
        self._making = None
        # The HTTP filesystem's aiohttp session; s3fs's aiobotocore client (its session has no close).
        for name in ("_session", "_s3"):
            client = getattr(fs, name, None)
            if client is not None and hasattr(client, "close"):
                with contextlib.suppress(Exception):
                    result = client.close()
                    if asyncio.iscoroutine(result):
                        await result

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Any]:
        """The filesystem, with one of the store's concurrent request slots held.

        A request waits for a slot no longer than the store's `timeout` (504 then, as for a store
        that does not answer): slots held by slow transfers must not make the others hang.
        """
        fs = await self.fs()
        limit = self._limit  # the slot is given back to the set it was taken from
        assert limit is not None
        if not await _acquire(limit, self.config.timeout):
            busy = f"all {self.config.max_concurrency} request slots stayed busy for {self.config.timeout:g} s"
            raise RemoteError(504, f"store {self.name}: {busy}")
        try:
            yield fs
        finally:
            limit.release()

    async def _wait(self, what: Any) -> Any:
        """`what` awaited under the store's timeout, its failure as a RemoteError."""
        return await self._mapped(asyncio.wait_for(what, self.config.timeout))

    async def _mapped(self, what: Any) -> Any:
        """`what` awaited, its failure as a RemoteError (for waits whose backend keeps the timeout)."""
        try:
            return await what
        except asyncio.TimeoutError:
            raise RemoteError(504, f"store {self.name}: no answer within {self.config.timeout:g} s") from None
        except (FileNotFoundError, KeyError) as err:
            if _refused(err):
                raise RemoteError(403, f"store {self.name}: {_refused(err)}") from None
            if (failure := _http_failure(err)) is not None:
                raise RemoteError(502, f"store {self.name}: {failure}") from None
            raise RemoteError(404, "not found in the store") from None
        except RemoteError:
            raise
        except Exception as err:  # the backends raise many kinds (botocore, aiohttp, OSError...)
            if _refused(err):
                raise RemoteError(403, f"store {self.name}: {_refused(err)}") from None
            raise RemoteError(502, f"store {self.name}: {type(err).__name__}: {err}") from None

    async def info(self, key: str) -> Info:
        """The object's size and ETag, from one request: a HEAD on a file host (a ranged GET of
        one byte where HEAD is refused), the backend's own metadata call else."""
        async with self.slot() as fs:
            raw = await self._wait(self._http_info(fs, key) if self.http else self._object_info(fs, key))
        size = raw.get("size")
        if raw.get("type") == "directory" or not isinstance(size, int):
            raise RemoteError(404, "not a file in the store")
        tag = raw.get("ETag") or raw.get("etag") or raw.get("md5Hash") or raw.get("generation")
        modified = raw.get("LastModified") or raw.get("mtime") or raw.get("updated") or ""
        return Info(self._checked_size(size), etag_of(tag, modified, size))

    async def _object_info(self, fs: Any, key: str) -> dict[str, Any]:
        """A bucket object's facts from its one metadata request, as s3fs's and gcsfs's `_info`
        give them for a file: S3's HeadObject (s3fs then lists the prefix when it is missing, to
        tell a directory), GCS's object resource (gcsfs lists the prefix beside it, each time)."""
        if self.scheme == "gcs":
            return dict(await fs._get_object(key))
        if self.scheme != "s3":
            return dict(await fs._info(key))
        return await s3.object_facts(fs, key)

    def _checked_size(self, size: int) -> int:
        if size > self.config.max_object_bytes:
            raise RemoteError(413, f"object of {size} bytes is over this store's max_object_bytes")
        return size

    async def _http_info(self, fs: Any, key: str) -> dict[str, Any]:
        """A file host's facts of `key` as fsspec's `_info` gives them (`size`, `ETag`), from a
        HEAD; where the host refuses HEAD (405, 501, or 403 as a URL signed for GET answers it),
        or answers it without a size, from a GET of its first byte (`Range: bytes=0-0`: the total
        is in Content-Range), not fsspec's whole GET whose body is dropped. A refusal is
        remembered: the store's later facts come from that GET at once."""
        session = await fs.set_session()
        if not self._no_head:
            async with session.head(key, headers={"Accept-Encoding": "identity"}, allow_redirects=True) as r:
                if r.status in _HEAD_REFUSED:
                    self._no_head = True
                elif r.status < 500:  # a 5xx is tried again with the GET, as fsspec did
                    _http_status(self.name, r.status)
                    if (size := body_length(r.headers)) is not None:
                        return {"size": size, "ETag": r.headers.get("ETag")}
        headers = {"Accept-Encoding": "identity", "Range": "bytes=0-0"}
        async with session.get(key, headers=headers) as r:
            if r.status == 416 and (total := range_total(r.headers)) is not None:
                return {"size": total, "ETag": r.headers.get("ETag")}
            _http_status(self.name, r.status)
            size = range_total(r.headers) if r.status == 206 else body_length(r.headers)
            if r.status == 206:
                await r.read()  # the one byte: the connection stays reusable
            elif size is None:  # Range ignored, and no length: the body's end tells (as in `open`)
                whole = await self._read_ahead(lambda: self._mapped(r.content.readany()))
                size = None if whole is None else sum(len(c) for c in whole)
            return {"size": size, "ETag": r.headers.get("ETag")}

    async def identity(self, key: str) -> str:
        """What names these bytes (URL, size, ETag), to find a parse of them in the cache."""
        info = await self.info(key)
        return f"{self.name}\0{key}\0{info.size}\0{info.etag}"

    async def open(self, key: str, asked: str | None = None) -> Opened | None:
        """One GET of object `key` (of the range `asked`, a `Range` header's value, when given),
        answered with what it says of the object before its body is read, a request slot held
        until the body is read or closed. The object's size over max_object_bytes is 413 here,
        before any byte is read. None when that one answer cannot tell the size (a file host's
        long answer without a length, a 416 without one, S3's 416): the caller asks `info`.
        gs:// stores answer None (their GET's headers do not carry the ETag `info` gives)."""
        facts = Facts()
        if self.http:
            answer = self._http_answer(key, asked, facts)
        elif self.scheme == "s3":
            answer = self._s3_answer(key, asked, facts)
        else:
            return None
        try:
            await answer.__anext__()  # b"": the facts are in
        except StopAsyncIteration:
            return None
        except BaseException:
            await answer.aclose()
            raise
        return Opened(facts, answer)

    async def _http_answer(self, key: str, asked: str | None, facts: Facts) -> AsyncGenerator[bytes, None]:
        """`open` on a file host: b"" once `facts` are filled, then the body (nothing if no facts)."""
        async with self.slot() as fs:
            session = await fs.set_session()
            headers = {"Accept-Encoding": "identity"}  # the bytes as stored: size and ETag are theirs
            if asked is not None:
                headers["Range"] = asked
            response = await self._wait(session.get(key, headers=headers))
            try:
                content = response.content
                # Not under _wait: the session's own sock_read timeout bounds each read (see _http_get).
                whole = await self._http_facts(response, facts, lambda: self._mapped(content.readany()))
                if not facts.status:
                    return
                yield b""
                if whole is not None:
                    for chunk in whole:
                        yield chunk
                    return
                async for chunk in self._bounded(lambda: self._mapped(content.readany()), 0, None):
                    yield chunk
            finally:
                response.release()

    async def _http_facts(self, response: Any, facts: Facts, read: Callable[[], Any]) -> list[bytes] | None:
        """Fill `facts` from a file host's answer (left empty when it cannot tell the size); the
        whole body when it had to be read ahead to learn its size, None when it is to be streamed."""
        headers, status = response.headers, response.status
        if status == 416:
            if (total := range_total(headers)) is not None:
                self._fill(facts, 416, total, headers.get("ETag"), "", 0, 0)
            return None
        _http_status(self.name, status)
        if status == 206:
            span = content_range(headers)
            if span is not None:
                self._fill(facts, 206, span[2], headers.get("ETag"), "", span[0], span[1])
            return None
        if (size := body_length(headers)) is not None:
            self._fill(facts, 200, size, headers.get("ETag"), "", 0, size)
            return None
        whole = await self._read_ahead(read)
        if whole is not None:
            size = sum(len(c) for c in whole)
            self._fill(facts, 200, size, headers.get("ETag"), "", 0, size)
        return whole

    async def _read_ahead(self, read: Callable[[], Any]) -> list[bytes] | None:
        """An answer without a length read whole, if it ends within READ_AHEAD bytes (None if
        not); one past max_object_bytes is 413 at once, as one with a length would be."""
        whole: list[bytes] = []
        got = 0
        while chunk := await read():
            whole.append(chunk)
            got += len(chunk)
            if got > self.config.max_object_bytes:
                raise RemoteError(413, f"object of over {got} bytes is over this store's max_object_bytes")
            if got > READ_AHEAD:
                return None
        return whole

    def _fill(self, facts: Facts, status: int, size: int, tag: Any, modified: Any, start: int, stop: int) -> None:
        facts.size = self._checked_size(size)
        facts.status, facts.etag, facts.start, facts.stop = status, etag_of(tag, modified, size), start, stop

    async def _s3_answer(self, key: str, asked: str | None, facts: Facts) -> AsyncGenerator[bytes, None]:
        """`open` on S3: one GetObject (s3fs's `open_async` sends the same, after `info`'s HeadObject)."""
        async with self.slot() as fs:
            asking = fs._call_s3("get_object", **s3.object_params(fs, key, asked))
            got = await self._wait(s3.unless_unsatisfiable(asking))
            if got is None:
                return  # 416: its size is not in s3fs's error; `info` asks
            body = got["Body"]
            try:
                span = parse_content_range(got.get("ContentRange") or "")
                modified = got.get("LastModified") or ""
                if s3.is_partial(got):
                    if span is None:  # a part it does not state: its bytes cannot be placed
                        raise RemoteError(502, f"store {self.name}: answered a range it does not state")
                    self._fill(facts, 206, span[2], got.get("ETag"), modified, span[0], span[1])
                else:
                    size = int(got["ContentLength"])
                    self._fill(facts, 200, size, got.get("ETag"), modified, 0, size)
                yield b""
                async for chunk in self._bounded(lambda: self._wait(body.read(CHUNK)), 0, None):
                    yield chunk
            finally:
                await s3.close_body(body)

    async def stream(self, key: str, start: int = 0, stop: int | None = None) -> AsyncIterator[bytes]:
        """Bytes [start, stop) of object `key`, a chunk at a time, with a request slot held."""
        async with self.slot() as fs:
            if self.http:
                chunks = self._http_get(fs, key, start, stop)
            elif self.scheme == "gcs" and (start or stop is not None):
                chunks = self._gcs_range(fs, key, start, stop)
            elif start:  # S3: the one scheme left
                chunks = self._s3_range(fs, key, start, stop)
            else:
                chunks = self._opened(fs, key, stop)
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                await chunks.aclose()  # type: ignore[attr-defined]

    async def _opened(self, fs: Any, key: str, stop: int | None) -> AsyncIterator[bytes]:
        handle = await self._wait(fs.open_async(key, "rb"))
        try:
            async for chunk in self._bounded(lambda: self._wait(handle.read(CHUNK)), 0, stop):
                yield chunk
        finally:
            with contextlib.suppress(Exception):
                await handle.close()

    async def _gcs_range(self, fs: Any, key: str, start: int, stop: int | None) -> AsyncIterator[bytes]:
        """Bytes [start, stop) of a gs:// object from one ranged GET (gcsfs's `_cat_file` sent one
        a MiB), its answer read as a file host's is (`_http_get`): the whole object where the range
        was not honoured (a proxy in between may drop it), skipped; a 206 of another span, 502."""
        handle = await self._wait(fs.open_range(key, start, stop))
        try:
            status, span = await self._wait(handle.answer())
            skip = self._skip_to(start, stop, parse_content_range(span)) if status == 206 else start
            end = None if stop is None else stop - start + skip
            async for chunk in self._bounded(lambda: self._wait(handle.read(CHUNK)), skip, end):
                yield chunk
        finally:
            with contextlib.suppress(Exception):
                await handle.close()

    async def _http_get(self, fs: Any, key: str, start: int, stop: int | None) -> AsyncIterator[bytes]:
        """One GET on the store's own aiohttp session (fsspec's file object would first send a
        HEAD of its own, and read by joining buffered pieces into a new 1 MiB bytes each time).
        A range is asked for with `Range`; a host that ignores it sends the whole body, skipped."""
        session = await fs.set_session()
        headers = {"Accept-Encoding": "identity"}  # the bytes as stored: size and ETag are theirs
        if start or stop is not None:
            headers["Range"] = f"bytes={start}-{'' if stop is None else stop - 1}"
        response = await self._wait(session.get(key, headers=headers))
        try:
            if response.status == 404:
                raise RemoteError(404, "not found in the store")
            if response.status not in (200, 206):
                raise RemoteError(502, f"store {self.name}: HTTP {response.status} from the store")
            skip = self._skip_to(start, stop, content_range(response.headers)) if response.status == 206 else start
            end = None if stop is None else stop - start + skip
            # Not under _wait: the session's own sock_read timeout bounds each read, and
            # asyncio.wait_for's task per piece was a third of the server's Python time per GB.
            content = response.content
            async for chunk in self._bounded(lambda: self._mapped(content.readany()), skip, end):
                yield chunk
        finally:
            response.release()

    def _skip_to(self, start: int, stop: int | None, span: tuple[int, int, int] | None) -> int:
        """Where byte `start` is in the body of a 206 whose Content-Range is `span`: it must hold
        the bytes asked, [start, stop) or [start, the end). A store that answers another span, or
        states none, is failing (502): its bytes would be passed on as other bytes of the file."""
        if span is None or span[0] > start or span[1] < (span[2] if stop is None else stop):
            raise RemoteError(502, f"store {self.name}: answered another range than the one asked")
        return start - span[0]

    async def _bounded(self, read: Callable[[], Any], start: int, stop: int | None) -> AsyncIterator[bytes]:
        """Bytes [start, stop) of what `read` returns piece by piece (b"" at the end), under the
        store's max_object_bytes in all (`read` keeps the timeout and maps the failures)."""
        at, sent = 0, 0
        while stop is None or at < stop:
            chunk = await read()
            if not chunk:
                return
            lo, at = at, at + len(chunk)
            if at <= start:
                continue  # before the range: a host that ignores Range sends it all
            # A slice spanning the whole chunk is the chunk itself (bytes are not copied then).
            piece = chunk[max(0, start - lo) : None if stop is None else stop - lo]
            sent += len(piece)
            if sent > self.config.max_object_bytes:
                raise RemoteError(413, "object grew over this store's max_object_bytes")
            yield piece

    async def _s3_range(self, fs: Any, key: str, start: int, stop: int | None) -> AsyncIterator[bytes]:
        """Bytes [start, stop) of an S3 object from one ranged GetObject (s3fs's `_cat_file` sent
        one a MiB, after an `info` of its own), its answer read as a file host's is (`_http_get`):
        the whole object where the range was not honoured, skipped; a 206 of another span, 502."""
        asked = f"bytes={start}-{'' if stop is None else stop - 1}"
        got = await self._wait(fs._call_s3("get_object", **s3.object_params(fs, key, asked)))
        body = got["Body"]
        try:
            span = parse_content_range(got.get("ContentRange") or "")
            skip = self._skip_to(start, stop, span) if s3.is_partial(got) else start
            end = None if stop is None else stop - start + skip
            async for chunk in self._bounded(lambda: self._wait(body.read(CHUNK)), skip, end):
                yield chunk
        finally:
            await s3.close_body(body)

    async def read_small(self, key: str, limit: int = _SUMMARY_MAX) -> bytes:
        data = bytearray()
        async for chunk in self.stream(key):
            data += chunk
            if len(data) > limit:
                raise RemoteError(413, f"{key} is too big to read whole")
        return bytes(data)

    async def download(self, key: str, dest: Path, progress: Callable[[int, int], None]) -> None:
        """Copy object `key` to the local file `dest`, streamed, with progress (bytes, size): one
        GET where its answer tells the size, else `info` then the GET."""
        opened = await self.open(key)
        chunks: AsyncIterator[bytes]
        if opened is not None:
            size, chunks = opened.facts.size, opened.chunks
        else:
            size, chunks = (await self.info(key)).size, self.stream(key)
        done = 0
        try:
            with dest.open("wb") as out:
                async for chunk in chunks:
                    out.write(chunk)
                    done += len(chunk)
                    progress(done, size)
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    def folder(self, ref: StoreRef, *, reading: bool = False) -> StoredOutputFolder:
        """The output folder at `ref`, read by the format's reader over this store's files
        (`reading`: its markers are to be read, so whether they are there is asked by reading them)."""
        return StoredOutputFolder(StoreFiles(self, ref, reading=reading), ref.url)

    async def check_folder(self, ref: StoreRef) -> None:
        """Raise RemoteError unless `ref` is an output folder (the format's rule: layout.py)."""
        if not await self.folder(ref).is_output_folder():
            raise RemoteError(404, f"{ref.url} holds no {' or '.join(layout.MARKERS)}")

    def child(self, ref: StoreRef, rel: str) -> str:
        return ref.key.rstrip("/") + "/" + "/".join(segments(rel))

    async def summary(self, ref: StoreRef) -> dict[str, Any] | None:
        """A remote folder's summary from its manifest, or from each rank's (a job's folder), with
        the ranks the format's reader finds there as it finds a local folder's; None when the folder
        is none or the store fails (a listing never fails for one trace)."""
        folder = self.folder(ref, reading=True)  # the marker found is read next
        try:
            if not await folder.is_output_folder():
                return None
            parts = await folder.parts()
            manifests = await asyncio.gather(*(_manifest(folder, rel) for _, rel in parts))
            job = await folder.multi_rank()
        except RemoteError:
            return None
        ranks = [r for r, _ in parts if r is not None]
        return listing_summary([m for m in manifests if m is not None], ranks, multi_rank=job)


class StoreFiles:
    """The files of one folder of a store, for the format's layout rules (format/layout.py).

    What a rule asked is remembered (a rule asks for manifest.json twice: is it an output folder,
    is it a job's). A store is not listed (an https:// host cannot be): a job there is found by its
    multi_rank_summary.json, as every job tlscope writes has one. A read that found nothing
    answers `is_file` too, and a file known absent is not asked for again. When `reading` (a
    summary: the rules read the marker they find next), whether a folder's marker (manifest.json,
    multi_rank_summary.json) is there is asked by reading it: one GET, not a HEAD then a GET. (A
    readiness check, which reads nothing, asks with HEADs: no body to wait for.)
    """

    def __init__(self, store: Store, ref: StoreRef, *, reading: bool = False) -> None:
        self.store = store
        self.ref = ref
        self.reading = reading
        self._known: dict[str, bool] = {}
        self._read: dict[str, bytes | None] = {}

    async def is_file(self, rel: str) -> bool:
        if rel not in self._known:
            if self.reading and rel in layout.MARKERS:
                try:
                    self._read[rel] = await self._fetch(rel)
                except RemoteError as err:
                    if err.status != 413:  # too big to read whole is there all the same
                        raise
                    self._known[rel] = True
                return self._known[rel]
            try:
                await self.store.info(self.store.child(self.ref, rel))
                self._known[rel] = True
            except RemoteError as err:
                if err.status != 404:
                    raise
                self._known[rel] = False
        return self._known[rel]

    async def read(self, rel: str) -> bytes | None:
        if rel in self._read:
            return self._read.pop(rel)  # kept by is_file for the one read that follows it
        if self._known.get(rel) is False:
            return None
        return await self._fetch(rel)

    async def _fetch(self, rel: str) -> bytes | None:
        try:
            data: bytes | None = await self.store.read_small(self.store.child(self.ref, rel))
        except RemoteError as err:
            if err.status != 404:
                raise
            data = None
        self._known[rel] = data is not None
        return data

    async def subfolders(self) -> list[str]:
        return []


async def _manifest(folder: StoredOutputFolder, part: str) -> Manifest | None:
    """A part's typed manifest, None when absent, refused, too big or not a manifest.

    A store that failed to answer (5xx: its error, no answer in time) raises instead: the summary
    is kept once made, and one made without that part would list the trace with its events
    missing (0 for a single log) for as long as the server runs. Unmade, it is tried again when
    the trace is next listed.
    """
    try:
        return await folder.manifest(part)
    except FormatError:
        return None
    except RemoteError as err:
        if err.status >= 500:
            raise
        return None


def _port(parts: Any) -> int | None:
    """The URL's port, the scheme's default when none is written (ValueError if it is no port)."""
    port: int | None = parts.port
    return port if port is not None else {"http": 80, "https": 443}.get(parts.scheme)


async def _acquire(limit: asyncio.Semaphore, timeout: float) -> bool:
    """Take a slot of `limit` within `timeout` seconds; False if none freed in time.

    Not asyncio.wait_for: on Python < 3.12 it can drop an acquire that completed just as the
    timeout fired, and the slot would be lost for good. Here a cancelled acquire gives its slot
    back (asyncio.Semaphore does), and one that completed anyway is kept and used.
    """
    task = asyncio.ensure_future(limit.acquire())
    try:
        await asyncio.wait({task}, timeout=timeout)
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
    except BaseException:  # this request was cancelled (client gone): give back a slot taken meanwhile
        task.cancel()
        task.add_done_callback(lambda t: None if t.cancelled() else limit.release())
        raise
    return not task.cancelled()


def _http_failure(err: BaseException) -> str | None:
    """What failed, when a FileNotFoundError stands for a store that did not answer rather than
    an object that is not there: fsspec's HTTP filesystem raises one for any failed HEAD-then-GET
    (a 503, a refused connection), and a 404 for those would say "not found" (and a folder "holds
    no manifest.json") while the store was down for a moment. None for a 4xx: absent as far as
    this store can tell (an S3 bucket read over https without the right to list it answers 403 for
    a missing key, and the format's layout rules ask for files that may be missing), and for the
    other backends' own FileNotFoundError (no HTTP cause)."""
    try:
        import aiohttp
    except ImportError:  # no HTTP backend installed: the error is the backend's own
        return None
    cause = err.__cause__
    if isinstance(cause, aiohttp.ClientResponseError):
        return None if cause.status < 500 else f"HTTP {cause.status} from the store"
    if isinstance(cause, (aiohttp.ClientError, asyncio.TimeoutError)):
        return f"{type(cause).__name__}: {cause}"
    return None


def _refused(err: BaseException | None) -> str | None:
    """The message of a Refused anywhere in the exception's causes (aiohttp and fsspec wrap it)."""
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, Refused):
            return str(err)
        inner = getattr(err, "os_error", None)
        if isinstance(inner, Refused):
            return str(inner)
        err = err.__cause__ or err.__context__
        seen += 1
    return None


def _http_status(name: str, status: int) -> None:
    """Raise the RemoteError a file host's error status stands for (as `info` did through fsspec:
    any 4xx is absent as far as the store can tell, a 5xx is the store failing)."""
    if status in (200, 206):
        return
    if 400 <= status < 500:
        raise RemoteError(404, "not found in the store")
    raise RemoteError(502, f"store {name}: HTTP {status} from the store")
