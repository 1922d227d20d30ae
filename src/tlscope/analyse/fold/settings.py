"""Compiles that ran under other settings than the run's first (compiles.json `settings`).

Every metrics record logs the configs in force (`dynamo_config`, `compiler_config`,
`functorch_config`, `inductor_config`, each JSON text). Within one run they are equal record
after record unless something changed them: a config set mid-run (`torch._dynamo.config.
recompile_limit = 2`), `torch._dynamo.config.patch` around one function,
`torch.compile(dynamic=False)` (which turns automatic dynamic shapes off for that function's
compiles). Such a compile behaves unlike the others (no automatic dynamic shapes, a lower
recompile limit, another Inductor option) and nothing else in the log says why. Records whose
texts equal the first's cost one comparison of strings; the JSON is decoded only when they differ.
"""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.format.compiles import Setting, Settings, SettingsGroup
from tlscope.model.events import CompilationMetrics

#: Groups of compiles kept at most (each distinct set of changed settings is one).
MAX_GROUPS = 50
#: Compile ids a group keeps at most (the rest are counted in the sentence's figures only).
MAX_IDS = 200
_Texts = tuple[str | None, str | None, str | None, str | None]


class SettingsFold:
    """Each metrics record's configs against the first record's."""

    def __init__(self) -> None:
        self.first_id: str | None = None
        self._first: _Texts | None = None
        #: Per set of config texts seen that differs from the first's, the settings that differ.
        self._changes: dict[_Texts, tuple[tuple[Setting, ...], int]] = {}
        #: Per set of changed settings (as compared), its group.
        self._groups: dict[tuple[tuple[str, str, str | None], ...], SettingsGroup] = {}

    def feed(self, cid: str | None, metrics: CompilationMetrics) -> None:
        texts = (metrics.dynamo_config, metrics.compiler_config, metrics.functorch_config, metrics.inductor_config)
        if texts == (None, None, None, None):
            return
        if self._first is None:
            self._first, self.first_id = texts, cid
            return
        if texts == self._first:
            return
        found = self._changes.get(texts)
        if found is None:
            if len(self._changes) >= MAX_GROUPS:
                return
            found = self._changes[texts] = _changed(self._first, texts)
        settings, more = found
        if not settings:
            return  # the same values, written another way
        key = tuple((s.section, s.key, s.value) for s in settings)
        group = self._groups.get(key)
        if group is None:
            if len(self._groups) >= MAX_GROUPS:
                return
            group = self._groups[key] = SettingsGroup(compile_ids=[], settings=list(settings), more=more)
        if cid is not None and cid not in group.compile_ids and len(group.compile_ids) < MAX_IDS:
            group.compile_ids.append(cid)

    def result(self) -> Settings | None:
        """compiles.json `settings`; None when every compile ran under the first's settings."""
        groups = [g for g in self._groups.values() if g.compile_ids]
        if not groups:
            return None
        return Settings(first_compile=self.first_id, groups=groups, sentence=_sentence(self.first_id, groups))


def _changed(first: _Texts, texts: _Texts) -> tuple[tuple[Setting, ...], int]:
    """The settings of `texts` that differ from `first`'s (at most config_diff.MAX_CHANGES), and
    how many more do. Imported here: most runs never change a setting."""
    from tlscope.analyse.config_diff import SECTIONS, config_diff, configs_of

    names = list(SECTIONS)
    found = config_diff(
        configs_of(dict(zip(names, first, strict=True))), configs_of(dict(zip(names, texts, strict=True)))
    )
    if found is None:
        return (), 0
    settings = tuple(Setting(section=c.section, key=c.key, value=c.b, first=c.a) for c in found.changed)
    return settings, found.more


def _sentence(first: str | None, groups: Sequence[SettingsGroup]) -> str:
    parts = []
    for group in groups[:5]:
        ids = ", ".join(group.compile_ids[:6]) + (
            f" and {len(group.compile_ids) - 6} more" if len(group.compile_ids) > 6 else ""
        )
        said = "; ".join(f"{s.section} {s.key} {s.value}, was {s.first}" for s in group.settings[:6])
        more = len(group.settings) - 6 + group.more
        tail = f" and {more} more" if more > 0 else ""
        parts.append(f"{ids} compiled under other settings than {first or 'the first compile'}: {said}{tail}")
    if len(groups) > 5:
        parts.append(f"{len(groups) - 5} more groups of compiles under settings of their own")
    return "; ".join(parts) + "."
