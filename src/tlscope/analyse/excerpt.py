"""A long line shown where it changed: where two texts start to differ (`differs_at`) and a
window of a line from a little before there (`around`). `tlscope diff` cuts its changed lines
(analyse/diff.py) and a cache key's differing values (analyse/cache_key.py) with them.
"""

from __future__ import annotations


def differs_at(x: str, y: str) -> int:
    """Where two texts start to differ (the shorter's length when one begins the other)."""
    n = 0
    for p, q in zip(x, y, strict=False):
        if p != q:
            break
        n += 1
    return n


def around(line: str, at: int, width: int, before: int) -> str:
    """At most `width` characters of `line`: all of it when it fits, else from `before`
    characters ahead of `at` (marked `…`), cut at the end (marked `…`)."""
    start = max(0, at - before) if len(line) > width else 0
    line = line if start == 0 else "…" + line[start:]
    return line if len(line) <= width else line[: width - 1] + "…"
