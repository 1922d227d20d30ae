"""A recompile caused by a module's int attribute, again and again: the setting that stops it.

A module that keeps a counter (`self.step += 1` in `forward`) recompiles on every call: Dynamo
specialises an int attribute of an `nn.Module` (`torch._dynamo.config.allow_unspec_int_on_nn_module`
is off), where an int argument would be made dynamic after it changed once (automatic dynamic
shapes), until the recompile limit makes the frame run in eager. When two or more recompiles of a
frame are explained by the value of the same `self` attribute, an int each time, each of them gets
the fix `torch._dynamo.config.allow_unspec_int_on_nn_module = True` (compiles.json
`recompile.fix`, kind `unspec_int_on_nn_module`, since format 1.44). One such recompile is
automatic dynamic at work for an attribute Dynamo did make dynamic: no fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tlscope.analyse.fold.callvalues import value_key
from tlscope.format.compiles import CompileEntry, Fix

KIND = "unspec_int_on_nn_module"
CODE = "torch._dynamo.config.allow_unspec_int_on_nn_module = True"
#: Recompiles by one attribute that show Dynamo kept it specialised.
MIN_RECOMPILES = 2
#: An attribute of the compiled method's `self`, as a guard names it (`self.step`, or the
#: source `L['self'].step`, read by `value_key`); compiled by `re` on first use.
_SELF_ATTRIBUTE = r"self((?:\.[A-Za-z_]\w*)+)"
_INT = r"-?\d+"


def module_int_fixes(entries: Sequence[CompileEntry]) -> dict[str, Fix]:
    """Compile id -> the fix, for each recompile of `entries` (one frame's) explained by a `self`
    int attribute that explains MIN_RECOMPILES or more of them."""
    by_source: dict[str, list[CompileEntry]] = {}
    for entry in entries:
        attribute = _attribute(entry)
        if attribute is not None:
            by_source.setdefault(f"L['self']{attribute}", []).append(entry)
    found: dict[str, Fix] = {}
    for source, recompiled in by_source.items():
        if len(recompiled) >= MIN_RECOMPILES:
            fix = _fix(source, recompiled)
            found.update((entry.id, fix) for entry in recompiled)
    return found


def _attribute(entry: CompileEntry) -> str | None:
    """The `self` attribute (`.step`) whose int value explains `entry`'s recompile, or None."""
    failure = entry.recompile.shown_failure() if entry.recompile is not None else None
    if failure is None or failure.kind != "value" or failure.subject is None:
        return None
    match = re.fullmatch(_SELF_ATTRIBUTE, value_key(failure.subject))
    return match[1] if match is not None and re.fullmatch(_INT, failure.expected or "") else None


def _fix(source: str, recompiled: Sequence[CompileEntry]) -> Fix:
    name = value_key(source)
    first = recompiled[0].function
    fn = first.name if first is not None and first.name else "its function"
    done = sum(1 for entry in recompiled if entry.status != "failed")  # not the one the limit refused
    why = (
        f"{name}, an int attribute of the module, explains {done} recompiles of {fn}, one "
        "compile a value: Dynamo specialises a module's int attributes, until the recompile limit runs "
        "the frame in eager. Set before the first compile, this makes it dynamic once it changes, as "
        "an int argument is; a branch on its value still compiles once for each side"
    )
    return Fix(kind=KIND, input=name, source=source, code=CODE, why=why)
