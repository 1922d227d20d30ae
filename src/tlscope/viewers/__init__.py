"""viewers: the JS client (lib/), the built-in explorer, the viewer templates, and their Python side.

The JS files are package data, served by `tlscope serve` (/lib/, /viewers/explorer/) and
copied by `tlscope viewer new`; `pack` bundles the explorer into one HTML file; `corpus`
finds the project's real traces for viewers' tests.
"""

from __future__ import annotations

from pathlib import Path

#: The package folder of the viewers.
HERE = Path(__file__).resolve().parent
#: The JS client, served at /lib/.
LIB = HERE / "lib"
#: The default viewer, served at /viewers/explorer/.
EXPLORER = HERE / "explorer"
#: The templates `tlscope viewer new` copies.
TEMPLATES = HERE / "templates"


def template_names() -> list[str]:
    """The templates `tlscope viewer new --template` accepts."""
    return sorted(p.name for p in TEMPLATES.iterdir() if (p / "README.md").is_file())
