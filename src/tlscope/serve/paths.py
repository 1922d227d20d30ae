"""No request path leaves the folder it names (docs/SECURITY.md, "Server").

A file path in a URL is checked twice: as it was sent (`raw_path`: an encoded `%2e`, `%2f`, `%5c`
or `%00` is refused before anything decodes it), then decoded, segment by segment (no `..`, `.`,
empty segment, backslash, NUL or control character, no absolute path), and at last the resolved
file must still lie inside the folder, so a symlink pointing out is refused too.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from pathlib import Path

#: Encoded characters that no file of a trace folder needs and that spell an escape.
_ENCODED_ESCAPE = re.compile(rb"%(2e|2f|5c|00)", re.IGNORECASE)
_MAX_PATH = 1024
#: A backslash or a control character, anywhere in a decoded path.
_FORBIDDEN = re.compile("[\\\\\x00-\x1f\x7f]")


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
    if rel.startswith("/") or _FORBIDDEN.search(rel) is not None:
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
    path whose resolution (following every symlink) is outside it. The root's resolution is
    remembered (a served folder's own path does not move), and below it each segment is looked
    at once (lstat): only a symlink sends the rest through a full `realpath`. A payload's path
    costs two lstat calls where `realpath` of root and file took a dozen, a third of the
    payload route's time (bench/serve.py, issue 24).
    """
    base = _real_root(os.fspath(root))
    target, mode = _resolve_below(base, segments(rel))
    if mode is not None and stat.S_ISDIR(mode):
        target, _ = _resolve_below(target, ["index.html"])
    if not target.startswith(base.rstrip("/") + "/"):
        raise BadPath("the path leaves the folder")
    return Path(target)


@functools.lru_cache(maxsize=1024)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


def _resolve_below(base: str, parts: list[str]) -> tuple[str, int | None]:
    """`base/parts...` resolved (`base` is already), and its mode (None if it does not exist)."""
    path, mode = base, None
    for i, part in enumerate(parts):
        path = f"{path}/{part}"
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return "/".join([path, *parts[i + 1 :]]), None  # nothing there: nothing to follow
        if stat.S_ISLNK(mode):
            real = os.path.realpath("/".join([path, *parts[i + 1 :]]))
            try:
                return real, os.stat(real).st_mode
            except OSError:
                return real, None
    if not parts:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
    return path, mode
