"""No request path leaves the folder it names (docs/SECURITY.md, "Server").

A file path in a URL is checked twice: as it was sent (`raw_path`: an encoded `%2e`, `%2f`, `%5c`
or `%00` is refused before anything decodes it), then decoded, segment by segment (no `..`, `.`,
empty segment, backslash, NUL or control character, no absolute path), and at last the resolved
file must still lie inside the folder, so a symlink pointing out is refused too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Encoded characters that no file of a trace folder needs and that spell an escape.
_ENCODED_ESCAPE = re.compile(rb"%(2e|2f|5c|00)", re.IGNORECASE)
_MAX_PATH = 1024


class BadPath(ValueError):
    """A request path that names nothing inside its folder (answered 400 or 404)."""


def check_raw(raw_path: bytes) -> None:
    """Refuse encoded dots, slashes, backslashes and NULs in the path as sent."""
    if _ENCODED_ESCAPE.search(raw_path):
        raise BadPath("encoded '.', '/', '\\' or NUL in the path")


def segments(rel: str) -> list[str]:
    """The segments of a relative path after checking each; raises BadPath."""
    if len(rel) > _MAX_PATH:
        raise BadPath("path too long")
    if rel.startswith("/") or "\\" in rel or any(ord(c) < 32 or c == "\x7f" for c in rel):
        raise BadPath("absolute path, backslash or control character")
    parts = rel.split("/") if rel else []
    if parts and parts[-1] == "":
        parts.pop()  # a trailing slash names the folder itself
    for part in parts:
        if part in ("", ".", ".."):
            raise BadPath(f"segment {part!r} is not allowed")
    return parts


def confine(root: Path, rel: str) -> Path:
    """The file `rel` names inside `root` (index.html for a folder), resolved; raises BadPath.

    `root` is resolved too, so a root that is itself a symlink is fine; what is refused is a
    path whose resolution (following every symlink) is outside it.
    """
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base.joinpath(*segments(rel))))
    if target.is_dir():
        target = Path(os.path.realpath(target / "index.html"))
    if base not in target.parents:
        raise BadPath("the path leaves the folder")
    return target


def join_key(prefix: str, rel: str) -> str:
    """A store key under `prefix` for `rel` (checked like a local path; stores have no symlinks)."""
    parts = segments(rel)
    return prefix.rstrip("/") + ("/" + "/".join(parts) if parts else "")
