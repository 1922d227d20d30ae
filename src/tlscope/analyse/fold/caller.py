"""The caller's own name for an input a fix names, read from the user's line that made the call.

A fix is code to add before the user's call (`torch._dynamo.mark_dynamic(x, 0)` before
`train.py:10`), but the compiled function names its inputs, not the caller: the parameter `x`,
or `args[0]` when torch.compile compiled a module's wrapper (`inner(*args, **kwargs)`), while the
line says `loss = model(batch).sum()`. Where the line leaves no doubt which argument the input is
(one call with that many positional arguments; for a named parameter, one call with one
positional argument, or a keyword of that name) and that argument is a plain name or attribute,
the fix can name it as the caller does: `torch._dynamo.mark_dynamic(batch, 0)`. Anything else (an
expression, several candidate calls, a line that does not parse) says nothing.
"""

from __future__ import annotations

import ast
import re

#: Compiled by `re` on first use: a log without a fix never pays for them.
_ARGS = r"args\[(\d+)\]"
_NAME = r"[A-Za-z_]\w*"


def caller_argument(code: str | None, name: str, function: str | None = None) -> str | None:
    """The argument the caller's line `code` passed as the input `name`, when certain and plain.
    `function`: the compiled function's name; where the line calls it by that name
    (`step(x, torch.stack(cache))`), only those calls count, not another call's argument."""
    calls = _calls(code)
    named = [c for c in calls if function and _callee(c) == function]
    calls = named or calls
    if not calls:
        return None
    positional = re.fullmatch(_ARGS, name)
    found: list[ast.expr] = []
    if positional is not None:
        index = int(positional[1])
        found = [c.args[index] for c in calls if _plain_args(c) > index]
    elif re.fullmatch(_NAME, name):
        keyword = [k.value for c in calls for k in c.keywords if k.arg == name]
        found = keyword or [c.args[0] for c in calls if _plain_args(c) == 1 and not c.keywords]
    if len(found) != 1 or not _is_plain(found[0]):
        return None
    return ast.unparse(found[0])


#: Characters of a line parsed at most: a source line is short; a log's can be anything.
MAX_LINE = 1000


def _calls(code: str | None) -> list[ast.Call]:
    """The calls of one source line; a line that opens a block (`if f(x):`) is closed first. The
    line comes from the log: a long or deeply nested one is not parsed (Python's parser recurses)."""
    text = (code or "").strip()
    if len(text) > MAX_LINE:
        return []
    for attempt in (text, f"{text}\n    pass"):
        try:
            tree = ast.parse(attempt)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return []


def _callee(call: ast.Call) -> str | None:
    """The name a call calls (`step` of `step(x)` and of `self.step(x)`)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _plain_args(call: ast.Call) -> int:
    """How many positional arguments `call` passes, -1 when a `*` makes it unknown."""
    return -1 if any(isinstance(a, ast.Starred) for a in call.args) else len(call.args)


def _is_plain(node: ast.expr) -> bool:
    """A name or an attribute of one (`batch`, `self.inputs`): a tensor the line can mark first."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
