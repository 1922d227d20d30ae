"""Subcommands besides the default `tlscope PATH` parse.

Each entry maps a subcommand name to "module:function"; the function takes the remaining
argv and returns an exit status. Modules are imported lazily so that `tlscope PATH` does not
pay for subcommands it does not run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

SUBCOMMANDS: dict[str, str] = {
    "redact": "tlscope.redact:main",
    "split": "tlscope.split:main",
}


def load(name: str) -> Callable[[Sequence[str]], int]:
    module_name, _, func_name = SUBCOMMANDS[name].partition(":")
    func: Callable[[Sequence[str]], int] = getattr(importlib.import_module(module_name), func_name)
    return func
