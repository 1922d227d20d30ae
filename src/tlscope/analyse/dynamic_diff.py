"""Why two runs' inputs are dynamic differently (`tlscope diff`'s `summary.dynamic`).

Two runs of one program whose graphs differ only in which sizes are symbols (`f32[4, 8]` in A,
`f32[s77, 8]` in B) differ in what made those sizes dynamic, and each side's compiles.json
`dynamic` (analyse/fold/dynamic.py) says it: a PGO profile one side read (a second run with the
same TORCH_COMPILE_JOB_ID), or sources one side made dynamic by recompiling (a
TORCH_COMPILE_DYNAMIC_SOURCES one side set is a setting: analyse/config_diff.py says it).
Informative lines, as the compile times: they explain the differences listed, never make two
traces different.
"""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.analyse.fold.dynamic import sources_said
from tlscope.format.compiles import Dynamic, DynamicSource


def dynamic_lines(a: Dynamic | None, b: Dynamic | None, sides: tuple[str, str] = ("A", "B")) -> list[str]:
    """What differs in why each side's inputs are dynamic, one line each; [] when nothing does."""
    lines: list[str] = []
    profiles = (a.profile if a else None, b.profile if b else None)
    for i, (side, found) in enumerate(zip(sides, (a, b), strict=True)):
        other = sides[1 - i]
        if profiles[i] is not None and profiles[1 - i] is None:
            assert found is not None and found.profile is not None
            said = _said([s for s in found.sources if s.by == "profile"]) or "nothing"
            key = f", key {found.profile.key}" if found.profile.key else ""
            # The profile one side wrote last and the other read are the same payload: say so.
            writer = (a, b)[1 - i]
            written = writer.profile_written if writer is not None else None
            same = written is not None and written.event.payload_filename == found.profile.event.payload_filename
            origin = f"the one {other} wrote" if same else "an earlier run with the same TORCH_COMPILE_JOB_ID wrote it"
            lines.append(
                f"{side} read a PGO profile ({found.profile.artifact}{key}), {other} none: it made {said} "
                f"dynamic from {side}'s first compile ({origin})"
            )
    # A TORCH_COMPILE_DYNAMIC_SOURCES set on one side is a setting: `summary.config` says it.
    learned = (_automatic(a), _automatic(b))
    for i, side in enumerate(sides):
        own = [s for key, s in learned[i].items() if key not in learned[1 - i]]
        if own:
            lines.append(
                f"{side} made {_said(own)} dynamic by recompiling (automatic dynamic shapes), {sides[1 - i]} did not"
            )
    return lines


def _automatic(found: Dynamic | None) -> dict[tuple[str, str | None, tuple[int, ...] | None], DynamicSource]:
    """A side's sources made dynamic by recompiling, by (source, function, dims)."""
    if found is None:
        return {}
    return {
        (s.source, s.function.name if s.function else None, tuple(s.dims) if s.dims is not None else None): s
        for s in found.sources
        if s.by == "automatic"
    }


def _said(sources: Sequence[DynamicSource]) -> str:
    """The sources as the dynamic answer says them, then the compiles that made them dynamic."""
    at = {s.compile_id for s in sources if s.compile_id and s.by == "automatic"}
    where = f" ({', '.join(sorted(at))})" if at else ""
    return (sources_said(sources, changes=False) if sources else "") + where
