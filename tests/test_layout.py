"""The house rules every module of src/tlscope keeps (issue 10), checked from the source.

* no import cycle between modules (imports inside functions count: they run too);
* exactly one module, read/glog.py, holds a regular expression matching a glog prefix;
* no function longer than 60 lines;
* nothing below commands/ imports a command.

Each failure names the module (and function) at fault, so a new module is easy to fix.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

from helpers import REPO

SRC = REPO / "src"
PACKAGE = SRC / "tlscope"
MAX_FUNCTION_LINES = 60
#: Glog prefixes as PyTorch writes them; a pattern "matches a glog prefix" when its match spans one.
GLOG_SAMPLES = (
    "I1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] ",
    "V0101 00:00:00.000001 7 /a/b/c.py:1] ",
)


def modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the package."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports anywhere in its source (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in known else base)
    return {t for t in targets if t in known and t != name}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    graph = import_graph()
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    described = ["; ".join(f"{m} imports {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "import cycles:\n" + "\n".join(described)


def test_nothing_below_commands_imports_a_command() -> None:
    """Commands sit on top: read, model, analyse, write, pipeline (and serve...) never import one."""
    graph = import_graph()
    top = {"tlscope.cli", "tlscope.__main__"}
    offenders = {
        name: sorted(t for t in targets if t.startswith("tlscope.commands."))
        for name, targets in graph.items()
        if name not in top and not name.startswith("tlscope.commands")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def _spans_glog_prefix(pattern: re.Pattern[str] | re.Pattern[bytes]) -> bool:
    for sample in GLOG_SAMPLES:
        text: str | bytes = sample if isinstance(pattern.pattern, str) else sample.encode()
        match = pattern.search(text)  # type: ignore[arg-type]
        if match is not None and match.start() <= 1 and match.end() >= len(sample) - 1:
            return True
    return False


def _literal_patterns(path: Path) -> Iterator[re.Pattern[str] | re.Pattern[bytes]]:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > 8:
            try:
                yield re.compile(node.value)
            except (re.error, OverflowError, RecursionError):
                continue


def _module_patterns(name: str, path: Path) -> Iterator[re.Pattern[str] | re.Pattern[bytes]]:
    """Compiled patterns the module defines (not those it imports from another)."""
    imported_names = {
        alias.asname or alias.name
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    module = importlib.import_module(name)
    for key, value in vars(module).items():
        if isinstance(value, re.Pattern) and key not in imported_names:
            yield value


def glog_modules() -> list[str]:
    """Modules holding a pattern that matches a glog prefix: as a literal, or a compiled global
    (which may be assembled from pieces)."""
    holders = []
    for name, path in modules().items():
        if name.endswith("__main__"):
            continue  # importing it runs the command
        patterns = [*_literal_patterns(path), *_module_patterns(name, path)]
        if any(_spans_glog_prefix(p) for p in patterns):
            holders.append(name)
    return holders


def test_the_glog_check_recognises_a_glog_regex() -> None:
    assert _spans_glog_prefix(re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]\n]*\] "))
    assert not _spans_glog_prefix(re.compile(r"\d\d:\d\d:\d\d"))  # a time is not a prefix
    assert not _spans_glog_prefix(re.compile(rb'"rank"\s*:\s*(\d+)'))


def test_exactly_one_module_holds_a_glog_prefix_regex() -> None:
    assert glog_modules() == ["tlscope.read.glog"]


def long_functions(limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """`module.qualname: N lines` for every function of more than `limit` lines (def to last line,
    docstring included, decorators not)."""
    found = []
    for name, path in modules().items():
        work: list[tuple[str, ast.AST]] = [("", _tree(path))]
        while work:
            prefix, node = work.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualname = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        length = (child.end_lineno or child.lineno) - child.lineno + 1
                        if length > limit:
                            found.append(f"{name}.{qualname}: {length} lines (line {child.lineno})")
                    work.append((f"{qualname}.", child))
                else:
                    work.append((prefix, child))
    return sorted(found)


def test_the_length_check_measures_functions() -> None:
    assert any(entry.startswith("tlscope.") for entry in long_functions(limit=5))
    assert long_functions(limit=10_000) == []


def test_no_function_longer_than_60_lines() -> None:
    found = long_functions()
    assert not found, f"functions longer than {MAX_FUNCTION_LINES} lines (split them):\n" + "\n".join(found)


#: Markup a module producing HTML would hold (parsing HTML, e.g. stripping tags, needs none of it).
_HTML_TAG = re.compile(r"<(a|br|code|details|div|h\d|li|p|pre|span|summary|table|td|tr|ul)[\s>/]")


def html_in_analyse() -> list[str]:
    """Modules of analyse/ that import a markup library or hold an HTML tag in a literal."""
    found = []
    for name, path in modules().items():
        if not name.startswith("tlscope.analyse"):
            continue
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(n.split(".")[0] in ("markupsafe", "jinja2") for n in names):
                    found.append(f"{name} imports {names}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _HTML_TAG.search(node.value):
                found.append(f"{name} line {node.lineno}: {node.value[:60]!r}")
    return found


def test_analyses_return_data_not_html() -> None:
    """analyse/ holds pure functions returning data; write/ renders it (issue 10)."""
    assert len([n for n in modules() if n.startswith("tlscope.analyse")]) >= 8
    assert html_in_analyse() == []


def test_tests_import_shared_helpers_one_way() -> None:
    """Shared test helpers come from tests/helpers.py; never from conftest or another test module."""
    offenders = []
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.walk(_tree(path)):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.split(".")[0] in ("conftest", "tests") or name.startswith("test_"):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


#: The layers, bottom to top, and what each may import (issue 19). `model/` and `format/` (the
#: output format: schemas, reader, errors) at the bottom with `lifetime` (how a process ends),
#: `terminal` (what reaches a terminal) and the package itself (`__version__`); `read/` (the log)
#: and `analyse/` (pure folds) side by side, neither importing the other; `write/` (files, and the
#: sink seam), then `pipeline/` (the only layer that reads a log); on top the Python API (`api`,
#: `timeline`), `viewers/`, `serve/` and `commands/`, which reach the log only through the
#: pipeline; the console script last.
_BOTTOM = frozenset({"model", "format", "lifetime", "terminal", "tlscope"})
LAYERS: dict[str, frozenset[str]] = {
    "model": frozenset({"model", "tlscope"}),
    "format": frozenset({"model", "format", "tlscope"}),
    "lifetime": frozenset({"lifetime", "tlscope"}),
    "terminal": frozenset({"terminal", "tlscope"}),
    "read": _BOTTOM | {"read"},
    "analyse": _BOTTOM | {"analyse"},
    "write": _BOTTOM | {"read", "analyse", "write"},
    "pipeline": _BOTTOM | {"read", "analyse", "write", "pipeline"},
    "api": _BOTTOM | {"analyse", "pipeline", "api"},
    "timeline": _BOTTOM | {"timeline"},
    "viewers": _BOTTOM | {"analyse", "write", "pipeline", "viewers"},
    "serve": _BOTTOM | {"analyse", "write", "pipeline", "viewers", "serve"},
    "commands": _BOTTOM | {"analyse", "write", "pipeline", "api", "timeline", "viewers", "serve", "commands"},
    "cli": _BOTTOM | {"commands", "cli"},
}


def layer_of(module: str) -> str:
    """`tlscope.read.reader` -> `read`; the package itself is `tlscope`, its entry points `cli`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "tlscope"
    return "cli" if parts[1] in ("cli", "__main__") else parts[1]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for name, targets in sorted(graph.items()):
        allowed = LAYERS.get(layer_of(name))
        if allowed is None:
            continue  # the package's __init__ (tlscope): lazy, by name only
        found += [f"{name} imports {t}" for t in sorted(targets) if layer_of(t) not in allowed]
    return found


