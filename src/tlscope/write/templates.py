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
"""

from __future__ import annotations

import contextlib
import functools
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
    )
    env.filters.update(filters)
    return env
