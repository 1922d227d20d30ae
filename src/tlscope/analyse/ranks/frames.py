"""Functions compiled on some ranks only, and compile ids numbered differently for one function.

A Dynamo compile id `[f/a]` numbers the frame `f` in the order its process first compiled it. A
rank that compiles one more function early (code under `if rank == 0:`, the usual home of
logging and evaluation) numbers every later function one higher: its `[2/0]` is the other ranks'
`[1/0]`. Compared by id, the ranks then differ at every later id (one "has" an id the others
lack, the same id names another function on each side, their graphs and collectives differ),
and the one function that made it is named nowhere.

So each rank's frames (frame number -> compiled function, `function_label`) travel in its
overview; the fold groups the ranks by their frames, takes the largest group (lower ranks on a
tie) as the reference and aligns each other group's functions with it (difflib's matching: the
longest runs of the same functions in the same order): the functions only one side compiled,
and the frames whose numbers differ for the same function. And `alignment_keys` names each
compile id by its function (`name (file:line)`, the how-many-th frame of that function, then
the attempt), so the graph and collective comparisons compare one function's graphs whatever
its number on each rank.
"""

from __future__ import annotations

import difflib
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping

import msgspec

from tlscope.analyse.ranks.words import NAMED, count, who

#: A Dynamo frame's compile id: `[3/0]`, `[3/1]`, `[3/0_1]` (a restart). Compiled autograd's
#: (`[!0/3/0]`) and the rest are compared by id.
_FRAME_ID = re.compile(r"\[(\d+)(/\d+(?:_\d+)?\])")
#: Frames renumbered that a sentence names.
SHOWN = 2


class FrameRef(msgspec.Struct, kw_only=True):
    """A frame as a sentence names it: its first compile id and its function."""

    id: str
    function: str


class FrameShift(msgspec.Struct, kw_only=True):
    """Ranks whose compiled functions differ from the reference ranks' (the most ranks')."""

    ranks: list[int]
    #: The reference: the largest group of ranks with the same frames, lower ranks on a tie.
    than: list[int]
    #: Functions these ranks compiled and the reference ranks did not, with these ranks' ids.
    extra: list[FrameRef] = []
    #: Functions the reference ranks compiled and these ranks did not, with the reference's ids.
    missing: list[FrameRef] = []
    #: `[own frame, the reference's frame]` for each function both compiled under other numbers,
    #: in frame order: the ids to compare (`[2, 1]`: this group's `[2/0]` is their `[1/0]`).
    renumbered: list[list[int]] = []
    #: In one sentence, e.g. `rank 0 compiled 1 function ranks 1, 2, 3 did not ([1/0] log_stats
    #: (train.py:22)); so the functions it compiled after it have other compile ids: its [2/0]
    #: block (train.py:26) is their [1/0], …`.
    sentence: str


def frame_of(cid: str) -> int | None:
    """The frame number of a Dynamo compile id (`[3/1]` -> 3); None for any other id."""
    matched = _FRAME_ID.fullmatch(cid)
    return int(matched[1]) if matched else None


