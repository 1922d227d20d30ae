"""Collectives parity: does a graph's generated code run the collectives its schedule lists?

tlparse's check (reference §6.7): count collective ops in the scheduler's list and the
`torch.ops._c10d_functional.X.default(` calls in the output code; report graphs where the
counts differ or where fewer `wait_tensor` calls than collectives appear.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

_KINDS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all")
_TAGS = re.compile(r"<[^>]*>", re.DOTALL)
_LINE_COMMENTS = re.compile(r"#[^\n]*|//[^\n]*")
_BLOCK_COMMENTS = re.compile(r"/\*.*?\*/", re.DOTALL)
_CALL = re.compile(r"torch\s*\.\s*ops\s*\.\s*_?c10d_functional\s*\.\s*([A-Za-z0-9_]+)\s*\.\s*default\s*\(")
_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")


def normalise(op: str) -> str | None:
    """The collective kind of an op name, or None for anything that is not a collective."""
    name = op.rstrip("_")
    for kind in _KINDS:
        if kind in name:
            return kind
    return "reduce" if "reduce" in name else None


def schedule_counts(ops: Iterable[str]) -> Counter[str]:
    return Counter(kind for op in ops if (kind := normalise(op)) is not None)


def code_counts(code: str) -> tuple[Counter[str], int]:
    """(collective calls by kind, wait_tensor calls) in output code, HTML or plain text.

    HTML entities are decoded after the tags are dropped: tlparse strips `#` comments from the
    still-escaped text, so `&#39;` swallowed the rest of a line there (a deviation we fix).
    """
    text = _sub_before_last(_TAGS, code, ">")
    text = _ENTITY.sub(_entity, text)
    text = _sub_before_last(_BLOCK_COMMENTS, _LINE_COMMENTS.sub("", text), "*/")
    counts: Counter[str] = Counter()
    waits = 0
    for match in _CALL.finditer(text):
        op = match.group(1)
        if op == "wait_tensor":
            waits += 1
        elif (kind := normalise(op)) is not None:
            counts[kind] += 1
    return counts, waits


def _sub_before_last(pattern: re.Pattern[str], text: str, close: str) -> str:
    r"""`pattern.sub("", text)` for a pattern whose matches end with `close`, in linear time.

    `<[^>]*>` and `/\*.*?\*/` scan from every opening to the end of the text when no closing
    follows it: `<a` x 80,000 took 11 s, `/*a` x 80,000 up to two minutes. Nothing after the
    last `close` can be part of a match, so the substitution runs on the text up to it, where
    every scan stops at a closing, and the rest is kept as it is.
    """
    end = text.rfind(close)
    if end == -1:
        return text
    end += len(close)
    return pattern.sub("", text[:end]) + text[end:]


def _entity(match: re.Match[str]) -> str:
    import html  # here: a log without output code, and every command's start-up, need none

    return html.unescape(match.group(0))


def load_entities() -> None:
    """Import what `_entity` uses now (a job's parent, before it forks its rank workers: they
    inherit it instead of each importing it, ~3 ms, on its first rank with output code)."""
    import html  # noqa: F401


def compare(schedule: Iterable[str], code: str) -> tuple[int, int]:
    """(offset, missing_waits) for one graph."""
    sched = schedule_counts(schedule)
    found, waits = _known_code_counts(code)
    offset = sum(abs(sched[k] - found[k]) for k in set(sched) | set(found))
    return offset, max(0, sum(found.values()) - waits)


def _known_code_counts(code: str) -> tuple[Counter[str], int]:
    """`code_counts`, kept by the text's digest: a job's ranks log the same output code, and a
    rank worker counts each graph's page again on every rank it parses (a digest is ~10x cheaper
    than the count; the counts are only read)."""
    key = hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    found = _COUNTED.get(key)
    if found is None:
        if len(_COUNTED) >= 256:
            _COUNTED.clear()
        found = _COUNTED[key] = code_counts(code)
    return found


_COUNTED: dict[bytes, tuple[Counter[str], int]] = {}
