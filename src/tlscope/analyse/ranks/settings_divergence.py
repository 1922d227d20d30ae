"""Ranks that compiled under other settings than the most ranks did.

Every metrics record logs the configs in force (Dynamo's, torch.compiler's, functorch's,
Inductor's; analyse/config_diff.py). The ranks of one job run one program, so a setting whose
value differs between ranks was set differently on some ranks (an environment variable set on
one node, a config changed on rank 0 only) or the ranks ran different torch versions: a cause
of ranks that compile differently, said before the compiles that differ. tlparse's public
multi_rank_runtime has one: its ranks 5 and 6 ran Inductor with `graph_partition` on, and
lack two compiles the others have.

Each rank's first metrics record's configs are reduced to a digest where the rank is parsed
(`settings_digest`); the job's fold groups the ranks by digest and, for each group but the
largest, reads one rank's configs and the largest group's (a callable: the job's raw.jsonl)
and compares them with `config_diff`, the comparison `tlscope diff` makes of two runs.

A setting can also change after the first compile on some ranks only (`config.patch` around one
call on rank 1, a config set mid-run under `if rank == 0:`): every rank's first compile agrees,
and one compile runs under other settings on some ranks. Each rank's compiles.json says which of
its compiles ran under other settings than its first (`settings.groups`); among the ranks whose
first compiles agree (the largest group), each compile's changes are compared by function
(`CompileSettingsFold`), a rank that changed nothing for it being a group too.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Collection, Mapping
from typing import Any

import msgspec

from tlscope.analyse.config_diff import MAX_CHANGES, ConfigChange, comparable_configs, config_changes
from tlscope.analyse.ranks.words import NAMED, who
from tlscope.format.compiles import Settings
from tlscope.format.json_boundary import decode

#: Reads rank N's first metrics record's configs, by section (`configs_of`); {} when it cannot.
RankConfigs = Callable[[int], "dict[str, dict[str, Any]]"]
#: Settings a sentence names before "…".
SAID = 4
#: What a compile's settings that differ between ranks whose first compiles agree says.
MIDRUN = "a setting changed after the first compile on some ranks only (a config set mid-run, config.patch)"


class SettingsMismatch(msgspec.Struct, kw_only=True):
    """A group of ranks whose first compile ran under other settings than the most ranks', or
    (with `id`) that ran one compile under other settings than the most ranks that compiled it."""

    #: The compile (the id the most ranks give its function) whose settings differ between ranks
    #: whose first compiles agree: a setting changed after the first compile on some ranks only;
    #: absent for a group whose first compile's settings differ. Since 1.38.
    id: str | msgspec.UnsetType = msgspec.UNSET
    ranks: list[int]
    #: The largest group of ranks with one settings (lower ranks first on a tie): what `changed` compares with.
    than: list[int]
    #: The settings that differ, `a` the largest group's value, `b` this group's (null: not in
    #: that side's config, another torch version); values first, then keys one side lacks.
    changed: list[ConfigChange] = []
    #: Differing settings beyond `changed`.
    more: int = 0
    #: In one sentence.
    sentence: str


def settings_digest(configs: Mapping[str, dict[str, Any]]) -> str:
    """The configs of a rank's first metrics record, as compared between ranks; "" without any."""
    if not configs:
        return ""
    text = msgspec.json.encode(comparable_configs(configs), order="sorted")
    return hashlib.md5(text, usedforsecurity=False).hexdigest()[:16]


class RankSettingsFold:
    """The ranks grouped by settings digest, kept a rank at a time: digest -> every rank with it."""

    def __init__(self) -> None:
        self.groups: dict[str, list[int]] = {}

    def add(self, rank: int, digest: str | None) -> None:
        if digest:  # a rank without a metrics record, or one logging no config, is not compared
            self.groups.setdefault(digest, []).append(rank)

    def reference(self) -> frozenset[int] | None:
        """The largest group's ranks (lower ranks first on a tie); None when no rank was compared."""
        if not self.groups:
            return None
        largest: list[int] = min(self.groups.values(), key=lambda ranks: (-len(ranks), min(ranks)))
        return frozenset(largest)

    def mismatches(self, read: RankConfigs | None) -> list[SettingsMismatch]:
        """Each group but the largest, against the largest; empty when the ranks agree. Without
        `read` (or when a side's configs cannot be read) a group names its ranks only."""
        if len(self.groups) <= 1:
            return []
        groups = sorted((sorted(ranks) for ranks in self.groups.values()), key=lambda r: (-len(r), r[0]))
        than = groups[0]
        base = read(than[0]) if read is not None else {}
        # The first NAMED groups are compared (a rank's configs read each); the rest named only.
        return [_mismatch(ranks, than, base, read if n < NAMED else None) for n, ranks in enumerate(groups[1:])]


def _mismatch(
    ranks: list[int], than: list[int], base: dict[str, dict[str, Any]], read: RankConfigs | None
) -> SettingsMismatch:
    mine = read(ranks[0]) if read is not None and base else {}
    found = config_changes(base, mine) if mine else []
    head = f"{who(ranks)} compiled under other settings than {who(than)}"
    if not found:
        return SettingsMismatch(ranks=ranks, than=than, sentence=head)
    # Values first, then the keys one side lacks; the sentence counts each kind over all of them.
    changed = sorted(found, key=lambda c: c.a is None or c.b is None)
    return SettingsMismatch(
        ranks=ranks,
        than=than,
        changed=changed[:MAX_CHANGES],
        more=max(len(changed) - MAX_CHANGES, 0),
        sentence=f"{head}: {_words(changed, 0, than)}",
    )