def test_the_layer_check_finds_an_upward_import() -> None:
    graph = {
        "tlscope.read.reader": {"tlscope.format.raw", "tlscope.analyse.fold.compile_fold"},
        "tlscope.api": {"tlscope.read.inputs", "tlscope.pipeline.parse"},
        "tlscope.write.format": {"tlscope.read.reader"},
        # The sink seam upside down (issue 19): a writer reaching up into the pipeline.
        "tlscope.write.report.sink": {"tlscope.pipeline.context"},
    }
    assert layer_violations(graph) == [
        "tlscope.api imports tlscope.read.inputs",
        "tlscope.read.reader imports tlscope.analyse.fold.compile_fold",
        "tlscope.write.report.sink imports tlscope.pipeline.context",
    ]


def test_every_module_is_in_a_layer() -> None:
    unknown = {layer_of(name) for name in modules()} - set(LAYERS) - {"tlscope"}
    assert unknown == set(), f"add these folders to LAYERS: {sorted(unknown)}"


def test_imports_go_down_the_layers() -> None:
    """Zero exceptions: a new import across layers means a module is in the wrong room."""
    assert layer_violations(import_graph()) == []


#: The format's file names: spelled only in format/ (layout.py) and by the writer that makes them.
FORMAT_FILE_NAMES = ("manifest.json", "compiles.json", "raw.jsonl", "log_size.json")
#: The template viewers `tlscope viewer new` copies out are the user's code, written against the
#: served files by their documented names (docs/VIEWERS.md), not against tlscope's modules.
_FILE_NAME_OWNERS = (
    "tlscope.format.",
    "tlscope.write.format",
    "tlscope.write.answers_sink",
    "tlscope.viewers.templates.",
)
#: A string that is a file name or a relative path ending in one (`rank_0/raw.jsonl`, `/raw.jsonl`),
#: not prose that mentions one (a help text, an error message).
_FILE_NAME = re.compile(r"^[\w./-]*(" + "|".join(re.escape(n) for n in FORMAT_FILE_NAMES) + ")$")


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def file_name_makers(known: dict[str, Path]) -> list[str]:
    """`module line N: 'name'` for every string in code (docstrings aside) that makes a format file name."""
    found = []
    for name, path in known.items():
        if name.startswith(_FILE_NAME_OWNERS):
            continue
        tree = _tree(path)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and id(node) not in docs and _FILE_NAME.match(node.value):  # type: ignore[attr-defined]
                found.append(f"{name} line {node.lineno}: {node.value!r}")  # type: ignore[attr-defined]
    return sorted(found)


