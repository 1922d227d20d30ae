"""The cache folder: raw logs parsed once, keyed by the SHA-256 of their bytes, bounded in size.

Layout: `<root>/<key>/` is an output folder (tlscope's format and report), `<root>/<key>.json`
says which tlscope version wrote it and its size in bytes (its modification time is the last
use), `<root>/<key>.lock` serialises producers across processes (several servers, or uvicorn
workers, sharing one cache), `<root>/alias/` maps a remote object's identity to the key of its
bytes, and `<root>/tmp/` holds downloads in progress.

* **One parse per key.** In a process, concurrent `ensure` calls for one key await the same
  task; across processes, the second waits on the first's lock and then finds the folder there.
* **Bounded.** After each new entry, least recently used entries are removed (whole folders)
  until the total is under the bound; entries being made (here or, by their lock, in another
  process) are kept. Use is the entry's `.json` modification time, touched as traces are served
  (`Traces.note_use`). A served trace whose folder was removed is parsed again on its next
  request (same key, same folder path); a file being sent from it is unaffected (its open
  descriptor keeps the bytes).
* A failed parse leaves no folder (the parse writes a temporary sibling and renames it).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread

from tlscope import __version__
from tlscope.format.json_boundary import JsonError
from tlscope.format.json_boundary import decode as decode_json

_HASH_BLOCK = 1024 * 1024


class Cache:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._flights: dict[str, asyncio.Task[Path]] = {}
        for sub in ("alias", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)

    def folder(self, key: str) -> Path:
        return self.root / key

    def ready(self, key: str) -> bool:
        meta = _meta(self.root / f"{key}.json")
        return meta.get("tlscope") == __version__ and self.folder(key).is_dir()

    def touch(self, key: str) -> None:
        with contextlib.suppress(OSError):
            os.utime(self.root / f"{key}.json")

    async def ensure(self, key: str, produce: Callable[[Path], Awaitable[None]]) -> Path:
        """The folder of `key`, made by `produce(folder)` once if it is not there yet."""
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(self._produce(key, produce))
            self._flights[key] = flight
            flight.add_done_callback(lambda _: self._flights.pop(key, None))
        return await asyncio.shield(flight)

    async def _produce(self, key: str, produce: Callable[[Path], Awaitable[None]]) -> Path:
        if self.ready(key):
            self.touch(key)
            return self.folder(key)
        lock = await anyio.to_thread.run_sync(self._lock, key)
        try:
            if not self.ready(key):
                await produce(self.folder(key))
                size = await anyio.to_thread.run_sync(tree_size, self.folder(key))
                meta = {"tlscope": __version__, "bytes": size, "made": time.time()}
                (self.root / f"{key}.json").write_text(json.dumps(meta))
        finally:
            os.close(lock)
        await anyio.to_thread.run_sync(self.evict, {key})
        return self.folder(key)

    def _lock(self, key: str) -> int:
        fd = os.open(self.root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
        return fd

    def evict(self, keep: set[str]) -> list[str]:
        """Remove least recently used entries until the cache fits its bound; return their keys."""
        entries = []
        for meta in self.root.glob("*.json"):
            with contextlib.suppress(OSError):
                size = _meta(meta).get("bytes")
                entries.append((meta.stat().st_mtime, meta.stem, size if type(size) is int else 0))
        total = sum(e[2] for e in entries)
        removed = []
        for _, key, size in sorted(entries):
            if total <= self.max_bytes:
                break
            if key in keep or key in self._flights or not self._remove(key):
                continue
            total -= size
            removed.append(key)
        return removed

    def _remove(self, key: str) -> bool:
        fd = os.open(self.root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False  # another process is making or using it
        try:
            (self.root / f"{key}.json").unlink(missing_ok=True)
            shutil.rmtree(self.folder(key), ignore_errors=True)
        finally:
            os.close(fd)
        return True

    def alias(self, identity: str) -> str | None:
        with contextlib.suppress(OSError):
            return (self.root / "alias" / _digest(identity)).read_text().strip() or None
        return None

    def set_alias(self, identity: str, key: str) -> None:
        (self.root / "alias" / _digest(identity)).write_text(key)

    def temp_path(self, name: str) -> Path:
        return self.root / "tmp" / f"{os.getpid()}-{time.monotonic_ns()}-{name}"


def _meta(path: Path) -> dict[str, Any]:
    """An entry's `.json` (empty when unreadable: then the entry is not ready)."""
    try:
        meta = decode_json(path.read_bytes())
    except (OSError, JsonError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def tree_size(folder: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def input_key(path: Path, logs: Iterator[Path] | None = None) -> str:
    """The SHA-256 of a log's bytes; for a folder, of each log's name and SHA-256 in name order."""
    if path.is_file():
        return file_sha256(path)
    digest = hashlib.sha256()
    for log in sorted(logs if logs is not None else (p for p in path.iterdir() if p.is_file())):
        digest.update(f"{log.relative_to(path).as_posix()}\0{file_sha256(log)}\n".encode())
    return digest.hexdigest()
