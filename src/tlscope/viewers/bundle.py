"""One script out of the explorer's ES modules, for `tlscope pack` (module files do not load from file://).

Each module becomes a function scope that returns its exports; its imports become
destructuring of the modules it depends on, evaluated first. Only the import and export
forms the project's modules use are understood; anything else is an error, never a silent
miss: `import { a, b as c } from 'x.js';`, `export function|class|const|let NAME`,
`export { a, b } from 'x.js';` (also of names the module imports from there, to use them).
Specifiers are `/lib/...` (the client) or relative.
"""

from __future__ import annotations

import re
from pathlib import Path

from tlscope.format.errors import TlscopeError
from tlscope.viewers import LIB

_IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'([^']+)';[ \t]*$", re.M)
_REEXPORT = re.compile(r"^export\s*\{([^}]*)\}\s*from\s*'([^']+)';[ \t]*$", re.M)
_DECL = re.compile(r"^export\s+((?:async\s+)?function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)", re.M)
_OTHER = re.compile(r"^\s*(import|export)\b[^(.]", re.M)


class BundleError(TlscopeError, ValueError):
    """A module uses a form the bundler does not understand, or imports in a cycle."""


def _names(spec: str) -> list[tuple[str, str]]:
    """`a, b as c` -> [(a, a), (b, c)] (imported name, local name)."""
    out = []
    for item in spec.split(","):
        parts = item.split()
        if not parts:
            continue
        if len(parts) == 3 and parts[1] == "as":
            out.append((parts[0], parts[2]))
        elif len(parts) == 1:
            out.append((parts[0], parts[0]))
        else:
            raise BundleError(f"cannot read import list {spec!r}")
    return out


def _resolve(spec: str, importer: Path) -> Path:
    if spec.startswith("/lib/"):
        return (LIB / spec[len("/lib/") :]).resolve()
    if spec.startswith("./") or spec.startswith("../"):
        return (importer.parent / spec).resolve()
    raise BundleError(f"{importer.name}: cannot bundle import of {spec!r}")


def _var(path: Path, order: dict[Path, int]) -> str:
    return f"__tlscope_m{order[path]}"


def _visit(path: Path, seen: dict[Path, str], stack: list[Path], order: list[Path]) -> None:
    if path in stack:
        raise BundleError(f"import cycle through {path.name}")
    if path in seen:
        return
    text = path.read_text(encoding="utf-8")
    seen[path] = text
    stack.append(path)
    for pattern in (_IMPORT, _REEXPORT):
        for match in pattern.finditer(text):
            _visit(_resolve(match.group(2), path), seen, stack, order)
    stack.pop()
    order.append(path)


def _module(path: Path, text: str, index: dict[Path, int]) -> str:
    head: list[str] = []
    exports: list[str] = []
    bound: dict[str, tuple[str, str]] = {}  # local name -> (module variable, imported name)

    def bind(match: re.Match[str], export: bool) -> str:
        source = _var(_resolve(match.group(2), path), index)
        pairs = _names(match.group(1))
        # A name both imported and re-exported (`import { a } from 'x'; export { a } from 'x';`)
        # is bound once; the same local name from elsewhere is the module's error, kept as one.
        fresh = [(a, b) for a, b in pairs if bound.get(b) != (source, a)]
        bound.update((b, (source, a)) for a, b in fresh)
        if fresh:
            head.append("const { " + ", ".join(f"{a}: {b}" for a, b in fresh) + f" }} = {source};")
        if export:
            exports.extend(b for _, b in pairs)
        return ""

    body = _IMPORT.sub(lambda m: bind(m, False), text)
    body = _REEXPORT.sub(lambda m: bind(m, True), body)
    exports.extend(m.group(2) for m in _DECL.finditer(body))
    body = _DECL.sub(lambda m: f"{m.group(1)} {m.group(2)}", body)
    leftover = _OTHER.search(body)
    if leftover:
        raise BundleError(f"{path.name}: cannot bundle {leftover.group(0).strip()!r}")
    returned = "return { " + ", ".join(exports) + " };"
    return f"// {path.name}\nconst {_var(path, index)} = (() => {{\n" + "\n".join(head) + body + returned + "\n})();\n"


def modules(entry: Path) -> list[Path]:
    """The module files `entry` imports, directly or not, dependencies first and `entry` last."""
    order: list[Path] = []
    _visit(entry.resolve(), {}, [], order)
    return order


def bundle(entry: Path) -> str:
    """The module graph from `entry` as one script (for an inline `<script type="module">`, or a
    module file of its own: it imports and exports nothing)."""
    seen: dict[Path, str] = {}
    order: list[Path] = []
    _visit(entry.resolve(), seen, [], order)
    index = {path: i for i, path in enumerate(order)}
    script = "".join(_module(path, seen[path], index) for path in order)
    if re.search(r"</script", script, re.I):
        raise BundleError("a module contains '</script', which would end the inline script")
    return script
