"""Compiles that ran under other settings than the run's first (analyse/fold/settings.py,
compiles.json `settings`, format 1.29): corpus recompiles_dynamic (a recompile limit set mid-run,
then a function compiled with dynamic=False) read against its metrics records parsed here, every
other corpus trace (none), and hostile configs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

import tlscope
from tlscope.analyse.fold.settings import MAX_GROUPS, SettingsFold
from tlscope.cli import main as cli
from tlscope.model.events import CompilationMetrics

FIELDS = ("dynamo_config", "compiler_config", "functorch_config", "inductor_config")


def _records(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """(compile id, configs by field) of each compilation_metrics envelope, parsed here."""
    found = []
    for line in gzip.decompress(log.read_bytes()).decode().splitlines():
        if '"compilation_metrics"' in line and not line.startswith("\t"):
            envelope = json.loads(line[line.index("{") :])
            metrics = envelope["compilation_metrics"]
            cid = f"[{envelope['frame_id']}/{envelope['frame_compile_id']}]"
            found.append((cid, {f: json.loads(metrics[f]) for f in FIELDS if isinstance(metrics.get(f), str)}))
    return found


def test_recompiles_dynamic_names_the_compiles_and_the_settings() -> None:
    log = next((CORPUS / "recompiles_dynamic").glob("*.log.gz"))
    records = _records(log)
    first_id, first = records[0]
    expected: dict[str, list[tuple[str, str, str, str]]] = {}
    for cid, configs in records[1:]:
        changed = [
            (f.removesuffix("_config"), k, repr(configs[f][k]), repr(first[f][k]))
            for f in FIELDS
            for k in sorted(configs[f])
            if configs[f][k] != first[f].get(k)
        ]
        if changed:
            expected[cid] = changed
    assert sorted(expected) == ["[3/0]", "[3/1]", "[3/2]"]
    settings = tlscope.load(log).settings
    assert settings is not None and settings.first_compile == first_id
    (group,) = settings.groups
    assert group.compile_ids == sorted(expected)
    assert [(s.section, s.key, s.value, s.first) for s in group.settings] == expected["[3/0]"]
    assert [(s.key, s.value) for s in group.settings] == [
        ("automatic_dynamic_shapes", "False"),
        ("recompile_limit", "2"),
    ]
    assert settings.sentence == (
        "[3/0], [3/1], [3/2] compiled under other settings than [0/0]: dynamo automatic_dynamic_shapes False, "
        "was True; dynamo recompile_limit 2, was 8."
    )


@pytest.mark.parametrize("scenario", ["simple", "caches/run1", "pgo/run1", "reset", "export_strict", "aoti"])
def test_a_run_under_one_set_of_settings_has_none(scenario: str) -> None:
    assert tlscope.load(next((CORPUS / scenario).glob("*.log.gz"))).settings is None


def test_summary_and_report_say_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((CORPUS / "recompiles_dynamic").glob("*.log.gz"))
    assert cli(["summary", str(log), "--width", "300"]) == 0
    assert "Other settings: [3/0], [3/1], [3/2] compiled under other settings than [0/0]" in capsys.readouterr().out
    assert cli([str(log), "-o", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "index.html").read_text()
    assert '<h3 id="other-settings">' in page and "dynamo recompile_limit 2, was 8." in page


def _metrics(dynamo: str | None, inductor: str | None = '{"a": 1}') -> CompilationMetrics:
    return CompilationMetrics(dynamo_config=dynamo, inductor_config=inductor)


def test_hostile_and_many_configs() -> None:
    fold = SettingsFold()
    fold.feed("[0/0]", _metrics('{"x": 1}'))
    fold.feed("[0/1]", _metrics('{"x": 1}'))  # the same texts: nothing to say
    fold.feed("[0/2]", _metrics('{ "x" : 1 }'))  # the same values written another way
    fold.feed("[0/3]", _metrics("{not json"))  # a section that is no JSON is left out, not a change
    fold.feed("[1/0]", _metrics(None, None))  # no config logged: not compared
    assert fold.result() is None
    fold.feed("[2/0]", _metrics('{"x": 2}'))
    fold.feed("[2/1]", _metrics('{"x": 2}'))
    for i in range(3 * MAX_GROUPS):
        fold.feed(f"[3/{i}]", _metrics(json.dumps({"x": 100 + i})))
    result = fold.result()
    assert result is not None and len(result.groups) <= MAX_GROUPS
    assert result.groups[0].compile_ids == ["[2/0]", "[2/1]"]
    assert [(s.key, s.value, s.first) for s in result.groups[0].settings] == [("x", "2", "1")]
