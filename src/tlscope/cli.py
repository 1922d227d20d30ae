"""The `tlscope` console script: pick the command (tlscope.commands) and run it."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from tlscope.commands import ACTIONS, COMMANDS, DEFAULT, load


def main(argv: Sequence[str] | None = None) -> int:
    """`tlscope COMMAND ARGS...`, or `tlscope ARGS...` for the default command (parse).

    A first argument that names a command runs it, unless a file of that name exists there
    (`tlscope split` with a log called `split` in the folder parses that log), unless the second
    names one of the command's actions (`tlscope corpus list` beside a folder named corpus).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    action = len(args) > 1 and args[1] in ACTIONS.get(args[0], ())
    if args and args[0] in COMMANDS and (action or not Path(args[0]).exists()):
        return load(args[0])(args[1:])
    return load(DEFAULT)(args)


def console_main() -> NoReturn:
    """The `tlscope` command (and `python -m tlscope`): main(), then exit with its status.

    Before exiting, every object is frozen (gc.freeze): the interpreter's final garbage
    collection then skips them. It would walk every object of every imported module (Jinja2,
    Pygments, msgspec...) only to free memory the OS frees anyway: 30-50 ms, a tenth of a small
    run. Not in `main`, which tests and library users call in a process that goes on.
    """
    status = main()
    gc.freeze()
    sys.exit(status)
