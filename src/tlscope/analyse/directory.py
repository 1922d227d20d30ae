"""The compile directory: every output registered under its compile id, with tlparse's numbers.

One global counter numbers every registered output (files, links, global files), in log order
and, within a line, in parser order; compile_directory.json and the `_N` file names come from
it. This is a fold over the outputs the report produces, so it holds only small entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from tlscope.analyse.naming import cache_mark
from tlscope.model.compile_id import CompileId

#: A directory key: the normalised compile id, or None for tlparse's "unknown".
DirKey = CompileId | None


def key_display(key: DirKey) -> str:
    """The compile-directory key text: `[0/0]`, or `unknown` for a malformed compile id."""
    return "unknown" if key is None else key.display


def key_label(key: DirKey) -> str:
    """How index.html names a key: `[0/0]`, or `(unknown)`."""
    return "(unknown)" if key is None else key.display


class Entry(msgspec.Struct):
    """One registered output; field names and meaning are compile_directory.json's."""

    url: str
    #: The registered name: the relative path for files, the given name for links.
    name: str
    number: int
    suffix: str
    readable_url: str | None = None
    #: A link entry (its url comes from the log), not a file tlscope wrote.
    link: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            # Leading folders are in the url already (tlparse keeps only the last segment).
            "name": self.name.rpartition("/")[2],
            "number": self.number,
            "readable_url": self.readable_url,
            "suffix": self.suffix,
            "url": self.url,
        }


class CompileDirectory:
    """Keys in first-appearance order, each with its entries in registration order."""

    def __init__(self) -> None:
        self.counter = 0
        self._keys: dict[DirKey, list[Entry]] = {}

    def touch(self, key: DirKey) -> list[Entry]:
        """Create the key on first sight, even if the line produces nothing (tlparse does)."""
        entries = self._keys.get(key)
        if entries is None:
            entries = self._keys[key] = []
        return entries

    def take_number(self) -> int:
        number = self.counter
        self.counter += 1
        return number

    def register_file(self, key: DirKey, path: str, *, readable_url: str | None = None) -> Entry:
        """A file under OUT; numbered with the next counter value (unless the readable page took one)."""
        entry = Entry(url=path, name=path, number=self.take_number(), suffix=cache_mark(path))
        entry.readable_url = readable_url
        self.touch(key).append(entry)
        return entry

    def register_link(self, key: DirKey, name: str, url: str) -> Entry:
        """A link entry: no file, but it takes a number like any output."""
        entry = Entry(url=url, name=name, number=self.take_number(), suffix="", link=True)
        self.touch(key).append(entry)
        return entry

    def entries(self, key: DirKey) -> list[Entry]:
        return self._keys.get(key, [])

    def items(self) -> Iterator[tuple[DirKey, list[Entry]]]:
        yield from self._keys.items()

    def __len__(self) -> int:
        return len(self._keys)

    def as_json(self) -> dict[str, Any]:
        """compile_directory.json's object (keys sorted by the writer)."""
        return {key_display(key): {"artifacts": [e.as_json() for e in entries]} for key, entries in self._keys.items()}
