"""commands: one module per `tlscope` command, each with `main(argv) -> int` (its exit status).

COMMANDS maps a command name to "module:function", a module named `<name>_command.py` (no
module name is used twice in the package, tests/test_layout.py); modules are imported lazily, so
`tlscope PATH` does not pay for commands it does not run. `parse` is the default: `tlscope PATH ...` is
`tlscope parse PATH ...`. A new command is a module here and one line in COMMANDS. Modules
below commands/ never import a command (tests/test_layout.py checks it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

#: The command run when the first argument names no command.
DEFAULT = "parse"

COMMANDS: dict[str, str] = {
    "parse": "tlscope.commands.parse_command:main",
    "redact": "tlscope.commands.redact_command:main",
    "split": "tlscope.commands.split_command:main",
    "viewer": "tlscope.commands.viewer_command:main",
    "pack": "tlscope.commands.pack_command:main",
    "corpus": "tlscope.commands.corpus_command:main",
    "summary": "tlscope.commands.summary_command:main",
    "diff": "tlscope.commands.diff_command:main",
    "serve": "tlscope.commands.serve_command:main",
    "run": "tlscope.commands.run_command:main",
}

#: Commands whose first argument is an action: `tlscope corpus list` runs the command even
#: where a folder named `corpus` exists (the repository's own), which `tlscope corpus -o OUT`
#: would parse.
ACTIONS: dict[str, tuple[str, ...]] = {
    "viewer": ("new", "templates"),
    "corpus": ("list", "path"),
}


#: Commands whose failures exit with another status than 1: diff's errors are 2, as diff(1)'s.
ERROR_STATUS: dict[str, int] = {"diff": 2}


def load(name: str) -> Callable[[Sequence[str]], int]:
    """The `main` of command `name` (a key of COMMANDS)."""
    module_name, _, func_name = COMMANDS[name].partition(":")
    func: Callable[[Sequence[str]], int] = getattr(importlib.import_module(module_name), func_name)
    return func


def others() -> list[str]:
    """Every command but the default, for help texts."""
    return [name for name in COMMANDS if name != DEFAULT]
