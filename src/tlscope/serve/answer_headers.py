"""What a store's answer says of its object, read from its headers: its body's length, the span a
part holds and the object's total, and the one rule that makes an object's ETag (serve/stores.py,
on every store's answers; docs/SECURITY.md: a store's answers are input like any other).
"""

from __future__ import annotations

import hashlib
from typing import Any

#: A store's ETag longer than this is passed on as its hash (S3's are 32-43 characters, GCS's 16).
ETAG_MAX = 200


def etag_of(tag: Any, modified: Any, size: int) -> str:
    """The ETag of an object by one rule, whichever request told its facts: the store's own tag
    (S3's and a file host's ETag, GCS's etag, md5Hash or generation), else its size and a hash of
    its modification time (a file host's Last-Modified is not used: fsspec's info named it
    otherwise, and the tags clients hold were made without it)."""
    if tag:
        text = str(tag).strip(chr(34))
        if len(text) > ETAG_MAX or not all(" " < c <= "~" and c != chr(34) for c in text):
            # Not an ETag a response can carry (RFC 9110's etagc, as ASCII), or one too long to
            # pass on: named by its hash, the same for the same tag, so validators still hold.
            text = "h-" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return f'"{text}"'
    return f'"{size:x}-{hashlib.sha256(str(modified).encode()).hexdigest()[:16]}"'


def body_length(headers: Any) -> int | None:
    """The body's length, when it is the object's: a Content-Length of bytes not encoded."""
    if headers.get("Content-Encoding", "identity") not in ("identity", ""):
        return None
    length = headers.get("Content-Length")
    return int(length) if length is not None and length.isdigit() else None


def content_range(headers: Any) -> tuple[int, int, int] | None:
    return parse_content_range(headers.get("Content-Range") or "")


def parse_content_range(value: str) -> tuple[int, int, int] | None:
    """(start, stop, total) of a `Content-Range: bytes A-B/N` (stop = B + 1); None for another form."""
    unit, _, rest = value.strip().partition(" ")
    span, _, total = rest.partition("/")
    first, _, last = span.partition("-")
    if unit != "bytes" or not (first.isdigit() and last.isdigit() and total.isdigit()):
        return None
    if not int(first) <= int(last) < int(total):  # a span backwards or past its own total
        return None
    return int(first), int(last) + 1, int(total)


def range_total(headers: Any) -> int | None:
    """N of a `Content-Range: bytes A-B/N` or `bytes */N` (None when absent or `*`)."""
    total = (headers.get("Content-Range") or "").rpartition("/")[2].strip()
    return int(total) if total.isdigit() else None
