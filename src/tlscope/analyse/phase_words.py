"""Where a compile's time went, in words: the innermost phase of the chain that holds most of it.

Compile phases nest (backend_compile > create_aot_dispatcher_function > inductor_compile >
code_gen > compile_file), so the phases that each hold more than half of one time are one chain,
and the innermost of them (the last in the pipeline's order, `PHASES`) is where the time went,
said with the chain's largest phase around it: `compile_file (30.12 s of inductor_compile's
35.20 s)`. Not the fewest seconds: a compile's backward, compiled after its `dynamo` span, adds
to inductor_compile and code_gen but not to create_aot_dispatcher_function, which holds them in
the forward. One rule, said by a straggler's sentence about its excess over the median rank
(ranks/straggler_why.py), by a run's first answer about its slowest compile (headline.py) and by
a diff's compile times, where a compile's time moved (time_diff.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.analyse.fold.phases import PHASES
from tlscope.format.compiles import CompileEntry

#: A compile is a first answer (`slow_compile`) when it took at least this long: a second is
#: long for one compile (Dynamo alone takes tens of milliseconds, Inductor's CPU kernels seconds).
SLOW_S = 1.0

#: Phases that wrap the whole compile (their time is the compile's): never named as where it went.
WRAPPERS = frozenset({"dynamo", "compile_attempt", "entire_frame_compile"})
#: A phase carries a time when it holds at least this share of the largest phase's (the whole
#: compile's, `dynamo`'s, when logged). Two phases that each hold more than half of one time
#: cannot be side by side: one holds the other, so they are one chain.
CARRIES = 0.5
#: Each phase's place in the pipeline: a later phase of a chain runs inside the earlier ones.
_ORDER = {name: i for i, name in enumerate(PHASES)}


def phase_seconds(entry: CompileEntry) -> dict[str, float]:
    """Seconds by phase name (a phase logged several times summed)."""
    found: dict[str, float] = {}
    for phase in entry.phases:
        found[phase.name] = found.get(phase.name, 0.0) + phase.seconds
    return found


Times = Sequence[tuple[str, float]]


def _chain(times: Times) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The named phases, biggest first, and the chain that carries the largest time (`CARRIES`;
    the wrappers count for the largest, never in the chain); ([], []) when only wrappers are timed."""
    ordered = sorted(times, key=lambda g: (-g[1], g[0]))
    named = [g for g in ordered if g[0] not in WRAPPERS]
    if not named:
        return [], []
    return named, [g for g in named if g[1] > CARRIES * ordered[0][1]] or named[:1]


def innermost(times: Times) -> str | None:
    """Where the time went: the innermost phase of the chain that carries it (the last in the
    pipeline's order), None when only the wrappers are timed."""
    _, chain = _chain(times)
    return max(chain, key=lambda g: (_ORDER.get(g[0], -1), g[0]))[0] if chain else None


def where_it_went(times: Times, sign: str = "") -> list[str]:
    """`times` (phase, seconds: a compile's own or its excess over another's, at least 5 ms each)
    in words, biggest first: the innermost of the chain that carries the largest,
    `compile_file (+41.83 s of inductor_compile's +57.49 s)` with `sign` `+`, then each other
    named phase; [] when only the wrappers are timed."""
    named, chain = _chain(times)
    if not chain:
        return []
    outer, inner = chain[0], max(chain, key=lambda g: (_ORDER.get(g[0], -1), g[0]))
    around = "" if inner is outer else f" of {outer[0]}'s {sign}{outer[1]:.2f} s"
    said = f"{inner[0]} ({sign}{inner[1]:.2f} s{around})"
    return [said, *(f"{name} ({sign}{s:.2f} s)" for name, s in named if (name, s) not in chain)]


def compile_seconds(entry: CompileEntry) -> float | None:
    """A compile's time: its `dynamo` span's, as `summary` lists it, and its backward's, which
    AOTAutograd compiles at the first backward call, after the span (`bwd_compilation_metrics`):
    what the run's total, its slowest compile and a diff's totals count."""
    if entry.time is None or entry.time.duration_s is None:
        return None
    return entry.time.duration_s + backward_s(entry)


def backward_s(entry: CompileEntry) -> float:
    """The seconds AOTAutograd took compiling the compile's backward (0 when none was logged)."""
    return sum(r.time_s or 0.0 for r in entry.metrics_records if r.kind == "bwd_compilation_metrics")
