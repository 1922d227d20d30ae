"""A recompile caused by a module's int attribute or a global number, again and again: what stops it.

A module that keeps a counter (`self.step += 1` in `forward`) recompiles on every call: Dynamo
specialises an int attribute of an `nn.Module` (`torch._dynamo.config.allow_unspec_int_on_nn_module`
is off), where an int argument would be made dynamic after it changed once (automatic dynamic
shapes), until the recompile limit makes the frame run in eager. When two or more recompiles of a
frame are explained by the value of the same `self` attribute, an int each time, each of them gets
the fix `torch._dynamo.config.allow_unspec_int_on_nn_module = True` (compiles.json
`recompile.fix`, kind `unspec_int_on_nn_module`, since format 1.44). One such recompile is
automatic dynamic at work for an attribute Dynamo did make dynamic: no fix.

A global number the compiled code reads (`SCALE`, or a loop variable a lambda defined at module
level captures) is guarded by its value, not made dynamic on its own, so it too recompiles the frame
once a value, until the recompile limit (corpus `global_counter`): two or more recompiles by the
same global, an int or a float each time, get the fix of kind `pass_as_argument` (since 1.46):
pass it to the compiled function as an argument, which automatic dynamic makes dynamic after one
change.

A list argument whose length changes (a decode cache that grows a step at a time) is guarded by
its length, never made dynamic: one compile a length, until the recompile limit (checked on torch
2.13: a growing list of tensors compiled 8 times, then ran in eager). When two or more recompiles of
a frame are explained by the length of the same list, and its tensors have one shape and dtype,
each gets the fix of kind `stack_list` (since 1.47): pass the tensors stacked into one
(`torch.stack(cache)`), whose first size automatic dynamic makes dynamic after one change
(checked: 2 compiles for the same 12 calls).

A str argument is specialised on its value, one graph a value (even values that take one branch):
cheap while the values are few, but when two or more recompiles of a frame are explained by the
same str and a compile of the frame failed at the recompile limit, each gets the fix of kind
`recompile_limit` (since 1.48): a limit above the number of values (checked on torch 2.13 with ten
names: 8 compiles and two calls in eager at the default limit, 10 compiles at 16; corpus
`str_values`).

An optimizer's learning rate, a float in its `param_groups`, is guarded by its value too: a
compiled `optimizer.step()` recompiles when an LR scheduler first changes it (then torch makes it
dynamic). Torch's recipe for a compiled optimizer with an LR scheduler is a tensor learning rate,
whose value is no guard: one such recompile of an optimizer's `step` gets the fix of kind
`tensor_lr` (since 1.49; checked on torch 2.13: AdamW and StepLR, two compiles of `AdamW.step`,
one with `lr=torch.tensor(1e-3)`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tlscope.analyse.fold.callvalues import value_key
from tlscope.analyse.fold.export_words import where_text
from tlscope.analyse.fold.guards import said_name
from tlscope.analyse.headline import AT_LIMIT
from tlscope.format.compiles import CompileEntry, Fix

KIND = "unspec_int_on_nn_module"
CODE = "torch._dynamo.config.allow_unspec_int_on_nn_module = True"
GLOBAL_KIND = "pass_as_argument"
LIST_KIND = "stack_list"
LIMIT_KIND = "recompile_limit"
LR_KIND = "tensor_lr"
#: An optimizer's learning rate as a guard names it (`self.param_groups[0]['lr']`).
_LR = r"self\.param_groups\[\d+\]\[['\"]lr['\"]\]"
#: torch's recipe a `tensor_lr` fix cites.
LR_RECIPE = "https://docs.pytorch.org/tutorials/recipes/compiling_optimizer_lr_scheduler.html"
#: A module's list attribute the compiled code grows (its fix is kind `change_code`).
STATE_KIND = "module_list"
#: A str as a guard compares it (`kind == 'relu'`).
_STR = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
#: Recompiles by one attribute that show Dynamo kept it specialised.
MIN_RECOMPILES = 2
#: An attribute of the compiled method's `self`, as a guard names it (`self.step`, or the
#: source `L['self'].step`, read by `value_key`); compiled by `re` on first use.
_SELF_ATTRIBUTE = r"self((?:\.[A-Za-z_]\w*)+)"
_INT = r"-?\d+"
#: A list attribute as a guard names it: of the method's `self` or of an argument (`cache.keys`).
_ATTRIBUTE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
#: A global's value as a guard compares it: an int or a float (`2`, `0.5`, `1e-05`, `-inf`).
_NUMBER = r"-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan)"


def repeated_value_fixes(entries: Sequence[CompileEntry], knows_sources: bool = False) -> dict[str, Fix]:
    """Compile id -> the fix, for each recompile of `entries` (one frame's) explained by a `self`
    int attribute, or a global number, that explains MIN_RECOMPILES or more of them;
    `knows_sources`: the run's torch has TORCH_COMPILE_DYNAMIC_SOURCES, which the why names (it
    makes either dynamic without changing code: checked on torch 2.13, one compile each)."""
    by_source: dict[tuple[str, str], list[CompileEntry]] = {}
    for entry in entries:
        found = _repeatable(entry)
        if found is not None:
            by_source.setdefault(found, []).append(entry)
    fixed: dict[str, Fix] = {}
    for (kind, source), recompiled in by_source.items():
        if kind == LR_KIND:  # one recompile is what a scheduler costs, and torch's recipe avoids it
            fixed.update((entry.id, _lr_fix(source, recompiled)) for entry in recompiled)
            continue
        if len(recompiled) < MIN_RECOMPILES:
            continue
        if kind == LIMIT_KIND:
            fixed.update(_limit_fixes(source, recompiled, entries))
        elif kind == STATE_KIND:
            fixed.update(_state_fixes(source, recompiled))
        else:
            fix = _BUILDERS[kind](source, recompiled)
            if knows_sources and kind != LIST_KIND:  # a list's length is no source it makes dynamic
                fix.why += f'; or, without changing code, TORCH_COMPILE_DYNAMIC_SOURCES="{source}"'
            fixed.update((entry.id, fix) for entry in recompiled)
    return fixed


def _repeatable(entry: CompileEntry) -> tuple[str, str] | None:
    """(the fix's kind, the source) of the value that explains `entry`'s recompile, when it is a
    `self` int attribute or a global number; else None."""
    failure = entry.recompile.shown_failure() if entry.recompile is not None else None
    if failure is None or failure.subject is None:
        return None
    if failure.kind == "global":
        return (GLOBAL_KIND, failure.subject) if re.fullmatch(_NUMBER, failure.expected or "") else None
    if failure.kind == "length" and re.fullmatch(_ATTRIBUTE, failure.subject):
        return STATE_KIND, failure.subject  # a module's list, or an argument's (a KV cache object's)
    if failure.kind == "length":
        return (LIST_KIND, failure.subject) if _stackable(entry, failure.subject) else None
    if failure.kind == "value" and re.fullmatch(_STR, failure.expected or ""):
        return LIMIT_KIND, failure.subject
    if failure.kind == "value" and re.fullmatch(_LR, failure.subject) and _optimizer_step(entry):
        return LR_KIND, failure.subject
    match = re.fullmatch(_SELF_ATTRIBUTE, value_key(failure.subject)) if failure.kind == "value" else None
    if match is None or re.fullmatch(_INT, failure.expected or "") is None:
        return None
    return KIND, f"L['self']{match[1]}"


def _optimizer_step(entry: CompileEntry) -> bool:
    """Whether `entry` compiled a torch optimizer's `step` (torch/optim/adam.py's, for AdamW)."""
    fn = entry.function
    file = (fn.file or "").replace("\\", "/") if fn is not None else ""
    return fn is not None and fn.name == "step" and "torch/optim/" in file


def _lr_fix(name: str, recompiled: Sequence[CompileEntry]) -> Fix:
    failure = recompiled[0].recompile.shown_failure() if recompiled[0].recompile is not None else None
    old = failure.expected if failure is not None and failure.expected else "the float"
    new = failure.actual if failure is not None and failure.actual else "another"
    optimizer = recompiled[0].module if isinstance(recompiled[0].module, str) else "the optimizer"
    fn, done = _counted(recompiled, "step")
    times = "a recompile" if done == 1 else f"{done} recompiles"
    why = (
        f"the learning rate, a float in {optimizer}'s param_groups, changed ({old} -> {new}: an LR "
        f"scheduler's step), and Dynamo guards a float by its value: {times} of {fn}. Given as a tensor, "
        f"its value is no guard and the scheduler changes it in place: torch's recipe for a compiled "
        f"optimizer with an LR scheduler (with foreach=True, also capturable=True); {LR_RECIPE}"
    )
    code = f"create {optimizer} with lr=torch.tensor({old}), not the float {old}"
    return Fix(kind=LR_KIND, input="lr", source=_source(name), code=code, why=why)


def _source(name: str) -> str:
    """Dynamo's source of an argument or of an attribute of one a guard names (`kind` ->
    `L['kind']`, `self.history` -> `L['self'].history`, `cache.keys` -> `L['cache'].keys`)."""
    root, dot, rest = name.partition(".")
    return f"L['{root}']{dot}{rest}"


def _counted(recompiled: Sequence[CompileEntry], unnamed: str) -> tuple[str, int]:
    """The recompiled function's name, and its recompiles but the one the limit refused."""
    fn = recompiled[0].function_name() or unnamed  # `Counter.forward`, as every view names it
    return fn, sum(1 for entry in recompiled if entry.status != "failed")


