"""Which settings differ between two runs (`tlscope diff`'s `summary.config`).

Every metrics record logs the configs in force as JSON text: `dynamo_config`
(torch._dynamo.config), `compiler_config` (torch.compiler.config: TORCH_COMPILE_DYNAMIC_SOURCES,
the job id), `functorch_config` and `inductor_config`. Two runs of one program log equal configs
(the corpus's warm and cold runs do, key for key), so a key whose value differs is a setting
someone changed: the first thing to know when two runs behave differently (an Inductor option, a
recompile limit, automatic dynamic shapes, which torch.compile(dynamic=False) turns off). Each
side's first metrics record is compared: the run's configuration as its first compile saw it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from tlscope.analyse.excerpt import around, differs_at
from tlscope.format.json_boundary import JsonError, decode

#: The metrics record's config fields, and how a line names each.
SECTIONS = {
    "dynamo_config": "dynamo",
    "compiler_config": "compiler",
    "functorch_config": "functorch",
    "inductor_config": "inductor",
}
#: Settings listed at most (the rest counted): a torch upgrade between two runs changes many.
MAX_CHANGES = 20
#: Characters of a value shown (a list of ops, a dict of options), cut where the two differ.
VALUE_WIDTH = 80
#: Settings torch's config declares as sets (torch._dynamo.config; torch 2.13 has none elsewhere),
#: logged as JSON lists. Older torch wrote them in the process's string hash order (2.13 sorts
#: them), which differs between processes (tlparse's multi_rank_logs: ranks 0 and 2 against 1
#: and 3), so their order says nothing and is not a setting that differs.
SET_VALUED = frozenset(
    ("dynamo", key)
    for key in (
        "allowed_functions_module_string_ignorelist",
        "traceable_tensor_subclasses",
        "nontraceable_tensor_subclasses",
        "reorderable_logging_functions",
        "ignore_logging_functions",
        "_save_config_ignore",
    )
)

#: Settings torch derives from the machine's paths at import, which say where a run ran, not a
#: setting changed (torch leaves them out of its own cache key, "uses absolute path"):
#: `xpu.cutlass_dir` is the working directory's real path (realpath of an unset
#: TORCHINDUCTOR_CUTLASS_DIR), so two runs of one script from two folders differed by it.
MACHINE_PATHS = frozenset(("inductor", key) for key in ("cuda.cutlass_dir", "cutlass.cutlass_dir", "xpu.cutlass_dir"))


class ConfigChange(msgspec.Struct, kw_only=True):
    """One setting whose value differs between the two runs."""

    #: `dynamo`, `compiler`, `functorch` or `inductor`.
    section: str
    key: str
    #: Each side's value as Python prints it (`True`, `8`, `'L[\\'x\\']:0'`); null when the side's
    #: config has no such key (another torch version).
    a: str | None
    b: str | None


class ConfigDiff(msgspec.Struct, kw_only=True):
    """`summary.config`: the settings that differ, in section then key order."""

    changed: list[ConfigChange] = []
    #: Differing settings beyond `changed`.
    more: int = 0


def configs_of(metrics: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The configs of a raw.jsonl `compilation_metrics` event's object, by section (those it logs
    as a JSON object; a malformed one is left out)."""
    found: dict[str, dict[str, Any]] = {}
    for field, section in SECTIONS.items():
        text = metrics.get(field) if metrics is not None else None
        if not isinstance(text, str):
            continue
        try:
            value = decode(text)
        except JsonError:
            continue
        if isinstance(value, dict):
            found[section] = value
    return found


def first_configs(events: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The configs of the first of raw.jsonl's `compilation_metrics` events, by section; {}
    without one: a run's settings as its first compile saw them."""
    first = next(iter(events), None)
    metrics = first.get("compilation_metrics") if first is not None else None
    return configs_of(metrics if isinstance(metrics, Mapping) else None)


def comparable(section: str, key: str, value: Any) -> Any:
    """A setting's value as compared: a set's list in one order (`SET_VALUED`), others as logged."""
    if (section, key) in SET_VALUED and isinstance(value, list):
        return sorted(value, key=repr)
    return value


def comparable_configs(configs: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`configs` with each set's list in one order (a section copied only when it holds one)."""
    found = dict(configs)
    for section, key in SET_VALUED:
        values = found.get(section)
        if values is not None and isinstance(values.get(key), list):
            found[section] = {**values, key: comparable(section, key, values[key])}
    return found


def config_diff(a: Mapping[str, dict[str, Any]], b: Mapping[str, dict[str, Any]]) -> ConfigDiff | None:
    """The settings whose values differ, in the sections both sides logged, at most MAX_CHANGES
    and how many more; None when none does (or a side logged no config)."""
    changed = config_changes(a, b)
    if not changed:
        return None
    return ConfigDiff(changed=changed[:MAX_CHANGES], more=max(len(changed) - MAX_CHANGES, 0))


def config_changes(a: Mapping[str, dict[str, Any]], b: Mapping[str, dict[str, Any]]) -> list[ConfigChange]:
    """Every setting whose value differs (or that one side lacks), in section then key order. A
    set's members in another order are the same setting; a path of the machine is none."""
    changed: list[ConfigChange] = []
    for section in SECTIONS.values():
        x, y = a.get(section), b.get(section)
        if x is None or y is None:
            continue
        for key in sorted(x.keys() | y.keys()):
            if (section, key) in MACHINE_PATHS:
                continue
            if key in x and key in y and comparable(section, key, x[key]) == comparable(section, key, y[key]):
                continue
            changed.append(ConfigChange(section=section, key=key, a=_shown(x, key, y), b=_shown(y, key, x)))
    return changed


def _shown(mine: dict[str, Any], key: str, other: dict[str, Any]) -> str | None:
    """A value as Python prints it, a long one shown from where it differs from the other side's."""
    if key not in mine:
        return None
    text = repr(mine[key])
    theirs = repr(other[key]) if key in other else ""
    return around(text, differs_at(text, theirs), VALUE_WIDTH, VALUE_WIDTH // 4)


def config_lines(found: ConfigDiff | None) -> list[str]:
    """`found` as the header's lines: `inductor fallback_random: False -> True`."""
    if found is None:
        return []
    lines = [f"{c.section} {c.key}: {_or(c.a, 'A')} -> {_or(c.b, 'B')}" for c in found.changed]
    if found.more:
        lines.append(f"… {found.more} more settings differ")
    return lines


def _or(value: str | None, side: str) -> str:
    return f"(not in {side}'s config)" if value is None else value
