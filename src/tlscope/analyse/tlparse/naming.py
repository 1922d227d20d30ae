"""tlparse's file naming: `_N` suffixes, cache marks, eval_with_key links, short file names.

These are the rules people's shared links depend on, so they follow tlparse 0.4.3 exactly
(reference §3.0, §3.9, §5), with one difference: log-derived names are made path-safe first.
"""

from __future__ import annotations

import re

_EVAL_WITH_KEY = re.compile(r"<eval_with_key>\.(\d+)")
_SEED_NSPID = "-seed-nspid"


def split_name(name: str) -> tuple[str, str | None]:
    """(stem, extension) of one path component with Rust `Path` semantics.

    `a.tar.gz` -> (`a.tar`, `gz`); `.hidden` -> (`.hidden`, None); `x.` -> (`x`, ``).
    """
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return name, None
    return stem, ext


def with_number(path: str, number: int) -> str:
    """`dir/name.ext` -> `dir/name_N.ext`: the unique suffix tlparse gives every per-compile file."""
    parent, slash, last = path.rpartition("/")
    stem, ext = split_name(last)
    numbered = f"{stem}_{number}" + ("" if ext is None else f".{ext}")
    return f"{parent}{slash}{numbered}"


def file_stem(path: str) -> str | None:
    """Rust `Path::file_stem` of a (possibly absolute) path: last component minus extension."""
    last = path.rstrip("/").rpartition("/")[2]
    if last in ("", ".", ".."):
        return None
    return split_name(last)[0]


def cache_mark(path: str) -> str:
    """The build-products mark: miss, hit or bypass of a cache artifact, else nothing."""
    if "cache_miss" in path:
        return "\u274c"
    if "cache_hit" in path:
        return "\u2705"
    if "cache_bypass" in path:
        return "\u2753"
    return ""


def eval_with_key_id(name: str) -> str | None:
    """The id of an FX-generated module name such as `<eval_with_key>.3`, else None."""
    match = _EVAL_WITH_KEY.search(name)
    return match.group(1) if match else None


def simplify_filename(filename: str) -> str:
    """Shorten build-system paths the way tlparse does (link-tree and seed-nspid prefixes)."""
    _, found, rest = filename.partition("#link-tree/")
    if found:
        return rest
    end = _seed_nspid_end(filename)
    return filename if end is None else filename[end:]


def _seed_nspid_end(filename: str) -> int | None:
    """Where tlparse's `[^/]+-seed-nspid[^/]+/` first match ends, in linear time.

    That regex, searched by a backtracking engine, rescans the rest of a component from every
    start: 100,000 characters without `/` took 6 s, 400,000 over a minute. Its first match is
    the first component (text between slashes) that holds `-seed-nspid` with at least one
    character before and one after, and is followed by a `/`; it ends after that `/`.
    """
    start = 0
    while (slash := filename.find("/", start)) != -1:
        # At least one character before and after the mark, inside this component.
        if slash - start >= len(_SEED_NSPID) + 2 and filename.find(_SEED_NSPID, start + 1, slash - 1) != -1:
            return slash + 1
        start = slash + 1
    return None
