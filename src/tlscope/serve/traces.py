"""The traces a server knows: what each one is, where its files are, and its summary.

A trace comes from a local PATH (an output folder, a raw log, a folder of logs, a job's rank
logs) or from a URL inside a configured store (an output folder or a raw log there). Raw logs
become output folders in the cache on first use (`Traces.ready`); remote output folders are
served from the store, byte for byte. Each trace has a stable id (its name and a hash of where
it comes from), so a link to `/traces/<id>/` keeps working across restarts.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import anyio.to_thread
import msgspec

from tlscope.format import layout
from tlscope.format.errors import FormatError, TlscopeError
from tlscope.format.folder import OutputFolder
from tlscope.format.manifest import Manifest
from tlscope.pipeline.classify import InputKind, classify
from tlscope.serve.cache import Cache, input_key
from tlscope.serve.index import EventIndex, parts_of
from tlscope.serve.listing import listing_summary
from tlscope.serve.progress import DECODER as _PROGRESS
from tlscope.serve.stores import RemoteError, Store, StoreRef

Kind = Literal["folder", "log", "remote-folder", "remote-log"]
State = Literal["ready", "pending", "parsing", "failed"]
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_LOG_SUFFIXES = (".log", ".gz", ".txt")
Progress = Callable[["ServedTrace"], None]
_USE_EVERY = 60.0  # seconds between two marks of a cache entry's use


class NotReady(TlscopeError):
    """A trace that cannot be made ready: its parse failed (422), or its store refused or failed
    (the store's status: 403 for an address the SSRF policy refuses, 404, 413, 502, 504)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ServedTrace:
    id: str
    source: str
    kind: Kind
    #: The local output folder (a folder trace's path; a parsed log's cache folder once ready).
    local: Path | None = None
    #: A remote trace's store and key (the folder prefix or the log object).
    remote: StoreRef | None = None
    state: State = "pending"
    #: Bytes read of the log and its size while parsing; ranks done for a job.
    progress: dict[str, int] = field(default_factory=dict)
    #: The ranks of a job whose parse has finished, in the order they finished.
    ranks_finished: list[int] = field(default_factory=list)
    error: str | None = None
    summary: dict[str, Any] | None = None
    index: EventIndex | None = None
    index_task: asyncio.Task[EventIndex] | None = None
    ready_task: asyncio.Task[None] | None = None
    #: When its cache entry was last marked used (monotonic seconds).
    used: float = 0.0

    def url(self) -> str:
        return f"/traces/{self.id}/"

    def describe(self, default_viewer: str, viewer_query: str = "") -> dict[str, Any]:
        """The trace as listed; `viewer_query` is added to its viewer link (`--source-url`)."""
        return {
            "id": self.id,
            "url": self.url(),
            "viewer_url": f"/viewers/{default_viewer}/?trace={quote(self.url(), safe='')}{viewer_query}",
            # A local trace's name only: its absolute path on this machine is nobody else's
            # business (any allowed origin reads this); a store URL is what was configured.
            "source": self.source if "://" in self.source else Path(self.source).name,
            "kind": self.kind,
            "state": self.state,
            "progress": self.progress or None,
            "error": self.error,
            "summary": self.summary,
        }


def make_id(name: str, where: str) -> str:
    """`<name>-<8 hex>`: readable, URL-safe, stable for one source."""
    stem = name
    for suffix in (".gz", ".log", ".txt"):
        stem = stem.removesuffix(suffix)
    slug = _SLUG.sub("-", stem).strip("-.")[:40] or "trace"
    return f"{slug}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


def local_traces(given: Path, *, latest: bool = False) -> list[ServedTrace]:
    """The traces PATH holds: one, or one per log of a folder of unrelated logs (`latest`: its
    newest log only). Raises TlscopeError naming PATH as given (nothing there, no log in it)."""
    found = classify(given, sniff=False)
    if found.kind is InputKind.MISSING:
        raise TlscopeError("no such file or folder", path=given)
    path = given.resolve(strict=True)
    if found.kind is InputKind.OUTPUT_FOLDER:
        return [ServedTrace(make_id(path.name, str(path)), str(path), "folder", local=path, state="ready")]
    if found.kind is InputKind.FOLDER_OF_LOGS:
        logs = [path / p.name for p in found.logs]
        if not logs:  # refused at start: the explorer would only show a failed parse
            raise TlscopeError(f"no log files found in {given} (nor a tlscope output folder)")
        if latest:
            logs = [max(logs, key=lambda p: (p.stat().st_mtime, p.name))]
        if len(logs) > 1 or latest:
            return [ServedTrace(make_id(p.name, str(p)), str(p), "log") for p in logs]
    return [ServedTrace(make_id(path.name, str(path)), str(path), "log")]


def remote_trace(ref: StoreRef) -> ServedTrace:
    name = ref.key.rstrip("/").rsplit("/", 1)[-1] or ref.store.name
    kind: Kind = "remote-log" if ref.key.endswith(_LOG_SUFFIXES) else "remote-folder"
    return ServedTrace(make_id(name, ref.url), ref.url, kind, remote=ref)


class Traces:
    """The registry, and what makes a trace ready (parse, download) exactly once."""

    def __init__(
        self,
        cache: Cache,
        stores: dict[str, Store],
        on_progress: Progress | None = None,
        user_code: tuple[str, ...] = (),
    ) -> None:
        self.cache = cache
        self.stores = stores
        self.by_id: dict[str, ServedTrace] = {}
        self.on_progress = on_progress
        #: --user-code's patterns, given to every parse and part of its cache key.
        self.user_code = user_code

    def add(self, trace: ServedTrace) -> ServedTrace:
        return self.by_id.setdefault(trace.id, trace)

    def add_source(self, source: str, *, latest: bool = False) -> list[ServedTrace]:
        """A PATH or store URL from the command line or config. Raises TlscopeError, OSError or
        RemoteError."""
        if classify(source, sniff=False).kind is InputKind.STORE_URL:
            return [self.add(remote_trace(self.store_ref(source)))]
        return [self.add(t) for t in local_traces(Path(source), latest=latest)]

    def store_ref(self, url: str) -> StoreRef:
        """The configured store holding `url` (the longest prefix: the most specific store, with its
        own limits and networks); RemoteError when none does (no fetch from elsewhere)."""
        refs = [ref for store in self.stores.values() if (ref := store.ref(url)) is not None]
        if not refs:
            raise RemoteError(403, f"{url} is in no configured store")
        return max(refs, key=lambda ref: len(ref.store.prefix))

    @staticmethod
    def is_ready(trace: ServedTrace) -> bool:
        """Whether the trace's files can be served now (a parsed log's folder may have been evicted)."""
        if trace.kind == "folder" or (trace.kind == "remote-folder" and trace.state == "ready"):
            return True
        return trace.state == "ready" and trace.local is not None and trace.local.is_dir()

    def note_use(self, trace: ServedTrace) -> None:
        """Mark a parsed trace's cache entry used (at most once a minute: one utime, not one a request)."""
        now = time.monotonic()
        if trace.local is not None and trace.kind in ("log", "remote-log") and now - trace.used > _USE_EVERY:
            trace.used = now
            self.cache.touch(trace.local.name)

    async def ready(self, trace: ServedTrace) -> None:
        """Make the trace's files servable (parse or download once); raises NotReady."""
        if self.is_ready(trace):
            return
        if trace.ready_task is None or trace.ready_task.done():
            trace.ready_task = asyncio.ensure_future(self._make_ready(trace))
        await asyncio.shield(trace.ready_task)

    def start(self, trace: ServedTrace) -> None:
        """Start making the trace ready without waiting (`GET /api/traces/{id}/status`): a failed
        trace is left failed (a page polling its status must not parse it again and again; the
        next request for one of its files tries again)."""
        if self.is_ready(trace) or trace.state == "failed":
            return
        if trace.ready_task is None or trace.ready_task.done():
            trace.ready_task = asyncio.ensure_future(self._make_ready(trace))
            # Nobody may await it: its failure is in trace.state and trace.error.
            trace.ready_task.add_done_callback(lambda task: task.cancelled() or task.exception())

    async def _make_ready(self, trace: ServedTrace) -> None:
        trace.error = None
        try:
            if trace.kind == "log":
                key = with_user_code(await anyio.to_thread.run_sync(_key_of, Path(trace.source)), self.user_code)
                trace.local = await self.cache.ensure(key, lambda out: self._parse(trace, Path(trace.source), out))
            elif trace.kind == "remote-log":
                assert trace.remote is not None
                trace.local = await self._remote_log(trace, trace.remote)
            elif trace.summary is None:  # a summary is made only of an output folder: checked then
                assert trace.remote is not None
                await trace.remote.store.check_folder(trace.remote)
        except (NotReady, RemoteError, OSError) as err:
            trace.state = "failed"
            trace.error = str(err) if not isinstance(err, OSError) else f"{err.strerror or err}"
            raise NotReady(trace.error, getattr(err, "status", 422)) from None
        trace.state = "ready"
        trace.progress = {}

    async def _parse(self, trace: ServedTrace, src: Path, out: Path) -> None:
        trace.state = "parsing"
        trace.ranks_finished = []
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tlscope.serve.parsejob", str(src), str(out), *self.user_code,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        errors = asyncio.ensure_future(proc.stderr.read())
        try:
            async for raw in proc.stdout:
                self._progress(trace, raw)
            status = await proc.wait()
        except BaseException:
            proc.kill()
            await proc.wait()
            raise
        if status != 0:
            message = (await errors).decode(errors="replace").strip().splitlines()
            raise NotReady(f"parse failed: {message[-1] if message else f'exit status {status}'}")

    def _progress(self, trace: ServedTrace, raw: bytes) -> None:
        """One JSON line of the parse's progress (serve/progress.py); anything else is not progress."""
        try:
            line = _PROGRESS.decode(raw)
        except msgspec.DecodeError:
            return
        if line.ranks_total is not None:
            trace.progress = {"ranks_done": 0, "ranks_total": line.ranks_total}
        elif line.rank_done is not None:
            # Counted per finished rank, each rank once: `last_rank` is the one that just finished.
            done = trace.ranks_finished
            if line.rank_done in done:
                return
            done.append(line.rank_done)
            total = trace.progress.get("ranks_total")
            trace.progress = {"ranks_done": len(done), "last_rank": line.rank_done}
            if total is not None:
                trace.progress["ranks_total"] = total
        elif line.bytes is not None and line.total is not None:
            trace.progress = {"bytes": line.bytes, "total": line.total}
        else:
            return
        if self.on_progress is not None:
            self.on_progress(trace)

    async def _remote_log(self, trace: ServedTrace, ref: StoreRef) -> Path:
        identity = with_user_code(await ref.store.identity(ref.key), self.user_code)
        key = self.cache.alias(identity)
        if key is not None and self.cache.ready(key):
            self.cache.touch(key)
            return self.cache.folder(key)
        trace.state = "parsing"
        name = ref.key.rsplit("/", 1)[-1]
        download = self.cache.temp_path(_SLUG.sub("_", name))
        try:
            await ref.store.download(ref.key, download, lambda done, total: self._got(trace, done, total))
            key = with_user_code(await anyio.to_thread.run_sync(input_key, download), self.user_code)
            self.cache.set_alias(identity, key)
            return await self.cache.ensure(key, lambda out: self._parse(trace, download, out))
        finally:
            download.unlink(missing_ok=True)

    def _got(self, trace: ServedTrace, done: int, total: int) -> None:
        trace.progress = {"downloaded": done, "total": total}
        if self.on_progress is not None:
            self.on_progress(trace)

    async def summary(self, trace: ServedTrace) -> dict[str, Any] | None:
        """The trace's summary once known (folders: read now; logs: after their parse)."""
        if trace.summary is None and trace.local is not None and trace.state == "ready":
            trace.summary = await anyio.to_thread.run_sync(local_summary, trace.local)
        elif trace.summary is None and trace.kind == "remote-folder" and trace.remote is not None:
            trace.summary = await trace.remote.store.summary(trace.remote)
        return trace.summary

    async def index(self, trace: ServedTrace) -> EventIndex:
        """The trace's events index, built once (concurrent callers share the build)."""
        if trace.index is not None:
            return trace.index
        if trace.index_task is None:
            trace.index_task = asyncio.ensure_future(self._build_index(trace))
        try:
            trace.index = await asyncio.shield(trace.index_task)
        except BaseException:
            if trace.index_task.done():
                trace.index_task = None  # a failed build is tried again by the next request
            raise
        return trace.index

    async def _build_index(self, trace: ServedTrace) -> EventIndex:
        folder = trace.local
        if folder is None:
            assert trace.remote is not None
            folder = await self._remote_raw(trace.remote)
        return await anyio.to_thread.run_sync(EventIndex, parts_of(folder))

    async def _remote_raw(self, ref: StoreRef) -> Path:
        """A remote folder's raw.jsonl files (and its manifest or job summary), copied once into the
        cache for its index: the parts the format's reader finds there (as in a local folder)."""
        store = ref.store
        parts = await store.folder(ref).parts()
        job = any(rank is not None for rank, _ in parts)
        head = layout.MULTI_RANK_SUMMARY if job else layout.MANIFEST
        names = [f"{rel}/{layout.RAW}" if rel else layout.RAW for _, rel in parts]
        identity = await store.identity(store.child(ref, head))
        key = "remote-" + hashlib.sha256(identity.encode()).hexdigest()
        return await self.cache.ensure(key, lambda out: _copy_files(store, ref, [head, *names], out, self.cache))


async def _copy_files(store: Store, ref: StoreRef, names: list[str], out: Path, cache: Cache) -> None:
    """Download `names` (relative paths) of a remote folder into `out`, whole or not at all."""
    tmp = cache.temp_path("folder")
    try:
        for name in names:
            dest = tmp.joinpath(*name.split("/"))
            dest.parent.mkdir(parents=True, exist_ok=True)
            await store.download(store.child(ref, name), dest, lambda done, total: None)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def with_user_code(key: str, patterns: tuple[str, ...]) -> str:
    """A parse's cache key (or a remote object's identity) for these --user-code patterns: a parse
    with other patterns attributes breaks elsewhere, so it is another entry. Without patterns the
    key is the input's own (entries made before the patterns existed stay valid)."""
    if not patterns:
        return key
    return hashlib.sha256("\0".join(("user-code", key, *patterns)).encode()).hexdigest()


def _key_of(path: Path) -> str:
    return input_key(path, iter(classify(path, sniff=False).logs) if path.is_dir() else None)


def _manifest(folder: OutputFolder) -> Manifest | None:
    try:
        return folder.manifest()
    except (OSError, FormatError):
        return None


def local_summary(folder: Path) -> dict[str, Any]:
    parts = OutputFolder(folder).parts()
    manifests = [m for _, part in parts if (m := _manifest(part)) is not None]
    ranks = [rank for rank, _ in parts if rank is not None]
    return listing_summary(manifests, ranks, multi_rank=OutputFolder(folder).multi_rank)