def _fix(source: str, recompiled: Sequence[CompileEntry]) -> Fix:
    name = value_key(source)
    fn, done = _counted(recompiled, "its function")
    why = (
        f"{name}, an int attribute of the module, explains {done} recompiles of {fn}, one "
        "compile a value: Dynamo specialises a module's int attributes, until the recompile limit runs "
        "the frame in eager. Set before the first compile, this makes it dynamic once it changes, as "
        "an int argument is; a branch on its value still compiles once for each side"
    )
    return Fix(kind=KIND, input=name, source=source, code=CODE, why=why)


def _global_fix(source: str, recompiled: Sequence[CompileEntry]) -> Fix:
    name = said_name(source)
    fn, done = _counted(recompiled, "the compiled function")
    why = (
        f"the global {name} explains {done} recompiles of {fn}, one compile a value: Dynamo guards a "
        f"global by its value and does not make it dynamic on its own, until the recompile limit runs the frame in "
        f"eager. Passed to {fn} as an argument (or read from a tensor), it is made dynamic once it "
        f"changes (automatic dynamic shapes): one recompile, then one graph for every value; a branch "
        f"on its value still compiles once for each side"
    )
    return Fix(kind=GLOBAL_KIND, input=name, source=source, code=f"pass {name} to {fn} as an argument", why=why)


