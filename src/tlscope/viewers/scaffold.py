"""`tlscope viewer new NAME --template vanilla|react`: a template copied into ./NAME, its name filled in."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tlscope.format.errors import TlscopeError
from tlscope.viewers import LIB, TEMPLATES, template_names

#: A viewer name: usable as an npm package name, a URL segment and (with _) a Python module.
NAME = re.compile(r"^[a-z][a-z0-9-]{0,49}$")
#: Never copied: installs and build outputs of a template someone ran in place.
SKIP = {"node_modules", "dist", "test-results", "playwright-report", "__pycache__", ".vite"}
#: Files whose text gets the name filled in (placeholders below).
TEXT_SUFFIXES = {".html", ".js", ".mjs", ".ts", ".tsx", ".json", ".md", ".toml", ".css", ".py", ".txt"}
PLACEHOLDERS = ("tlscope-viewer-template", "tlscope_viewer_template")
#: Templates that bundle the JS client (a build step makes dist/ self-contained, for any host)
#: get a copy of it here; the vanilla one imports it from `tlscope serve` at /lib/.
VENDOR = {"react": Path("src/vendor/tlscope")}


class ScaffoldError(TlscopeError, ValueError):
    """The name or target is unusable."""


def module_name(name: str) -> str:
    """The Python package a viewer named `name` installs as (entry point group tlscope.viewers)."""
    return "tlscope_viewer_" + name.replace("-", "_")


def _fill(text: str, name: str) -> str:
    return text.replace(PLACEHOLDERS[0], name).replace(PLACEHOLDERS[1], module_name(name))


def new_viewer(target: Path, template: str) -> list[Path]:
    """Copy `template` into `target` (which must not exist); returns the files written."""
    name = target.name
    if not NAME.match(name):
        raise ScaffoldError(
            f"{name!r} is not a viewer name: lower-case letters, digits and '-', starting with a letter"
        )
    if template not in template_names():
        raise ScaffoldError(f"no template {template!r} (choose from {', '.join(template_names())})")
    if target.exists():
        raise ScaffoldError(f"{target} exists")
    source = TEMPLATES / template
    tmp = target.with_name(f".{name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    written: list[Path] = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if any(part in SKIP for part in rel.parts) or not path.is_file():
            continue
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in TEXT_SUFFIXES:
            dest.write_text(_fill(path.read_text(encoding="utf-8"), name), encoding="utf-8")
        else:
            shutil.copyfile(path, dest)
        written.append(target / rel)
    if template in VENDOR:
        shutil.copytree(LIB, tmp / VENDOR[template], ignore=shutil.ignore_patterns("__pycache__"))
        written.extend(target / VENDOR[template] / p.name for p in sorted(LIB.iterdir()) if p.is_file())
    tmp.rename(target)
    return written
