"""compile_directory.json written one compile id at a time.

The bytes are exactly those of `jsonfmt.dumps_pretty(directory.as_json())` (serde_json's
pretty form, sorted keys, no trailing newline), but the whole document never exists in memory.
A long job registers tens of thousands of outputs: built as one value, the directory's dicts,
its compact JSON, the pretty JSON and the decoded text (two bytes a character, since the cache
marks are not Latin-1) came to ~29 MB at the end of a 500 MB log, the largest peak of the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from tlscope.analyse.tlparse.directory import CompileDirectory
from tlscope.write.report import jsonfmt

#: serde_json's pretty indent: a member's lines move one level in when nested in the document.
_INDENT = b"  "


def write(dest: Path, directory: CompileDirectory) -> None:
    """Write compile_directory.json to `dest`."""
    with dest.open("wb") as out:
        write_to(out, directory)


def write_to(out: IO[bytes], directory: CompileDirectory) -> None:
    """The document into an open binary file, member by member."""
    empty = True
    for display, value in directory.json_items():
        out.write(b"{\n" if empty else b",\n")
        out.write(_INDENT + jsonfmt.pretty_bytes(display) + b": ")
        # Pretty JSON has no raw newline inside a string (they are escaped), so every newline
        # is layout and indenting after each one nests the member's block one level deeper.
        out.write(jsonfmt.pretty_bytes(value).replace(b"\n", b"\n" + _INDENT))
        empty = False
    out.write(b"{}" if empty else b"\n}")
