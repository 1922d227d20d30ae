"""A job's rank summaries in an anonymous temporary file, decoded one at a time when asked.

The landing page compares every rank's `RankSummary` (~1.5 KB as msgpack, ~5 KB as Python
objects), and `Parsed.ranks` gives them back. Held in a list they, with the futures and results
waiting for them, were most of the job parent's growth with the ranks (32 MB at 8 ranks, 53 at
1,000). Here each summary is written as its rank finishes, in any order, and every pass over
the ranks (the landing's comparisons, a caller of `Parsed.ranks`) decodes them again in rank
order, one at a time: the parent keeps two integers per rank.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import msgspec

from tlscope.analyse.ranks.rank_summary import RankSummary

_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(RankSummary)


class RankSummaries(Sequence[RankSummary]):
    """Every summary `add`ed, in rank order (whatever order they were added in).

    The file is unlinked from the start (`tempfile.TemporaryFile`): nothing is left behind
    whatever ends the process; it is closed when this object is collected or `close`d.
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="tlscope-ranks-")  # noqa: SIM115 (lives as long as this object)
        self._end = 0
        #: Per summary in the order added: its rank, where it starts and its length in the file.
        self._ranks = array("q")
        self._starts = array("q")
        self._lengths = array("q")
        #: Positions in the order added, sorted by rank (made when first read after an add).
        self._order: array[int] | None = array("q")

    def add(self, summary: RankSummary) -> None:
        data = _ENCODER.encode(summary)
        self._file.seek(self._end)
        self._file.write(data)
        self._ranks.append(summary.rank)
        self._starts.append(self._end)
        self._lengths.append(len(data))
        self._end += len(data)
        self._order = None

    def _sorted(self) -> array[int]:
        if self._order is None:
            ranks = self._ranks
            self._order = array("q", sorted(range(len(ranks)), key=ranks.__getitem__))
        return self._order

    def _read(self, position: int) -> RankSummary:
        self._file.seek(self._starts[position])
        return _DECODER.decode(self._file.read(self._lengths[position]))

    def __len__(self) -> int:
        return len(self._ranks)

    @overload
    def __getitem__(self, index: int) -> RankSummary: ...
    @overload
    def __getitem__(self, index: slice) -> list[RankSummary]: ...
    def __getitem__(self, index: int | slice) -> RankSummary | list[RankSummary]:
        order = self._sorted()
        if isinstance(index, slice):
            return [self._read(p) for p in order[index]]
        return self._read(order[index])

    def __iter__(self) -> Iterator[RankSummary]:
        for position in self._sorted():
            yield self._read(position)

    def __eq__(self, other: object) -> bool:
        """Equal to a sequence of the same summaries, as the list it stands for was."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return False
        return all(mine == theirs for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value: unhashable, as a list

    def close(self) -> None:
        self._file.close()
