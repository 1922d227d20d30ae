"""Opening a log for one streaming pass: plain or gzip, hashed as it is read.

The SHA-256 and size in manifest.json describe the file on disk (compressed bytes for .gz),
so they are computed on the raw bytes while the reader consumes them: no second read. For a
big file the hash is a thread's, handed each chunk read (hashlib does not hold the GIL while
it hashes), so it runs on another core beside the pass: ~0.6 s of a 1 GB log's main pass.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import queue
import threading
import zlib
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

_BUFFER = 1 << 20
#: Files at least this big are hashed by a thread (`_ThreadedHash`); a small log's whole hash
#: costs less than starting one.
_THREADED_HASH = 16 << 20
#: What a cut-off or corrupt .gz raises part-way (BadGzipFile is an OSError).
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


class _ThreadedHash:
    """A SHA-256 updated by a thread, in the order the chunks are given.

    Each chunk is copied into one of a few buffers of this object's (the caller's buffer is
    reused for the next read) and handed over; the thread gives the buffer back once hashed. A
    fresh `bytes` per chunk instead grew the peak RSS by ~8 MB (malloc kept the freed chunks).
    The buffers also bound how far the thread may lag (it hashes ~1.6 GB/s, the pass reads ~50).
    """

    def __init__(self, buffers: int = 2) -> None:
        self._sha256 = hashlib.sha256()
        self._free: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
        for _ in range(buffers):
            self._free.put(bytearray(_BUFFER))
        self._full: queue.SimpleQueue[tuple[bytearray, int] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._hash, name="tlscope-sha256", daemon=True)
        self._ended = False
        self._thread.start()

    def _hash(self) -> None:
        while (item := self._full.get()) is not None:
            buffer, size = item
            self._sha256.update(memoryview(buffer)[:size])
            self._free.put(buffer)

    def update(self, data: memoryview) -> None:
        for start in range(0, len(data), _BUFFER):
            piece = data[start : start + _BUFFER]
            buffer = self._free.get()
            memoryview(buffer)[: len(piece)] = piece
            self._full.put((buffer, len(piece)))

    def hexdigest(self) -> str:
        self._end()
        self._thread.join()
        return self._sha256.hexdigest()

    def stop(self) -> None:
        """The pass ended early: let the thread go (it holds nothing but its buffers)."""
        self._end()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._full.put(None)


class _HashingRaw(io.RawIOBase):
    """A raw file that feeds every byte it returns into a SHA-256 (unless `hashed` is False)."""

    def __init__(self, raw: BinaryIO, size: int, *, hashed: bool = True) -> None:
        self._raw = raw
        threaded = hashed and size >= _THREADED_HASH
        self.sha256: _ThreadedHash | hashlib._Hash = _ThreadedHash() if threaded else hashlib.sha256()
        self.hashed = hashed
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            if self.hashed:
                self.sha256.update(buffer[:n])
            self.bytes_read += n
        return int(n or 0)

    def close(self) -> None:
        if isinstance(self.sha256, _ThreadedHash):
            self.sha256.stop()
        self._raw.close()
        super().close()


class _TolerantGzip(io.RawIOBase):
    """Decompressed bytes of a .gz that end quietly where the file is cut off or corrupt.

    A copied-while-written or damaged .gz is common; everything decompressed before the damage
    is still returned (the last line then looks cut off), and `error` says what went wrong.
    """

    def __init__(self, gz: gzip.GzipFile) -> None:
        self._gz = gz
        self.error: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.error is not None:
            return 0
        try:
            data = self._gz.read1(len(buffer))
        except _GZIP_ERRORS as err:
            self.error = f"{type(err).__name__}: {err}"
            return 0
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._gz.close()
        super().close()


def is_gzip(path: Path) -> bool:
    """Gzip by magic number, not by name: shared logs get renamed."""
    with path.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


class LogSource:
    """A log file opened for one pass: `stream` yields decompressed bytes. `hashed=False` for a
    look at its head (the muxed-log sniff), whose hash nobody reads: no `sha256` then."""

    def __init__(self, path: Path, *, hashed: bool = True) -> None:
        self.path = path
        self.size = path.stat().st_size
        self.compressed = is_gzip(path)
        self._hashing = _HashingRaw(path.open("rb", buffering=0), self.size, hashed=hashed)
        buffered = io.BufferedReader(self._hashing, buffer_size=_BUFFER)
        self.stream: BinaryIO
        self._gzip: _TolerantGzip | None = None
        if self.compressed:
            # GzipFile over the hashing reader; BufferedReader on top for fast readline.
            self._gzip = _TolerantGzip(gzip.GzipFile(fileobj=buffered, mode="rb"))
            self.stream = io.BufferedReader(self._gzip, buffer_size=_BUFFER)
        else:
            self.stream = buffered

    @property
    def corrupt(self) -> str | None:
        """Why a .gz input stopped early (cut off or corrupt), None when it was read whole."""
        return None if self._gzip is None else self._gzip.error

    @property
    def bytes_read(self) -> int:
        """Bytes of the file on disk consumed so far (for progress bars)."""
        return self._hashing.bytes_read

    def sha256(self) -> str:
        """Hex SHA-256 of the whole file; reads whatever the pass left unread."""
        if not self._hashing.hashed:
            raise ValueError("this LogSource was opened with hashed=False")
        while self._hashing.read(_BUFFER):
            pass
        return self._hashing.sha256.hexdigest()

    def close(self) -> None:
        self.stream.close()
        self._hashing.close()

    def __enter__(self) -> LogSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
