"""This viewer as a Python package: `pip install .` makes `tlscope serve` list it (group tlscope.viewers)."""

from pathlib import Path


def folder() -> Path:
    """The folder holding the viewer's index.html."""
    return Path(__file__).resolve().parent
