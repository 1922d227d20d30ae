"""docs/FORMAT.md, docs/schema/ and the model must agree: this fails when one changes alone."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import msgspec
import pytest
from helpers import REPO, parse_job

from tlscope.analyse.ranks.divergence import read_ranks_file
from tlscope.format.manifest import FORMAT_MINOR, Manifest
from tlscope.format.raw import RAW_ADDED_FIELDS
from tlscope.model.events import EVENT_TYPES
from tlscope.model.problems import ProblemKind
from tlscope.write import schema

DOCS = Path(__file__).resolve().parents[1] / "docs"
FORMAT = DOCS / "FORMAT.md"


def test_committed_schemas_match_the_model(tmp_path: Path) -> None:
    for path in schema.write(tmp_path):
        committed = DOCS / "schema" / path.name
        assert committed.exists(), f"{committed} missing: run python -m tlscope.write.schema docs"
        assert committed.read_text() == path.read_text(), (
            f"{committed} is stale: run python -m tlscope.write.schema docs"
        )
    assert sorted(p.name for p in (DOCS / "schema").iterdir()) == sorted(schema.all_schemas())


def test_generated_tables_in_format_md_are_current(tmp_path: Path) -> None:
    copy = tmp_path / "FORMAT.md"
    copy.write_text(FORMAT.read_text())
    assert not schema.update_doc(copy), "FORMAT.md tables are stale: run python -m tlscope.write.schema docs"


def test_every_event_key_and_problem_kind_is_documented() -> None:
    text = FORMAT.read_text()
    for key in EVENT_TYPES:
        assert f"| `{key}` |" in text, key
    for kind in ProblemKind:
        assert f"| `{kind.value}` |" in text, kind


def _struct_fields(tp: type[msgspec.Struct], seen: set[type]) -> set[str]:
    """Field names of a Struct and of every Struct nested in its field types."""
    if tp in seen:
        return set()
    seen.add(tp)
    names = set(tp.__struct_fields__)
    for hint in typing.get_type_hints(tp).values():
        for arg in _flatten(hint):
            if isinstance(arg, type) and issubclass(arg, msgspec.Struct):
                names |= _struct_fields(arg, seen)
    return names


def _flatten(hint: object) -> list[object]:
    args = typing.get_args(hint)
    return [hint] if not args else [a for arg in args for a in _flatten(arg)]


@pytest.mark.parametrize("name", sorted(_struct_fields(Manifest, set())))
def test_every_manifest_field_is_documented(name: str) -> None:
    assert f"`{name}`" in FORMAT.read_text(), f"manifest field {name!r} missing from FORMAT.md"


@pytest.mark.parametrize("name", RAW_ADDED_FIELDS)
def test_every_raw_field_is_documented(name: str) -> None:
    section = FORMAT.read_text().split("## 3. raw.jsonl", 1)[1].split("## 4.", 1)[0]
    assert re.search(rf"\| `{name}` \|", section), f"raw.jsonl field {name!r} missing from section 3"


def test_every_top_level_output_file_is_documented(tmp_path: Path, tlparse_traces: Path) -> None:
    """Whatever a real run writes at the top of OUT must be named in FORMAT.md's folder table."""
    from tlscope.cli import main

    out = tmp_path / "out"
    assert main([str(tlparse_traces / "inputs" / "simple.log"), "-o", str(out), "--no-browser"]) == 0
    table = FORMAT.read_text().split("## 1. The folder", 1)[1].split("## 2.", 1)[0]
    for entry in sorted(out.iterdir()):
        name = entry.name + ("/" if entry.is_dir() and entry.name in ("payloads", "dump_file") else "")
        if entry.is_dir() and re.fullmatch(r"[-\d]+_[-\d]+_[-\d]+_[-\d]+|unknown_\d+", entry.name):
            continue  # compile-id folders: `<compile dir>/…` in the table
        assert f"`{name}" in table, f"{name} written by tlscope but not in FORMAT.md section 1"


@pytest.mark.parametrize("job", ["ranks_shifted_4", "ranks_cold_2"])
def test_ranks_json_is_exactly_its_schema_type(job: str, tmp_path: Path) -> None:
    """A job's ranks.json, as tlscope writes it, is what docs/schema/ranks.schema.json describes:
    read by the one reader (`read_ranks_file`, typed `RanksFile`) and written back, the same JSON,
    no field outside the type."""
    found, _ = parse_job(REPO / "corpus" / "traces" / job, tmp_path / "out")
    typed = read_ranks_file((tmp_path / "out" / "ranks.json").read_bytes())
    assert msgspec.to_builtins(typed) == found
    assert found["format_minor"] == FORMAT_MINOR
    documented = json.loads((DOCS / "schema" / "ranks.schema.json").read_text())
    assert set(documented["$defs"]["RanksFile"]["properties"]) == set(found)


def test_the_manifest_table_names_the_current_minor_and_each_minor_once() -> None:
    """manifest.json's `format_minor` row gives the current number and lists every minor's
    addition up to it (it said 42 two minors on)."""
    import re

    row = next(line for line in FORMAT.read_text().splitlines() if line.startswith("| `format_minor` |"))
    current = re.search(r"\| `(\d+)`: additions since 1\.0", row)
    assert current is not None and int(current[1]) == FORMAT_MINOR
    listed = [int(n) for n in re.findall(r"(?:\(|; )(\d+): ", row)]
    assert listed == list(range(1, FORMAT_MINOR + 1))
