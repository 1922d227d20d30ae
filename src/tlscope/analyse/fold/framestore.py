"""The compile fold's state, one frame at a time, and where a frame goes once the log has moved on.

Everything compiles.json combines across compile ids is a fact of one **frame**, a
(compiled-autograd id, frame id) pair: a frame compile's attempts (`[0/1]`, `[0/1_1]`), the
function of a compile that logged none, the recompile's cache entry it was compared with (the same
code object, so the same frame id), a fix's sizes and symbols, an `input_shapes` table. So the fold
keeps its per-compile state (`CompileAcc`s, the chromium spans' `FrameTime`s, the values a failed
guard asks for) per frame, in a `FrameState`, and an entry is made from its frame's state alone.

**When a frame is complete (for memory)**: when `LIVE_FRAMES` other frames have had records since
its last one, the least recently fed frame is handed to a `FrameStore` (issue 21: a 1 GB log's
fold must not grow with the log). A record of a stored frame takes it back first, so the rule
decides memory and time only, never an output byte: a frame whose backward pass logs much later
comes back, is fed, and goes out again. `HeldFrames` keeps them as objects (`summary`, tests);
write/answers_sink.py's `SpilledFrames` pickles them to a temporary file, so a parse holds at most
`LIVE_FRAMES` frames whatever the log's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from tlscope.analyse.fold.callvalues import Wanted
from tlscope.analyse.fold.compileacc import CompileAcc
from tlscope.analyse.fold.phases import FrameTime
from tlscope.model.compile_id import CompileId

#: A frame: (compiled-autograd id, frame id), either part None when the compile id has none.
Frame = tuple[int | None, int | None]

#: Frames kept as objects while the log streams by: a log's frames interleave (a graph break
#: starts the next frame inside the first one's compile; backward compiles come after the next
#: forward), so a few dozen cover what is still being logged; the rest are in the store.
LIVE_FRAMES = 8


def frame_of_id(cid: CompileId) -> Frame:
    return (cid.compiled_autograd_id, cid.frame_id)


def frame_order(frame: Frame) -> tuple[int, int]:
    """compile_id_order's first two parts: frames in this order give their compiles in manifest order."""
    ca, fid = frame
    return (-1 if ca is None else ca, -1 if fid is None else fid)


class FrameState:
    """One frame's share of the fold: its compile ids' accumulators (in first-record order), the
    chromium spans per frame compile, and per frame compile the values its failed guards ask for."""

    __slots__ = ("accs", "times", "wanted")

    def __init__(self) -> None:
        self.accs: dict[CompileId, CompileAcc] = {}
        self.times: dict[CompileId, FrameTime] = {}
        self.wanted: dict[CompileId, set[Wanted]] = {}


class FrameStore(Protocol):
    """Where the fold puts the frames the log has moved past."""

    def put(self, frame: Frame, state: FrameState) -> None:
        """Keep `state` (replacing what was kept for `frame`)."""

    def take(self, frame: Frame) -> FrameState | None:
        """The frame's state, forgotten here; None if none is kept."""

    def peek(self, frame: Frame) -> FrameState | None:
        """The frame's state, still kept (a copy when the store is not in memory)."""

    def frames(self) -> Iterator[Frame]:
        """The frames kept, in no particular order."""


class HeldFrames:
    """A FrameStore in memory: the frames' objects as they are (no saving, no copy)."""

    def __init__(self) -> None:
        self._held: dict[Frame, FrameState] = {}

    def put(self, frame: Frame, state: FrameState) -> None:
        self._held[frame] = state

    def take(self, frame: Frame) -> FrameState | None:
        return self._held.pop(frame, None)

    def peek(self, frame: Frame) -> FrameState | None:
        return self._held.get(frame)

    def frames(self) -> Iterator[Frame]:
        return iter(list(self._held))


class LiveFrames:
    """The frames being fed, least recently fed first; the oldest go to `store` beyond `limit`."""

    def __init__(self, store: FrameStore, limit: int = LIVE_FRAMES) -> None:
        self.store = store
        self.limit = limit
        self._live: dict[Frame, FrameState] = {}
        #: The live frames whose entries were made (`in_order`): at most `limit`, kept for `peek`.
        self._done: dict[Frame, FrameState] = {}
        #: Stored frames other frames' entries read (`peek`) while they are made, the last `limit`:
        #: a cache entry torch names is of the same frame, but a scaled log's copies name the first
        #: copy's, every one of them.
        self._peeked: dict[Frame, FrameState] = {}
        self._making = False
        #: The most recently fed frame and its state (`_live`'s last): a run of records of one
        #: frame finds it without moving it to the end of `_live` again.
        self._last: tuple[Frame, FrameState] | None = None
        #: Frames given to the store since the start, and taken back (for tests and benchmarks).
        self.stored = 0
        self.taken_back = 0

    def state(self, frame: Frame) -> FrameState:
        """The frame's state, made the most recently fed (taken back from the store if there)."""
        last = self._last
        if last is not None and last[0] == frame:  # already the most recently fed: most records
            return last[1]
        live = self._live
        found = live.pop(frame, None)
        if found is None:
            found = self.store.take(frame)
            if found is None:
                found = FrameState()
            else:
                self.taken_back += 1
            while len(live) >= self.limit:
                oldest = next(iter(live))
                self.store.put(oldest, live.pop(oldest))
                self.stored += 1
        live[frame] = found
        self._last = (frame, found)
        return found

    def live_frames(self) -> list[Frame]:
        return list(self._live)

    def peek(self, frame: Frame) -> FrameState | None:
        """A frame's state without feeding it (the end's entries compare a frame with another)."""
        found = self._live.get(frame) or self._done.get(frame)
        if found is not None:
            return found
        found = self._peeked.pop(frame, None) or self.store.peek(frame)
        if found is not None and self._making:  # kept while entries are made, the last read last out
            self._peeked[frame] = found
            while len(self._peeked) > self.limit:
                del self._peeked[next(iter(self._peeked))]
        return found

    def in_order(self) -> Iterator[tuple[Frame, FrameState]]:
        """Every frame once, in manifest order: the live ones as they are (kept until the end, for a
        later frame's `peek`), the stored ones read back one at a time (and left in the store)."""
        frames = sorted({*self._live, *self.store.frames()}, key=frame_order)
        self._making = True
        self._last = None  # the live frames leave `_live` below
        for frame in frames:
            state = self._live.pop(frame, None)
            if state is not None:
                self._done[frame] = state
            else:
                state = self.store.peek(frame)
                assert state is not None  # listed by the store just above
            yield frame, state
        self._done.clear()
        self._peeked.clear()
        self._making = False
