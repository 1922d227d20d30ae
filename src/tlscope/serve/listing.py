"""A trace's line in `GET /api/traces`: its torch version, event and compile-id counts, ranks and
problems, from its manifests (one, or one per rank), read through the format's reader.

A manifest of a folder or a store may have been written by anyone: one that does not match the
schema is left out (format/folder.py says why), it never fails the listing.
"""

from __future__ import annotations

from typing import Any

from tlscope.format.manifest import Manifest


def listing_summary(manifests: list[Manifest], ranks: list[int], *, multi_rank: bool) -> dict[str, Any]:
    """`{torch_version, events, compile_ids, ranks, problems, multi_rank}` from the manifests of a
    trace; `multi_rank`: its folder is a job's (rank folders under multi_rank_summary.json, no
    manifest.json at its top), what a viewer needs to ask only for files that exist."""
    ids = {c.id for m in manifests for c in m.compile_ids}
    versions = [m.torch_version for m in manifests if m.torch_version]
    return {
        "torch_version": versions[0] if versions else None,
        "events": sum(m.raw_jsonl_events for m in manifests),
        "compile_ids": len(ids),
        "ranks": ranks or sorted({r for m in manifests for r in m.ranks}),
        "problems": sum(m.problems.total for m in manifests),
        "multi_rank": multi_rank,
    }
