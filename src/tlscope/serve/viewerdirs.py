"""The viewers a server hosts at /viewers/<name>/ (contract 3), and where each one's files are.

Three sources, later ones winning a name (so `--viewer ./my-explorer` can stand in for an
installed one while it is being developed):

1. the built-in explorer (`tlscope.viewers.EXPLORER`);
2. installed packages: entry points in the group `tlscope.viewers`, each naming a zero-argument
   callable that returns the folder holding the viewer's index.html (name = entry point name);
   one that fails to load is skipped with a warning, never taking the server down;
3. `--viewer PATH` (and the config's `viewers`): a folder with index.html, or whose
   `dist/index.html` exists (a built React viewer, served from dist/); name = the folder's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from tlscope.format.errors import TlscopeError
from tlscope.viewers import EXPLORER

GROUP = "tlscope.viewers"
DEFAULT = "explorer"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ViewerError(TlscopeError):
    """A --viewer PATH that is not a viewer folder."""


@dataclass(frozen=True)
class Viewer:
    name: str
    folder: Path
    #: "built-in", "package <dist name>" or "path".
    source: str

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "url": f"/viewers/{self.name}/", "source": self.source}


def viewer_folder(path: Path) -> Path:
    """The folder holding the viewer's index.html: PATH/dist when built, else PATH. Raises ViewerError.

    dist/ first: a Vite project's own index.html is its dev-server entry (it names /src/main.tsx),
    which only the build turns into a page that works when served as files.
    """
    for folder in (path / "dist", path):
        if (folder / "index.html").is_file():
            return folder.resolve()
    raise ViewerError(f"{path}: no index.html in it or in its dist/ (run the viewer's build first?)")


def from_entry_points(warn: list[str]) -> list[Viewer]:
    found = []
    for ep in entry_points(group=GROUP):
        try:
            folder = Path(ep.load()())
            if not _NAME.match(ep.name) or not (folder / "index.html").is_file():
                raise ViewerError(f"{folder} holds no index.html" if _NAME.match(ep.name) else "bad name")
        except Exception as err:  # third-party code: anything may go wrong in it
            warn.append(f"viewer {ep.name!r} ({ep.value}) skipped: {err}")
            continue
        dist = ep.dist.name if ep.dist is not None else "?"
        found.append(Viewer(ep.name, folder.resolve(), f"package {dist}"))
    return found


def discover(paths: Iterable[str], warn: list[str]) -> dict[str, Viewer]:
    """Every viewer by name (see the module doc); raises ViewerError for a bad --viewer PATH."""
    viewers = {DEFAULT: Viewer(DEFAULT, EXPLORER, "built-in")}
    for viewer in from_entry_points(warn):
        if viewer.name == DEFAULT and viewer.folder == EXPLORER.resolve():
            continue
        viewers[viewer.name] = viewer
    for raw in paths:
        path = Path(raw).expanduser()
        folder = viewer_folder(path)
        name = path.resolve().name
        if not _NAME.match(name):
            raise ViewerError(f"{path}: the folder name {name!r} cannot be a viewer name ([A-Za-z0-9._-])")
        viewers[name] = Viewer(name, folder, "path")
    return viewers
