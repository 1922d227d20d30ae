"""What counts as the user's own code: the frames tlscope attributes a break, guard or failure to.

PyTorch's "user code" is any frame Dynamo traced, which includes the standard library
(`contextlib.py`) and installed packages (`torch/nn/parallel/distributed.py`). A user asking
"where is my graph break?" wants the innermost frame of *their* code on that stack, so by default a
frame is user code unless its file is

- a pseudo-file (`<string>`, `<frozen runpy>`, `<eval_with_key>.3`);
- under a `site-packages/` or `dist-packages/` folder (installed packages, torch among them);
- in the standard library (under `lib/pythonX.Y/`, or a Windows `Lib/` folder);
- in a `torch/` package folder (a torch source checkout).

`--user-code PATTERN` (repeatable, or `TLSCOPE_USER_CODE`, patterns separated by the OS path
separator) replaces that rule: user code is then exactly the files matching a pattern
(`fnmatch`, `*` matches `/` too), e.g. `*/myproject/*` or `*/site-packages/mylib/*`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from tlscope.format.compiles import SourceLocation
from tlscope.model.events import Frame
from tlscope.model.record import Record

_LIBRARY = re.compile(
    r"(^|/)(site-packages|dist-packages)/"  # installed packages
    r"|(^|/)lib/python\d+(\.\d+)?t?/"  # the standard library (POSIX layout)
    r"|(^|/)Lib/"  # the standard library (Windows layout)
    r"|(^|/)torch/"  # torch's own files, from a source checkout too
)


class UserCode:
    """The rule deciding whether a file is user code (picklable; see the module docstring)."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = tuple(p for p in patterns if p)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UserCode) and other.patterns == self.patterns

    def __hash__(self) -> int:
        return hash(self.patterns)

    def is_user(self, file: str | None) -> bool:
        if not file:
            return False
        path = file.replace("\\", "/")
        if self.patterns:
            return any(fnmatchcase(path, pattern) for pattern in self.patterns)
        return not (path.startswith("<") or _LIBRARY.search(path))

    def innermost(self, frames: Sequence[SourceLocation]) -> SourceLocation | None:
        """The innermost frame in user code (frames outermost first), or None."""
        return next((f for f in reversed(frames) if self.is_user(f.file)), None)

    def innermost_of(self, record: Record, stack: Iterable[Frame] | None) -> SourceLocation | None:
        """The innermost user-code frame of one of `record`'s stacks, its file names resolved."""
        frames = [
            SourceLocation(file=record.frame_filename(f), line=f.line, name=f.name, code=f.loc) for f in stack or ()
        ]
        return self.innermost(frames)
