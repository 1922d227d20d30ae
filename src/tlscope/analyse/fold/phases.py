"""Compile time per phase, from the chromium events (`dynamo_timed` begin/end pairs).

Each chromium event names the compile it belongs to in `args.compile_id` (`"0/1"`, `"!0/2/0"`:
the frame compile, without the attempt). A begin (`B`) and the next end (`E`) of the same name,
compile, process and thread make a span; complete events (`X`) carry their `dur`. Only the
phases below are kept (a compile has ~100 distinct span names; these say where the time went).
"""

from __future__ import annotations

import msgspec

from tlscope.format.compiles import Phase, Timing
from tlscope.model.compile_id import CompileId, frame_compile_from_text

#: The phases kept per compile, in pipeline order, with what each covers.
PHASES: dict[str, str] = {
    "compiled_autograd": "compiled autograd capturing the backward pass (a `[!N/-/-]` capture's whole time)",
    "dynamo": "the whole frame compile (every attempt)",
    "compile_attempt": "one attempt of Dynamo's analysis (`compile_attempt_N`, summed)",
    "bytecode_tracing": "Dynamo tracing the bytecode",
    "build_guards": "building the guards",
    "backend_compile": "the backend (AOTAutograd and Inductor for the default backend)",
    "create_aot_dispatcher_function": "AOTAutograd",
    "aot_trace_joint_graph": "AOTAutograd tracing the joint graph",
    "min_cut_rematerialization_partition": "AOTAutograd partitioning forward and backward",
    "inductor_compile": "Inductor (forward and backward graphs)",
    "_recursive_pre_grad_passes": "Inductor pre-grad passes",
    "_recursive_joint_graph_passes": "Inductor joint-graph passes",
    "_recursive_post_grad_passes": "Inductor post-grad passes",
    "GraphLowering.run": "Inductor lowering",
    "Scheduler.__init__": "Inductor scheduling and fusion",
    "code_gen": "Inductor code generation",
    "compile_file": "compiling generated C++",
    "async_compile.wait": "waiting for parallel kernel compiles",
    "gc": "garbage collection after compiling",
}


_NAMES = {name: name for name in PHASES}
#: The spans that are a compile's whole time: a frame compile's, a compiled-autograd capture's.
_WHOLE = frozenset({"dynamo", "compiled_autograd"})


class _Args(msgspec.Struct):
    compile_id: str | None = None


class ChromiumSpan(msgspec.Struct):
    """The fields of a chromium event that timing needs (converted from the reader's decode)."""

    name: str = ""
    ph: str = ""
    ts: float = 0.0
    dur: float | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    args: _Args | None = None


def frame_key(compile_id: str | None) -> CompileId | None:
    """The frame compile (attempt left out) a chromium `args.compile_id` names; None for `None`/junk."""
    return frame_compile_from_text(compile_id)


def phase_name(name: str) -> str | None:
    if name.startswith("compile_attempt_"):
        return "compile_attempt"
    return _NAMES.get(name)  # PHASES' own string: a frame keeps its phases' names to the end


class FrameTime:
    """Spans of one frame compile: open begins, per-phase totals, and the `dynamo` span's ends."""

    __slots__ = ("first_begin", "last_end", "open", "totals")

    def __init__(self) -> None:
        self.open: dict[tuple[str, object, object], list[float]] = {}
        self.totals: dict[str, list[float]] = {}
        self.first_begin: float | None = None
        self.last_end: float | None = None

    def feed(self, event: ChromiumSpan) -> None:
        phase = phase_name(event.name)
        if phase is None:
            return
        if event.ph == "X" and event.dur is not None:
            self._add(phase, event.dur, event.ts, event.ts + event.dur)
        elif event.ph == "B":
            self.open.setdefault((event.name, event.pid, event.tid), []).append(event.ts)
        elif event.ph == "E":
            begins = self.open.get((event.name, event.pid, event.tid))
            if begins:
                begin = begins.pop()
                self._add(phase, event.ts - begin, begin, event.ts)

    def _add(self, phase: str, duration_us: float, begin: float, end: float) -> None:
        total = self.totals.setdefault(phase, [0.0, 0])
        total[0] += max(duration_us, 0.0)
        total[1] += 1
        if phase in _WHOLE:
            self.first_begin = begin if self.first_begin is None else min(self.first_begin, begin)
            self.last_end = end if self.last_end is None else max(self.last_end, end)

    def phases(self) -> list[Phase]:
        order = list(PHASES)
        return [
            Phase(name=name, seconds=round(total[0] / 1e6, 6), count=int(total[1]))
            for name, total in sorted(self.totals.items(), key=lambda kv: order.index(kv[0]))
        ]

    def unfinished(self) -> list[str]:
        """The phases begun and never ended (the log ends inside them), outermost first."""
        begun = sorted((ts, name) for (name, _, _), begins in self.open.items() for ts in begins)
        return list(dict.fromkeys(found for _, name in begun if (found := phase_name(name)) is not None))

    def timing(self) -> Timing | None:
        total = self.totals.get("dynamo") or self.totals.get("compiled_autograd")
        if total is None:
            return None
        return Timing(
            start_us=self.first_begin,
            end_us=self.last_end,
            duration_s=round(total[0] / 1e6, 6),
            source="chromium_event",
        )