def column_key(column: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """A matrix column's place (natural compile-id order: [0/2] before [0/10], [!1/0/0] after
    the plain ids), a column named with its function (`Numbering.columns`) after its id's."""
    cid, _, rest = column.partition(" ")
    parts: list[tuple[int, int | str]] = []
    for piece in cid.strip("[]").replace("!", "~/").replace("_", "/").split("/"):
        parts.append((0, int(piece)) if piece.isdigit() else (1, piece))
    return tuple(parts), rest


def alignment_keys(compile_ids: Iterable[str], frames: Mapping[int, str]) -> dict[str, str]:
    """Compile id -> the name the ranks' comparisons give it: `block (train.py:26)#0/0]` (its
    function, the how-many-th frame of that function in frame order, its attempt) for a Dynamo
    frame whose function is known; the id itself for the rest."""
    nth: dict[str, int] = {}
    named: dict[int, str] = {}
    for frame in sorted(frames):
        label = frames[frame]
        if label == "?":  # a function the log does not name matches nothing by name
            continue
        named[frame] = f"{label}#{nth.get(label, 0)}"
        nth[label] = nth.get(label, 0) + 1
    keys: dict[str, str] = {}
    for cid in compile_ids:
        matched = _FRAME_ID.fullmatch(cid)
        name = named.get(int(matched[1])) if matched else None
        keys[cid] = cid if matched is None or name is None else name + matched[2]
    return keys


class Numbering:
    """Every rank's compile ids by their names by function (`alignment_keys`), kept a rank at a
    time: name -> compile id -> the ranks that number it so. What says a mismatch under the id
    the most ranks give it, and the other ranks' ids beside it."""

    def __init__(self) -> None:
        #: Kept a rank at a time: one naming (`alignment_keys`), shared by the ranks with the same
        #: ids and frames -> those ranks. `ids` is made of it when first asked, every rank in.
        self._named: dict[object, tuple[Mapping[str, str], array[int]]] = {}
        self._ids: dict[str, dict[str, array[int]]] | None = None
        # Asked once per group of ranks: made once.
        self._having: dict[str, frozenset[int]] = {}
        self._first: dict[str, tuple[int, str]] = {}

    def add(self, rank: int, key: object, names: Mapping[str, str]) -> None:
        """Rank `rank` names its ids `names`, the same for every rank added with `key`."""
        self._named.setdefault(key, (names, array("q")))[1].append(rank)
        self._ids = None

    @property
    def ids(self) -> dict[str, dict[str, array[int]]]:
        """name -> compile id -> the ranks that number it so."""
        if self._ids is None:
            self._ids = {}
            for names, ranks in self._named.values():
                for cid, name in names.items():
                    self._ids.setdefault(name, {}).setdefault(cid, array("q")).extend(ranks)
        return self._ids

    def having(self, name: str) -> frozenset[int]:
        if name not in self._having:
            self._having[name] = frozenset(rank for ranks in self.ids[name].values() for rank in ranks)
        return self._having[name]

    def first(self, name: str) -> tuple[int, str]:
        """The lowest rank with `name`, and its compile id for it."""
        if name not in self._first:
            self._first[name] = min((min(ranks), cid) for cid, ranks in self.ids[name].items())
        return self._first[name]

    def usual(self, name: str) -> str:
        """The compile id the most ranks give `name` (the lowest rank's on a tie)."""
        return min(self.ids[name].items(), key=lambda item: (-len(item[1]), min(item[1])))[0]

    def namings(self) -> Iterator[tuple[Mapping[str, str], array[int]]]:
        """Each naming kept (`add`), with the ranks that name their ids so."""
        yield from self._named.values()

    def columns(self, reference: frozenset[int]) -> dict[str, str]:
        """name -> the column of the job's compile-id matrix that shows it, when ranks number
        functions differently: the id the reference ranks (`FrameShift.than`) give it, for a
        function they compiled; else the id the most ranks give it, followed by its function when
        the reference ranks give that id to another (`[1/0] log_stats (train.py:22)`: rank 0's
        `[1/0]` is not the others' `[1/0]`)."""
        found: dict[str, str] = {}
        for name, ids in self.ids.items():
            theirs = next((cid for cid, ranks in ids.items() if not reference.isdisjoint(ranks)), None)
            if theirs is not None:
                found[name] = theirs
        taken = set(found.values())
        # A frame number the reference gives a function -> that function: another function's ids
        # of that frame are named with their function, every attempt alike ([0/1] of the others'
        # [0/0] is not a recompile of it).
        owner = {frame_of(cid): name.rsplit("#", 1)[0] for name, cid in found.items() if name != cid}
        for name in sorted(set(self.ids) - set(found), key=self.first):
            cid = self.usual(name)
            label = name.rsplit("#", 1)[0] if name != cid else f"on {who([self.first(name)[0]])}"
            frame = frame_of(cid)
            other = frame in owner and owner[frame] != label and name != cid
            column = f"{cid} {label}" if other or cid in taken else cid
            while column in taken:  # two functions of one name, compiled by no reference rank
                column += "'"
            found[name] = column
            taken.add(column)
        return found

    def others(self, name: str) -> str:
        """` ([3/0] on rank 0)`: the ids other than `usual` ranks give `name`; "" when none."""
        usual = self.usual(name)
        said = [f"{cid} on {who(sorted(ranks))}" for cid, ranks in self.ids[name].items() if cid != usual]
        return f" ({', '.join(said[:NAMED])}{', …' if len(said) > NAMED else ''})" if said else ""


class FrameFold:
    """Every rank's frames, kept a rank at a time: the frames -> every rank with them."""

    def __init__(self) -> None:
        self.groups: dict[tuple[tuple[int, str], ...], array[int]] = {}

    def add(self, rank: int, frames: Mapping[int, str]) -> tuple[tuple[int, str], ...]:
        """Adds a rank's frames; returns them as the fold keys them."""
        key = tuple(sorted(frames.items()))
        if key:
            self.groups.setdefault(key, array("q")).append(rank)
        return key

    def shifts(self) -> list[FrameShift]:
        """Each group of ranks whose functions differ from the reference's, lowest rank first."""
        if len(self.groups) <= 1:
            return []
        made = sorted(
            ((sorted(ranks), frames) for frames, ranks in self.groups.items()), key=lambda g: (-len(g[0]), g[0])
        )
        than, reference = made[0]
        shifts = (_shift(ranks, frames, than, reference) for ranks, frames in made[1:])
        found = [shift for shift in shifts if shift is not None]
        found.sort(key=lambda s: s.ranks[0])
        return found


def _shift(
    ranks: list[int], frames: tuple[tuple[int, str], ...], than: list[int], reference: tuple[tuple[int, str], ...]
) -> FrameShift | None:
    """How `frames` differ from `reference` by function; None when only unnamed functions do."""
    mine, theirs = [label for _, label in frames], [label for _, label in reference]
    extra: list[FrameRef] = []
    missing: list[FrameRef] = []
    renumbered: list[list[int]] = []
    matcher = difflib.SequenceMatcher(None, theirs, mine, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            renumbered.extend(
                [frames[j][0], reference[i][0]]
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                if frames[j][0] != reference[i][0]
            )
            continue
        extra.extend(FrameRef(id=f"[{f}/0]", function=label) for f, label in frames[j1:j2] if label != "?")
        missing.extend(FrameRef(id=f"[{f}/0]", function=label) for f, label in reference[i1:i2] if label != "?")
    if not (extra or missing or renumbered):
        return None
    sentence = _sentence(ranks, than, extra, missing, renumbered, dict(frames))
    return FrameShift(ranks=ranks, than=than, extra=extra, missing=missing, renumbered=renumbered, sentence=sentence)


def _sentence(
    ranks: list[int],
    than: list[int],
    extra: list[FrameRef],
    missing: list[FrameRef],
    renumbered: list[list[int]],
    labels: dict[int, str],
) -> str:
    """`rank 0 compiled 1 function ranks 1, 2, 3 did not ([1/0] log_stats (train.py:22)); so the
    same functions have other compile ids: [2/0] block (train.py:26) on rank 0 is [1/0] on ranks
    1, 2, 3, [3/0] head (train.py:30) is [2/0]; tlscope compares their graphs and collectives by
    function`."""
    us, them = who(ranks), who(than)
    parts = []
    if extra:
        parts.append(f"{us} compiled {count(len(extra), 'function')} {them} did not ({_refs(extra)})")
    if missing:
        lead = (
            f"{us} did not compile {count(len(missing), 'function')} {them}"
            if not extra
            else f"not {len(missing)} they"
        )
        parts.append(f"{lead} did ({_refs(missing)})")
    said = ", and ".join(parts) if parts else f"{us} compiled the functions {them} did in another order"
    if not renumbered:
        return said
    (own, ref), *rest = renumbered[:SHOWN]
    pairs = [f"[{own}/0] {labels[own]} on {us} is [{ref}/0] on {them}"]
    pairs += [f"[{own}/0] {labels[own]} is [{ref}/0]" for own, ref in rest]
    more = f", … ({len(renumbered) - SHOWN} more)" if len(renumbered) > SHOWN else ""
    return (
        f"{said}; so the same functions have other compile ids: {', '.join(pairs)}{more}; "
        f"tlscope compares their graphs and collectives by function"
    )


def _refs(refs: list[FrameRef]) -> str:
    shown = ", ".join(f"{r.id} {r.function}" for r in refs[:NAMED])
    return shown + (f", … ({len(refs) - NAMED} more)" if len(refs) > NAMED else "")