def test_the_file_name_check_sees_names_and_paths_not_prose(tmp_path: Path) -> None:
    assert _FILE_NAME.match("raw.jsonl") and _FILE_NAME.match("rank_0/manifest.json") and _FILE_NAME.match("/raw.jsonl")
    assert not _FILE_NAME.match("holds no manifest.json or multi_rank_summary.json")
    source = tmp_path / "m.py"
    source.write_text('"""Reads manifest.json."""\nNAME = "compiles.json"\nTEXT = f"{1}/raw.jsonl"\n')
    assert file_name_makers({"tlscope.m": source}) == [
        "tlscope.m line 2: 'compiles.json'",
        "tlscope.m line 3: '/raw.jsonl'",
    ]


def test_only_the_format_package_and_its_writer_spell_the_format_file_names() -> None:
    """Everything else asks format/layout.py (what the files are called) or the reader (format/folder.py)."""
    assert file_name_makers(modules()) == []


def test_no_two_classes_share_a_name() -> None:
    """A name says which class: two `Trace`s or `TraceError`s (issue 19) read as one in a traceback."""
    seen: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef):
                seen.setdefault(node.name, []).append(name)
    assert {cls: where for cls, where in seen.items() if len(where) > 1} == {}


_BUILTIN_ERRORS = {"Exception", "ValueError", "LookupError", "RuntimeError", "OSError", "KeyError"}


def test_every_error_a_command_reports_is_a_tlscope_error() -> None:
    """Exception classes of the package derive from format/errors.py's TlscopeError (the CLI catches
    that one class), except those caught where they are raised or turned into something else: a
    decode's or a path's verdict (JsonError, BadPath, BadCompileId, UnsafePath), a rank's failure
    on its landing page (BadArtifact, Unmergeable), an HTTP answer (ApiError, the protocol's
    _Refused, the store's Refused connection), diff's usage line (_Usage)."""
    internal = {"JsonError", "BadPath", "BadCompileId", "BadArtifact", "Unmergeable", "UnsafePath", "Refused"}
    internal |= {"ApiError", "_Refused", "_Usage", "TlscopeError"}
    outside = []
    for name, path in modules().items():
        for node in _tree(path).body:
            if not isinstance(node, ast.ClassDef) or node.name in internal:
                continue
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if bases & {"Exception", "ValueError", "LookupError", "RuntimeError", "OSError"} and not bases - {
                "Exception",
                "ValueError",
                "LookupError",
                "RuntimeError",
                "OSError",
            }:
                outside.append(f"{name}.{node.name}")
    assert outside == []


def shared_basenames(paths: Iterator[Path] | list[Path]) -> dict[str, list[str]]:
    """File name -> the modules that have it, for names used by more than one (`__init__.py` aside:
    a package's name is its folder's)."""
    seen: dict[str, list[str]] = {}
    for path in paths:
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(path.relative_to(PACKAGE).as_posix())
    return {name: where for name, where in seen.items() if len(where) > 1}


def test_the_basename_check_finds_a_shared_name() -> None:
    paths = [PACKAGE / "commands" / "diff.py", PACKAGE / "analyse" / "diff.py", PACKAGE / "read" / "__init__.py"]
    paths.append(PACKAGE / "write" / "__init__.py")
    assert shared_basenames(paths) == {"diff.py": ["commands/diff.py", "analyse/diff.py"]}


def test_no_two_modules_share_a_file_name() -> None:
    """A module's name says which room it is in (issue 19): a traceback, an import or a search for
    `parse.py` names one file, not a command, the pipeline's entry point and the FX graph parser.
    No exception: a command's module is `<name>_command.py` beside the code doing its work."""
    assert shared_basenames(list(modules().values())) == {}
