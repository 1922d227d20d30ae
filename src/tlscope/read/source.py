"""Opening a log for one streaming pass: plain or gzip, hashed as it is read.

The SHA-256 and size in manifest.json describe the file on disk (compressed bytes for .gz),
so they are computed on the raw bytes while the reader consumes them: no second read.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

_BUFFER = 1 << 20
#: What a cut-off or corrupt .gz raises part-way (BadGzipFile is an OSError).
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


class _HashingRaw(io.RawIOBase):
    """A raw file that feeds every byte it returns into a SHA-256 (unless `hashed` is False)."""

    def __init__(self, raw: BinaryIO, *, hashed: bool = True) -> None:
        self._raw = raw
        self.sha256 = hashlib.sha256()
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
        self._hashing = _HashingRaw(path.open("rb", buffering=0), hashed=hashed)
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