def _stackable(entry: CompileEntry, name: str) -> bool:
    """Whether the list argument `name` holds tensors of one size and dtype only (`L['cache'][0]`,
    `L['cache'][1]`, ...), as the new compile describes them: what torch.stack takes."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    head = f"L['{name}']["
    items = [t for t in entry.inputs if t.source.startswith(head)]
    if not items or any(not re.fullmatch(r"\d+\]", t.source[len(head) :]) for t in items):
        return False
    return len({(tuple(t.size or ()), t.dtype) for t in items}) == 1 and all(t.size is not None for t in items)


def _list_fix(name: str, recompiled: Sequence[CompileEntry]) -> Fix:
    fn, done = _counted(recompiled, "the compiled function")
    why = (
        f"the length of the list {name} explains {done} recompiles of {fn}, one compile a length: Dynamo "
        f"guards a list's length and never makes it dynamic, until the recompile limit runs the frame in "
        f"eager. Its tensors have one shape: stacked into one tensor before the call, the length is a size, "
        f"which automatic dynamic shapes makes dynamic once it changes: one recompile, then one graph for "
        f"every length"
    )
    code = f"pass torch.stack({name}) to {fn}, not the list {name}"
    return Fix(kind=LIST_KIND, input=name, source=f"L['{name}']", code=code, why=why)


_BUILDERS = {KIND: _fix, GLOBAL_KIND: _global_fix, LIST_KIND: _list_fix}


def _limit_fixes(name: str, recompiled: Sequence[CompileEntry], frame: Sequence[CompileEntry]) -> dict[str, Fix]:
    """A str argument that filled the recompile limit (a compile of the frame failed at it): each
    of its recompiles gets the fix of kind `recompile_limit`; none when the limit was not reached
    (one graph a value is what a str costs, and cheap while few)."""
    if not any(e.failure is not None and re.search(AT_LIMIT, e.failure.reason) for e in frame):
        return {}
    fn, done = _counted(recompiled, "the compiled function")
    compiled = sum(1 for e in frame if e.status not in ("failed", "outside") and e.id == e.frame_compile)
    seen: dict[str, None] = {}
    for entry in recompiled:
        failure = entry.recompile.shown_failure() if entry.recompile is not None else None
        if failure is not None:
            seen.update((v, None) for v in (failure.expected, failure.actual) if v is not None)
    limit = 2 * max(len(seen), compiled)
    why = (
        f"{name}, a str, explains {done} recompiles of {fn}, one compile a value: Dynamo specialises a str on "
        f"its value (a value that takes the same branch as another compiles its own graph: {len(seen)} values "
        f"seen), and after {compiled} compiles, the recompile limit, {fn} ran in eager for the values that "
        f"came next. Set before the first compile, a limit above the number of values {name} takes compiles "
        f"each once ({limit}: twice what the log saw); or choose what the value selects before calling {fn} and "
        f"pass that (the function it picks, a bool): one graph a branch"
    )
    source = _source(name)
    # torch before 2.6 named it cache_size_limit, as its failure says.
    said = [e.failure.reason for e in frame if e.failure is not None]
    older = any(re.search(r"(?i)cache[_ ]size[_ ]limit", r) and not re.search(r"(?i)recompile", r) for r in said)
    code = f"torch._dynamo.config.{'cache_size_limit' if older else 'recompile_limit'} = {limit}"
    fix = Fix(kind=LIMIT_KIND, input=name, source=source, code=code, why=why)
    return {entry.id: fix for entry in recompiled}


def _state_fixes(name: str, recompiled: Sequence[CompileEntry]) -> dict[str, Fix]:
    """A module's list attribute whose length recompiled its frame twice or more (`forward` appends
    to `self.history` each call), or an argument's (a KV cache object's `cache.keys`, appended to
    at each decode step): the line that touched it, where its guard was installed, is the fix
    (kind `change_code`): Dynamo guards a list's length, so every call recompiles until the
    recompile limit (checked on torch 2.13: 8 compiles, then eager; one with the append outside)."""
    failure = recompiled[0].recompile.shown_failure() if recompiled[0].recompile is not None else None
    frame = failure.user_frame if failure is not None else None
    if frame is None or not frame.code:
        return {}
    fn, done = _counted(recompiled, "the compiled function")
    at = where_text(frame)
    owner = "the module" if name.startswith("self.") else name.partition(".")[0]
    why = (
        f"the length of {name}, a list {owner} keeps, explains {done} recompiles of {fn}, one compile a "
        f"length: the compiled code changes it at {at} (`{frame.code.strip()}`), and Dynamo guards a list's "
        f"length, never making it dynamic, so every call recompiles until the recompile limit runs {fn} in "
        f"eager. Keep that list out of the compiled code (change it where {fn} is called, from what it "
        f"returns), or keep the state in a tensor (a buffer written at a step index)"
    )
    fix = Fix(kind="change_code", input=name, source=_source(name), code=frame.code.strip(), where=frame, why=why)
    return {entry.id: fix for entry in recompiled}
