"""tlparse's file naming: `_N` suffixes, cache marks, eval_with_key links, short file names.

These are the rules people's shared links depend on, so they follow tlparse 0.4.3 exactly
(reference §3.0, §3.9, §5), with one difference: log-derived names are made path-safe first.
"""

from __future__ import annotations

import re

_EVAL_WITH_KEY = re.compile(r"<eval_with_key>\.(\d+)")
_SEED_NSPID = re.compile(r"[^/]+-seed-nspid[^/]+/")


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
    match = _SEED_NSPID.search(filename)
    if match:
        return filename[match.end() :]
    return filename
