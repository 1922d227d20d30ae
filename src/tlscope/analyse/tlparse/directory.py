"""The compile directory: every output registered under its compile id, with tlparse's numbers.

One global counter numbers every registered output (files, links, global files), in log order
and, within a line, in parser order; compile_directory.json and the `_N` file names come from
it. This is a fold over the outputs the report produces, kept for the whole run (index.html and
compile_directory.json are written at the end), so each output costs only its path and number:
a long job registers tens of thousands of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import msgspec

from tlscope.analyse.tlparse.naming import cache_mark
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


class _Outputs:
    """One key's entries in registration order, stored as columns rather than an Entry each.

    A file's url is its name and its suffix follows from the name, so the common entry is a
    name and a number (~100 bytes instead of ~200 as an Entry with a boxed int); the rare
    readable pages and links keep their extra field in a dict by position.
    """

    __slots__ = ("links", "names", "numbers", "readable")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.numbers = array("q")
        #: Position -> readable_url (may be "", which tlparse writes for unreadable JSON).
        self.readable: dict[int, str] = {}
        #: Position -> url of a link entry (its name is in `names`).
        self.links: dict[int, str] = {}

    def add(self, name: str, number: int) -> int:
        self.names.append(name)
        self.numbers.append(number)
        return len(self.names) - 1

    def entry(self, i: int) -> Entry:
        name, number = self.names[i], self.numbers[i]
        url = self.links.get(i)
        if url is not None:
            return Entry(url=url, name=name, number=number, suffix="", link=True)
        return Entry(url=name, name=name, number=number, suffix=cache_mark(name), readable_url=self.readable.get(i))

    def entries(self) -> list[Entry]:
        return [self.entry(i) for i in range(len(self.names))]


class CompileDirectory:
    """Keys in first-appearance order, each with its entries in registration order."""

    def __init__(self) -> None:
        self.counter = 0
        self._keys: dict[DirKey, _Outputs] = {}

    def touch(self, key: DirKey) -> None:
        """Create the key on first sight, even if the line produces nothing (tlparse does)."""
        self._outputs(key)

    def _outputs(self, key: DirKey) -> _Outputs:
        outputs = self._keys.get(key)
        if outputs is None:
            outputs = self._keys[key] = _Outputs()
        return outputs

    def take_number(self) -> int:
        number = self.counter
        self.counter += 1
        return number

    def register_file(self, key: DirKey, path: str, *, readable_url: str | None = None) -> Entry:
        """A file under OUT; numbered with the next counter value (unless the readable page took one).

        Returns the entry as registered (a copy: the directory does not keep Entry objects).
        """
        outputs = self._outputs(key)
        i = outputs.add(path, self.take_number())
        if readable_url is not None:
            outputs.readable[i] = readable_url
        return outputs.entry(i)

    def register_link(self, key: DirKey, name: str, url: str) -> Entry:
        """A link entry: no file, but it takes a number like any output."""
        outputs = self._outputs(key)
        i = outputs.add(name, self.take_number())
        outputs.links[i] = url
        return outputs.entry(i)

    def entries(self, key: DirKey) -> list[Entry]:
        outputs = self._keys.get(key)
        return [] if outputs is None else outputs.entries()

    def items(self) -> Iterator[tuple[DirKey, list[Entry]]]:
        """Each key with its entries, built one key at a time (only the caller keeps them)."""
        for key, outputs in self._keys.items():
            yield key, outputs.entries()

    def __len__(self) -> int:
        return len(self._keys)

    def json_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """compile_directory.json's members in file order (sorted keys), one at a time.

        Like the `as_json` dict, a display text shared by two keys keeps the later key's value.
        """
        latest = {key_display(key): outputs for key, outputs in self._keys.items()}
        for display in sorted(latest):
            yield display, {"artifacts": [e.as_json() for e in latest[display].entries()]}

    def as_json(self) -> dict[str, Any]:
        """compile_directory.json's object (keys sorted by the writer)."""
        return {key_display(key): {"artifacts": [e.as_json() for e in entries]} for key, entries in self.items()}
