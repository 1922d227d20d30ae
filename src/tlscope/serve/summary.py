"""A trace's summary for `GET /api/traces`, from its manifests (one, or one per rank).

A manifest of a folder or a store may have been written by anyone: a field of the wrong type
counts as absent, it never fails the listing.
"""

from __future__ import annotations

from typing import Any


def summarise(manifests: list[dict[str, Any]], ranks: list[int]) -> dict[str, Any]:
    """`{torch_version, events, compile_ids, ranks, problems}` from the manifests of a trace."""
    ids: set[str] = set()
    for m in manifests:
        ids.update(str(c.get("id")) for c in _list(m.get("compile_ids")) if isinstance(c, dict))
    versions = [m.get("torch_version") for m in manifests if m.get("torch_version")]
    problems = [m.get("problems") for m in manifests]
    versions = [v for v in versions if isinstance(v, str)]
    return {
        "torch_version": versions[0] if versions else None,
        "events": sum(_count(m.get("raw_jsonl_events")) for m in manifests),
        "compile_ids": len(ids),
        "ranks": ranks or sorted({r for m in manifests for r in _list(m.get("ranks")) if isinstance(r, int)}),
        "problems": sum(_count(p.get("total")) for p in problems if isinstance(p, dict)),
    }


def _count(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
