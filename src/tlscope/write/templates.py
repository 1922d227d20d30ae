"""The one Jinja2 environment factory for every template of tlscope, with compiled templates kept
between runs (Jinja's per-user bytecode cache).

Every page tlscope renders comes from a template folder in the package (the report's, the
landing page's); `environment` makes each folder's environment the same way: autoescape on for
every template (log strings cannot inject markup), trimmed blocks, the bytecode cache.

Compiling the report's templates took ~26 ms of every multi-rank run's start-up, before any
rank could be parsed, and the landing page's ~15 ms more; loading them compiled takes ~2 ms.
Jinja keys each entry by template name and file and checks the source's checksum and the
Python version on load, so an edited template or another Python compiles afresh. The cache
lives where Jinja puts it by default: a directory only this user may use, in the system's temp
directory (Jinja refuses one with other owners or permissions).

It can never fail a run: an unusable directory means no cache, an unreadable or unwritable
entry means compiling as without one.

`kept_text` keeps another derived text there the same way: the output code pages' colours,
which Pygments' HTML formatter computes (importing the formatter is ~20M instructions of every
run, a tenth of a small log's imports: bench/README.md, session 9).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, PackageLoader, select_autoescape
from jinja2.bccache import Bucket


class _NeverFailing(FileSystemBytecodeCache):
    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):  # not kept: the next run compiles it again
            super().dump_bytecode(bucket)


@functools.cache
def bytecode_cache() -> BytecodeCache | None:
    """The shared cache for tlscope's Jinja environments, or None where none can be made."""
    try:
        return _NeverFailing(pattern="__tlscope_%s.cache")
    except (OSError, RuntimeError):  # no temp directory, or one that is not safely ours
        return None


def environment(
    package: str,
    filters: Mapping[str, Callable[..., Any]],
    *,
    keep_trailing_newline: bool = False,
) -> Environment:
    """The environment of the templates in `package`'s `templates/` folder.

    `keep_trailing_newline` is the only setting that differs between folders: the report's
    pages end with their template's final newline as tlparse's do, the landing page does not.
    """
    env = Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=keep_trailing_newline,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=bytecode_cache(),
        # The templates are the package's own files, unchanged while tlscope runs: with Jinja's
        # default (True) every page rendered stat()ed its template and each one it extends or
        # includes, twice each (~50 calls a rank of a job, every rank).
        auto_reload=False,
    )
    env.filters.update(filters)
    return env


#: What a kept text's name may hold (it becomes a file name in the cache's directory).
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def kept_text(name: str, make: Callable[[], str]) -> str:
    """`make()`, kept between runs under `name` (which must say everything the text depends on,
    such as a library's version) in the bytecode cache's directory.

    Like the cache, it can never fail a run, nor give a half-written text: an entry is written
    to a file of its own and renamed into place; an unusable directory or entry means `make()`.
    The directory is only this user's (Jinja checks its owner and permissions), as trusted as
    the compiled templates beside it.
    """
    cache = bytecode_cache()
    if not isinstance(cache, FileSystemBytecodeCache):
        return make()
    path = os.path.join(cache.directory, "__tlscope_" + _UNSAFE_NAME.sub("_", name))
    with contextlib.suppress(OSError, UnicodeDecodeError), open(path, encoding="utf-8") as f:
        return f.read()
    text = make()
    with contextlib.suppress(OSError):
        _write_atomically(path, text)
    return text


def _write_atomically(path: str, text: str) -> None:
    # Named by process and thread: a Dask worker parses several ranks at once in one process.
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "x", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
