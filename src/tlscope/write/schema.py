"""JSON Schemas of the format, generated from the model: `python -m tlscope.write.schema DIR`.

docs/schema/ holds the output; a test regenerates it and fails when the committed files,
the model and docs/FORMAT.md disagree. The generated tables in FORMAT.md come from here too.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, get_type_hints

import msgspec

from tlscope.analyse.fold.phases import PHASES
from tlscope.analyse.ranks.divergence import RanksFile
from tlscope.format.compiles import GUARD_KINDS, CompilesFile
from tlscope.format.graph_file import GraphFile
from tlscope.format.logsize import LogSize
from tlscope.format.manifest import FORMAT_VERSION, Manifest
from tlscope.format.provenance_file import ProvenanceFile
from tlscope.format.raw import RawEventFields
from tlscope.format.status import STATUSES
from tlscope.model.events import EVENT_TYPES, CompilationMetrics, Event
from tlscope.model.problems import NOTE_DOCS, PROBLEM_DOCS, ProblemKind

_ID_BASE = "https://tlscope.invalid/schema/v{version}/"


def _cleaned(value: Any) -> Any:
    """`value` with every `description` dedented as `inspect.cleandoc` does: msgspec 0.23 dedents a
    struct's docstring and 0.22 kept its indentation, so the committed schemas would depend on the
    msgspec a machine has."""
    if isinstance(value, dict):
        return {
            k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else _cleaned(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value


def _document(title: str, root: type, description: str) -> dict[str, Any]:
    (schema,), components = msgspec.json.schema_components([root], ref_template="#/$defs/{name}")
    schema, components = _cleaned(schema), _cleaned(components)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _ID_BASE.format(version=FORMAT_VERSION) + title,
        "title": title,
        "description": description,
        **schema,
        "$defs": components,
    }


def events_schema() -> dict[str, Any]:
    """One schema per event key's metadata, plus the Frame used by every stack."""
    types = list(EVENT_TYPES.values())
    schemas, components = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    schemas, components = _cleaned(list(schemas)), _cleaned(components)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _ID_BASE.format(version=FORMAT_VERSION) + "events.schema.json",
        "title": "events.schema.json",
        "description": (
            "Metadata of each known event key (the value under that key in an envelope / raw.jsonl line). "
            "Every field is optional and unknown fields are allowed: torch versions add and drop them."
        ),
        "properties": {key: schema for key, schema in zip(EVENT_TYPES, schemas, strict=True)},
        "$defs": components,
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    return {
        "manifest.schema.json": _document(
            "manifest.schema.json", Manifest, "manifest.json: what was read, written and went wrong."
        ),
        "raw_event.schema.json": _document(
            "raw_event.schema.json",
            RawEventFields,
            "Fields tlscope adds to each raw.jsonl event line; the line's other keys are the envelope's own.",
        ),
        "events.schema.json": events_schema(),
        "compiles.schema.json": _document(
            "compiles.schema.json",
            CompilesFile,
            "compiles.json: one entry per compile id, and the distinct graph breaks.",
        ),
        "log_size.schema.json": _document(
            "log_size.schema.json", LogSize, "log_size.json: the input's bytes and lines, every byte attributed."
        ),
        "graph.schema.json": _document(
            "graph.schema.json", GraphFile, "graphs/<md5>.json: an FX graph payload as data (since 1.10)."
        ),
        "ranks.schema.json": _document(
            "ranks.schema.json",
            RanksFile,
            "ranks.json: a multi-rank job's rank lines, how its ranks diverge and its stragglers (since 1.5).",
        ),
        "provenance.schema.json": _document(
            "provenance.schema.json",
            ProvenanceFile,
            "provenance.json: Inductor provenance of every compilation that logged it (since 1.13).",
        ),
    }


def render(schema: dict[str, Any]) -> str:
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n"


def event_table() -> str:
    """The Markdown table of event keys and fields that FORMAT.md embeds."""
    rows = ["| Event key | Fields (all optional) | What it is |", "|---|---|---|"]
    for key, cls in EVENT_TYPES.items():
        if cls is not CompilationMetrics and issubclass(cls, CompilationMetrics):
            fields = "same as `compilation_metrics`"
        else:
            fields = ", ".join(f"`{name}`: {_type_name(t)}" for name, t in _fields(cls)) or "—"
        rows.append(f"| `{key}` | {fields} | {cls.DOC} |")
    return "\n".join(rows)


def problem_table() -> str:
    rows = ["| Kind | Meaning |", "|---|---|"]
    rows += [f"| `{kind.value}` | {PROBLEM_DOCS[kind]} |" for kind in ProblemKind]
    return "\n".join(rows)


def note_table() -> str:
    return _table(("Kind", "The known torch quirk"), {kind.value: NOTE_DOCS[kind] for kind in NOTE_DOCS})


def _fields(cls: type[Event]) -> list[tuple[str, Any]]:
    hints = get_type_hints(cls)
    return [(name, hints[name]) for name in cls.__struct_fields__]


def _type_name(tp: Any) -> str:
    text = str(tp).replace("tlscope.model.events.", "").replace("typing.", "")
    return text.replace("|", "\\|")


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in all_schemas().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


def _table(header: tuple[str, str], rows: dict[str, str]) -> str:
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| `{key}` | {text} |" for key, text in rows.items()]
    return "\n".join(lines)


def status_table() -> str:
    """The compiles.json status vocabulary, most severe first."""
    return _table(("Status", "Meaning (the first that applies, in this order)"), STATUSES)


def guard_kind_table() -> str:
    return _table(("Kind", "The guard failed because"), GUARD_KINDS)


def phase_table() -> str:
    return _table(("Phase", "What it covers"), PHASES)


GENERATED = {
    "events": event_table,
    "problems": problem_table,
    "notes": note_table,
    "statuses": status_table,
    "guard_kinds": guard_kind_table,
    "phases": phase_table,
}


def update_doc(doc: Path) -> bool:
    """Rewrite the `<!-- generated:NAME -->` blocks of a Markdown file; True if it changed."""
    text = doc.read_text(encoding="utf-8")
    new = text
    for name, make in GENERATED.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        head, sep, rest = new.partition(start)
        _, sep2, tail = rest.partition(end)
        if not sep or not sep2:
            raise ValueError(f"{doc} lacks the {start} ... {end} block")
        new = f"{head}{start}\n{make()}\n{end}{tail}"
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path("docs")
    for path in write(root / "schema"):
        print(path)
    if update_doc(root / "FORMAT.md"):
        print(root / "FORMAT.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
