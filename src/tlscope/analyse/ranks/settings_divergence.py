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
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from tlscope.analyse.config_diff import ConfigChange, config_diff
from tlscope.analyse.ranks.words import NAMED, who

#: Reads rank N's first metrics record's configs, by section (`configs_of`); {} when it cannot.
RankConfigs = Callable[[int], "dict[str, dict[str, Any]]"]
#: Settings a sentence names before "…".
SAID = 4


class SettingsMismatch(msgspec.Struct, kw_only=True):
    """A group of ranks whose first compile ran under other settings than the most ranks'."""

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
    text = msgspec.json.encode(dict(configs), order="sorted")
    return hashlib.md5(text, usedforsecurity=False).hexdigest()[:16]


class RankSettingsFold:
    """The ranks grouped by settings digest, kept a rank at a time: digest -> every rank with it."""

    def __init__(self) -> None:
        self.groups: dict[str, list[int]] = {}

    def add(self, rank: int, digest: str | None) -> None:
        if digest:  # a rank without a metrics record, or one logging no config, is not compared
            self.groups.setdefault(digest, []).append(rank)

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
    found = config_diff(base, mine) if mine else None
    head = f"{who(ranks)} compiled under other settings than {who(than)}"
    if found is None:
        return SettingsMismatch(ranks=ranks, than=than, sentence=head)
    changed = sorted(found.changed, key=lambda c: c.a is None or c.b is None)  # values first
    values = [c for c in changed if c.a is not None and c.b is not None]
    # The other side named once, at the first value: `inductor graph_partition True (False on
    # ranks 0-4), inductor … None (False)`.
    said = [f"{c.section} {c.key} {c.b} ({c.a}{'' if n else f' on {who(than)}'})" for n, c in enumerate(values[:SAID])]
    rest = len(values) - len(said) + found.more
    lacking = len(changed) - len(values)
    if rest > 0:
        said.append(f"{rest} more")
    if lacking:
        plural = "s" if lacking != 1 else ""
        said.append(f"{lacking} setting{plural} only one side logs (another torch version?)")
    return SettingsMismatch(
        ranks=ranks, than=than, changed=changed, more=found.more, sentence=f"{head}: {', '.join(said)}"
    )