def _words(changed: list[ConfigChange], more: int, than: list[int]) -> str:
    """The settings that differ in words, values first: `inductor graph_partition True (False on
    ranks 0-4), inductor … None (False), 7 settings only one side logs (another torch version?)`;
    `more` counts settings beyond `changed`, said as more values."""
    values = [c for c in changed if c.a is not None and c.b is not None]
    # The other side named once, at the first value.
    said = [f"{c.section} {c.key} {c.b} ({c.a}{'' if n else f' on {who(than)}'})" for n, c in enumerate(values[:SAID])]
    rest = len(values) - len(said) + more
    lacking = len(changed) - len(values)
    if rest > 0:
        said.append(f"{rest} more")
    if lacking:
        plural = "s" if lacking != 1 else ""
        said.append(f"{lacking} setting{plural} only one side logs (another torch version?)")
    return ", ".join(said)


def settings_changes(settings: Settings | None) -> dict[str, str]:
    """Compile id -> how it ran under other settings than its rank's first compile (compiles.json's
    `settings.groups`: each setting's section, key, value and first value, and how many more), as
    the ranks' comparison sees it; only the compiles that did."""
    found: dict[str, str] = {}
    for group in settings.groups if settings is not None else []:
        text = msgspec.json.encode(
            [[[c.section, c.key, c.value, c.first] for c in group.settings], group.more]
        ).decode()
        found.update(dict.fromkeys(group.compile_ids, text))
    return found


class CompileSettingsFold:
    """Every rank's compiles run under other settings than its first (`settings_changes`), kept a
    rank at a time: a compile's name by function (`alignment_keys`) -> its changes (one text per
    rank, shared) -> the ranks with them."""

    def __init__(self) -> None:
        self.texts: dict[str, dict[str, array[int]]] = {}

    def add(self, rank: int, changes: Mapping[str, str], names: Mapping[str, str]) -> None:
        """`names`: the rank's compile ids' names by function; an id the rank's compile list lacks
        (a settings group naming one, in a log someone else wrote) is no compile to compare."""
        for cid, text in changes.items():
            if cid in names:
                self.texts.setdefault(names[cid], {}).setdefault(text, array("q")).append(rank)

    def mismatches(
        self,
        reference: Collection[int] | None,
        having: Callable[[str], Collection[int]],
        named: Callable[[str], tuple[str, str]],
    ) -> list[tuple[str, SettingsMismatch]]:
        """(name, mismatch) of each group of ranks that ran a compile under other settings than the
        most ranks that compiled it, in no order: among `reference` (the ranks whose first
        compiles agree; None: every rank), `having` a name's ranks, a rank that changed nothing
        for it a group too; `named` gives a name's compile id and how a sentence says it."""
        found = []
        for name, texts in self.texts.items():
            compared = {rank for rank in having(name) if reference is None or rank in reference}
            groups = {text: sorted(r for r in ranks if r in compared) for text, ranks in texts.items()}
            groups[""] = sorted(compared.difference(*groups.values()))
            kept = sorted(
                ((ranks, text) for text, ranks in groups.items() if ranks), key=lambda g: (-len(g[0]), g[0][0])
            )
            if len(kept) > 1:
                cid, head = named(name)
                found += [(name, _compile_mismatch(cid, head, kept[0], group)) for group in kept[1:][:NAMED]]
        return found


def _compile_mismatch(
    cid: str, head: str, than: tuple[list[int], str], group: tuple[list[int], str]
) -> SettingsMismatch:
    changed, more = _compared(than[1], group[1])
    said = _words(changed, more, than[0])
    sentence = f"{head}: {who(group[0])} compiled it under other settings than {who(than[0])}: {said}; {MIDRUN}"
    return SettingsMismatch(id=cid, ranks=group[0], than=than[0], changed=changed, more=more, sentence=sentence)


def _compared(a: str, b: str) -> tuple[list[ConfigChange], int]:
    """Two ranks' changes of one compile (`settings_changes`' texts; "": none) as the settings
    whose values differ, `a` the first side's: a setting only one side changed has the other's
    first compile's value (the same on both: their first compiles agree)."""
    sides = [_changes(text) for text in (a, b)]
    firsts = {key: first for side in sides for key, (_, first) in side[0].items()}
    keys = sorted(set(sides[0][0]) | set(sides[1][0]))
    value = [{key: side[0][key][0] if key in side[0] else firsts[key] for key in keys} for side in sides]
    changed = [
        ConfigChange(section=k[0], key=k[1], a=value[0][k], b=value[1][k]) for k in keys if value[0][k] != value[1][k]
    ]
    return changed, max(sides[0][1], sides[1][1])


def _changes(text: str) -> tuple[dict[tuple[str, str], tuple[str | None, str | None]], int]:
    """A `settings_changes` text as (section, key) -> (value, first value), and how many more."""
    if not text:
        return {}, 0
    settings, more = decode(text)  # our own text (`settings_changes`), through the boundary as every JSON
    return {(section, key): (value, first) for section, key, value, first in settings}, more
