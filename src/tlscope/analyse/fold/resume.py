"""Resume functions: Dynamo compiles the rest of `fn` after a graph break at line N as a
function of its own, `torch_dynamo_resume_in_fn_at_N` (torch/_dynamo/resume_execution.py), named
after the original function whatever resume function the break was in. One reading of the name
for every analysis that needs it (a fix's place, a method's class, an older torch's breaks)."""

from __future__ import annotations

import re

#: What every resume function's name starts with.
PREFIX = "torch_dynamo_resume_in_"
#: The name, read: the function it resumes (`fn`) and the line of the break (`line`); compiled by
#: `re` on first use, so a log without a graph break never pays for it.
PATTERN = r"torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)"


def resumed(name: str | None) -> tuple[str, int] | None:
    """(the function a resume function resumes, the line of its break) for a resume function's
    name (`("fn", 12)` of `torch_dynamo_resume_in_fn_at_12`); None for any other name."""
    match = re.fullmatch(PATTERN, name) if name and name.startswith(PREFIX) else None
    return (match["fn"], int(match["line"])) if match is not None else None


def base_name(name: str) -> str:
    """The function a name belongs to: `fn` of a resume function of `fn`, else the name itself."""
    found = resumed(name)
    return found[0] if found is not None else name
