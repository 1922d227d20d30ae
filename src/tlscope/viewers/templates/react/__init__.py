"""This viewer as a Python package: `npm run build`, then `pip install .` makes `tlscope serve` list it."""

from pathlib import Path


def folder() -> Path:
    """The built viewer (dist/, holding index.html)."""
    return Path(__file__).resolve().parent / "dist"
