"""docs/ARCHITECTURE.md stays true: every path it names exists (a moved folder fails here), every
module and command is on it, every class or constant it names is defined and every dotted name
resolves, and how often a log is read is what it says."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO

DOC = REPO / "docs" / "ARCHITECTURE.md"
PACKAGE = REPO / "src" / "tlscope"
#: A code span that names a file or folder: `src/tlscope/read/`, `pipeline/single.py`, `glog.py`.
_PATH = re.compile(r"`([\w./-]+(?:/|\.py|\.md))`")
_ROOTS = ("src/", "docs/", "tests/", "tools/", "bench/", "corpus/")


def named_paths() -> list[str]:
    return sorted(set(_PATH.findall(DOC.read_text(encoding="utf-8"))))


def resolve(name: str) -> Path | None:
    """Where a named path is: from the repository root, else in the package: from its top, or
    below a folder the text is about (`ranks/compare.py` in analyse/, a bare `glog.py` in read/)."""
    if name.startswith(_ROOTS):
        return REPO / name
    if (PACKAGE / name).exists():
        return PACKAGE / name
    return next(PACKAGE.rglob(name.rstrip("/")), None)


def test_every_path_the_map_names_exists() -> None:
    names = named_paths()
    assert len(names) > 30  # the map names its folders and modules
    missing = [n for n in names if (path := resolve(n)) is None or not path.exists()]
    assert missing == [], f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_map_names_every_folder_of_the_package() -> None:
    folders = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    text = DOC.read_text(encoding="utf-8")
    assert {f for f in folders if f"src/tlscope/{f}/" not in text} == set()


def _code_spans() -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", DOC.read_text(encoding="utf-8")))


def test_every_module_is_on_the_map() -> None:
    """A newcomer finds every module on the map (by its file name: no two share one, test_layout).
    A command's module is there by the `<name>_command.py` rule and its name in COMMANDS."""
    from tlscope.commands import COMMANDS

    spans = _code_spans()
    commands = {target.split(":")[0].rsplit(".", 1)[-1] + ".py" for target in COMMANDS.values()}
    assert "<name>_command.py" in " ".join(spans)
    skipped = ("templates", "node_modules")
    modules = [p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" and not set(skipped) & set(p.parts)]
    missing = [
        p.relative_to(PACKAGE).as_posix()
        for p in modules
        if not any(s == p.name or s.endswith("/" + p.name) for s in spans) and p.name not in commands
    ]
    assert len(modules) > 100
    assert missing == [], f"docs/ARCHITECTURE.md does not name these modules: {missing}"


def test_the_map_names_every_command() -> None:
    from tlscope.commands import COMMANDS

    row = next(
        line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `src/tlscope/commands/`")
    )
    assert [c for c in COMMANDS if f"`{c}`" not in row] == []


def _defined_names() -> set[str]:
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    # The JS client's types and classes, which the map names too (`CompileView`).
    js_name = re.compile(r"@typedef \{.*?\} (\w+)|export class (\w+)")
    for path in (PACKAGE / "viewers" / "lib").glob("*.js"):
        names.update(n for pair in js_name.findall(path.read_text("utf-8")) for n in pair if n)
    return names


def test_every_class_and_constant_the_map_names_is_defined() -> None:
    """`RankSummary`, `COMMANDS`, `OutputFolder`...: a renamed or removed one (`RankStats`) fails here."""
    named = {s for s in _code_spans() if re.fullmatch(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*|[A-Z][A-Z0-9_]{2,}", s)}
    assert len(named) > 10
    assert sorted(named - _defined_names()) == []


#: Dotted spans that are not module paths: a handler's `state` argument and its attribute.
_NOT_MODULE_PATHS = {"state.outputs"}
_FILE_SUFFIX = re.compile(r"\.(py|md|json|jsonl|js|mjs|ts|html|bin|log|gz|css|toml)$")


def test_every_dotted_name_the_map_gives_resolves() -> None:
    """`tlscope.load(path)`, `tlscope.timeline.read(path)`, `pipeline.parse.parse`, `pages.render`:
    each is a module's attribute (a short name's module found by its file name, unique in the package)."""
    spans = {re.sub(r"\(.*", "", s) for s in _code_spans() if re.fullmatch(r"[a-z_]+(\.[a-z_]\w*)+(\(.*\).*)?", s)}
    dotted = {s for s in spans if not _FILE_SUFFIX.search(s)} - _NOT_MODULE_PATHS
    assert {"tlscope.load", "tlscope.timeline.read", "pipeline.parse.parse"} <= dotted
    assert [name for name in sorted(dotted) if _resolve(name) is None] == []


def _resolve(name: str) -> Any:
    """The object a dotted name gives: the module of its longest prefix (the one module whose dotted
    path is or ends with it), then attributes; None when there is none."""
    parts = name.split(".")
    paths = [p.relative_to(PACKAGE.parent).with_suffix("").as_posix() for p in PACKAGE.rglob("*.py")]
    modules = {path.removesuffix("/__init__").replace("/", ".") for path in paths if "node_modules" not in path}
    for at in range(len(parts), 0, -1):
        head = ".".join(parts[:at])
        found = sorted(m for m in modules if m == head or m.endswith("." + head))
        if len(found) != 1:
            continue
        value: Any = importlib.import_module(found[0])
        for attr in parts[at:]:
            value = getattr(value, attr, None)
        return value
    return None


def test_the_schema_command_the_docs_give_is_right() -> None:
    """`python -m tlscope.write.schema ROOT` writes ROOT/schema/ and ROOT/FORMAT.md's tables: ROOT is
    docs/ (VIEWERS.md said docs/schema, which writes docs/schema/schema/ and updates no table)."""
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    given = [
        (d.name, m)
        for d in docs
        for m in re.findall(r"python -m tlscope\.write\.schema ?([\w/.-]*)", d.read_text("utf-8"))
    ]
    assert len(given) >= 3
    assert [(doc, root) for doc, root in given if not (REPO / (root or "docs") / "FORMAT.md").is_file()] == []


def _log_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths LogSource opens from now on (every read of a log's bytes goes through it)."""
    from tlscope.read import source

    opened: list[str] = []
    original = source.LogSource.__init__

    def counting(self: source.LogSource, path: Path, *args: Any, **kwargs: Any) -> None:
        opened.append(Path(path).name)
        original(self, path, *args, **kwargs)

    monkeypatch.setattr(source.LogSource, "__init__", counting)
    return opened


@pytest.mark.parametrize("report", [True, False])
def test_a_log_is_read_as_the_map_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: bool) -> None:
    """Parsed once; the report's raw.log copy is the one other read (none without a report)."""
    from tlscope.pipeline.parse import parse

    log = next((CORPUS / "simple").glob("*.log.gz"))
    opened = _log_opens(monkeypatch)
    parse(log, tmp_path / "out", report=report)
    # The muxed-log sniff of a single file (its head), the parse, and the report's copy.
    assert opened == [log.name] * (3 if report else 2)


def test_a_muxed_log_is_read_twice_before_its_ranks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sniff (a head), the process -> rank map, then the split with that map: never a third pass."""
    from tlscope.pipeline.parse import parse

    log = next((CORPUS / "muxed").glob("*.log.gz"))
    opened = _log_opens(monkeypatch)
    parse(log, tmp_path / "out", jobs=1)
    assert opened.count(log.name) == 3
