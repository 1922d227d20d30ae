"""The value the recompiling call had, for guards on Python values (compiles.json `actual`).

A `recompile_reasons` reason gives each earlier cache entry's failed guard with the value that
entry was compiled for (`k == 2`, `len(xs) == 2`, `G['FLAG'] == False`), never the call's.
The new compile logs the call's value itself when it kept one:

- specialised on it: the new entry's guards hold `<source> == <value>` (`L['k'] == 3`,
  `G['FLAG'] == True`, `len(L['xs']) == 3`), since Dynamo compiled it for exactly that call;
- made it dynamic (an int whose value changed becomes a symbol): `create_symbol`'s `val`, for
  the symbol whose `source` is that input.

A compile that logged neither (stopped at the recompile limit, failed before building guards,
an older torch) leaves `actual` null: nothing is guessed. A `dynamic_range` guard's subject is a
tensor size (`x.size()[0]`): the new compile's `describe_tensor` holds it.
"""

from __future__ import annotations

import re

from tlscope.analyse.fold.export_words import where_text
from tlscope.analyse.fold.guards import patterns, said_name
from tlscope.analyse.fold.linear import comment_start
from tlscope.format.compiles import GuardFailure, InputChange, TensorInput
from tlscope.format.json_boundary import JsonError, decode

#: Guard kinds whose new value the new compile's guards or symbols can hold.
VALUE_KINDS = frozenset({"value", "global", "length", "value_range"})
#: An object's id in an `identity` guard (`___check_obj_id(fn.__code__, 1399…)`): the new
#: compile's guard holds the call's; never said (an id means nothing outside the process), only
#: compared with the ids earlier entries were compiled for (recommend.py).
OBJ_ID = r"^___check_obj_id\((?P<s>.+), (?P<e>\d+)\)"
#: (what, key): what is `value`, `length` or `identity`; key is the source with a local's `L['name']` as `name`.
Wanted = tuple[str, str]
#: Wanted -> (the source as the new compile logged it, the call's value as Dynamo printed it).
Values = dict[Wanted, tuple[str, str]]
_LOCAL = re.compile(r"L\['([^'\\]+)'\]")
#: The guard code of a C++ guard tree line, after its `| +- KIND: ` lead.
_TREE_LINE = re.compile(r"^[|+\- ]*[A-Z][A-Z0-9_]*: ")
_TENSOR_DIM = re.compile(r"^(?P<s>.+)\.(?P<what>size|stride)\(\)\[(?P<i>\d{1,9})\]$")


def value_key(source: str) -> str:
    """`L['k']` -> `k`, `L['xs'][0]` -> `xs[0]`: locals as reasons print them; globals kept whole."""
    source = source.strip()
    match = _LOCAL.match(source)
    return source if match is None else match[1] + source[match.end() :]


def wanted_of(failure: GuardFailure) -> Wanted | None:
    """What a guard failure's new value would be found under, for the kinds that have one."""
    if failure.kind == "identity":
        found_id = re.match(OBJ_ID, failure.guard)
        return ("identity", value_key(found_id["s"])) if found_id else None
    if failure.kind not in VALUE_KINDS:
        return None
    if failure.kind == "value_range":
        return ("value", value_key(failure.subject)) if failure.subject else None
    found = patterns()
    if failure.kind == "length":
        match = found.length_guard.match(failure.guard) or found.empty_guard.match(failure.guard)
    else:
        match = found.value_guard.match(failure.guard)
    if match is None:
        return None
    return ("length" if failure.kind == "length" else "value", value_key(match["s"]))


def guard_codes(key: str, payload: bytes) -> list[str]:
    """The guard expressions of a guards payload: `dynamo_guards` JSON (`code`) or the C++ tree."""
    if key == "dynamo_guards":
        try:
            items = decode(payload)
        except JsonError:
            return []
        codes = (item.get("code") for item in items if isinstance(item, dict)) if isinstance(items, list) else ()
        return [code for code in codes if isinstance(code, str)]
    found = []
    for line in payload.decode("utf-8", "replace").splitlines():
        kept = "==" in line or "LENGTH_CHECK: not " in line or "ID_MATCH: ___check_obj_id(" in line
        lead = _TREE_LINE.match(line) if kept else None
        if lead is not None:
            cut = comment_start(line)
            found.append(line[lead.end() : cut].strip())
    return found


def guard_values(codes: list[str], wanted: set[Wanted]) -> Values:
    """(source as logged, value) of each wanted source that a guard pins to one value."""
    values: Values = {}
    found = patterns()
    for code in codes:
        length = found.length_guard.match(code)
        empty = None if length else found.empty_guard.match(code)  # `not L['rest']`: length 0
        ident = None if length or empty else re.match(OBJ_ID, code)
        match = length or empty or ident or found.value_guard.match(code)
        if match is None:
            continue
        what = "length" if length or empty else "identity" if ident else "value"
        want = (what, value_key(match["s"]))
        value = "0" if empty else match["e"].strip()
        if want in wanted and _whole(value):
            values.setdefault(want, (match["s"].strip(), value))
    return values


def _whole(value: str) -> bool:
    """False for a string literal cut short: a `  # ` inside it was taken for the guard's comment."""
    return value[:1] not in ("'", '"') or (len(value) > 1 and value[-1] == value[0])


def fill_actuals(failures: list[GuardFailure], values: Values, inputs: list[TensorInput]) -> None:
    """Set `actual` (and say it in `explanation`) where the new compile logged the call's value."""
    for failure in failures:
        if failure.actual is not None or failure.kind == "identity":
            continue
        want = wanted_of(failure)
        if want is not None and want in values:
            failure.actual = values[want][1]
            failure.explanation = _explained(failure)
        elif failure.kind == "dynamic_range" and failure.subject is not None:
            failure.actual = _tensor_dim(failure.subject, inputs)
            if failure.actual is not None:
                failure.explanation = (
                    f"{failure.subject} is {failure.actual} in this call, outside `{failure.guard}`, a shape guard "
                    "of the entry's dynamic graph (sizes 0 and 1 are always specialised)"
                )


def _explained(failure: GuardFailure) -> str:
    name = said_name(failure.subject or "")
    if failure.kind == "value_range":
        return f"{name} is {failure.actual} in this call, outside `{failure.guard}`, {_tested(failure)}"
    if failure.kind == "length":
        return f"length of {name} changed: {failure.expected} -> {failure.actual}"
    lead = "global " if failure.kind == "global" else ""
    return f"{lead}{name} changed: {failure.expected} -> {failure.actual}{_mode_switch(name, failure.actual)}"


def _mode_switch(name: str, actual: str | None) -> str:
    """What a module's `training` flag changing means: `.eval()` or `.train()` was called between
    the calls, and Dynamo compiles each mode once (dropout and batch norm trace differently)."""
    if not (name == "training" or name.endswith(".training")) or actual not in ("True", "False"):
        return ""
    call = "eval()" if actual == "False" else "train()"
    return f" (.{call} was called on the module since; train and eval mode each compile once)"


def _tested(failure: GuardFailure) -> str:
    """Where the entry's code tested the condition a `value_range` guard holds: the guard's user
    line (`if z > 0:` at a.py:16), else in words."""
    at = failure.user_frame
    line = (at.code or "") if at is not None else ""
    code = line[: comment_start(line)].strip()  # its comment, as a guard's, cut where Dynamo's are
    if at is None or at.line is None or not code:
        return "a condition the entry's code tested on it (an if on its value)"
    return f"a condition the entry's code tested on it (`{code}` at {where_text(at)})"


def _tensor_dim(subject: str, inputs: list[TensorInput]) -> str | None:
    match = _TENSOR_DIM.match(subject)
    if match is None:
        return None
    tensor = next((t for t in inputs if value_key(t.source) == value_key(match["s"])), None)
    sizes = None if tensor is None else (tensor.size if match["what"] == "size" else tensor.stride)
    index = int(match["i"])
    return str(sizes[index]) if sizes is not None and index < len(sizes) else None


def value_changes(
    failures: list[GuardFailure], values: Values, symbolic: set[Wanted] | None = None
) -> list[InputChange]:
    """`changes` entries for the Python values whose both sides the log holds: the first failure's
    guard (the entry compared with: expected) and the new compile's value (actual); and, when
    the new compile made that value a symbol (`symbolic`: automatic dynamic), that it went from
    static to dynamic, so later calls with other values reuse the compile."""
    changes = []
    for failure in failures[:1]:
        want = wanted_of(failure)
        if want is not None and want in values and failure.actual is not None:
            source = values[want][0]
            changes.append(InputChange(input=source, what=want[0], before=failure.expected, after=failure.actual))
            if symbolic and want in symbolic:
                changes.append(InputChange(input=source, what="dynamic", before="static", after="dynamic"))
    return changes


#: What only an nn.Module's guards hold (Dynamo guards that a module instance does not override
#: `forward`, and its dicts of submodules, parameters and buffers).
_MODULE_MARKS = (
    "___dict_contains('forward', L['fn'].__dict__)",
    "source=L['fn']._modules",
    "source=L['fn']._parameters",
    "source=L['fn']._buffers",
)
#: The class a guard tree line's manager holds (`type=<class 'torch.nn.modules.container.Sequential'>`).
_CLASS = r"type=<class '(?P<c>[\w.]+)'>"


def method_class(payload: bytes) -> str | None:
    """The class of `self` (`Block` of `type=<class '__main__.Block'>`), from the C++ guard tree's
    manager of `L['self']`: a compiled method's class, which its name alone (`forward`) does not say."""
    text = payload.decode("utf-8", "replace")
    at = text.find("source=L['self'],")
    if at < 0:
        return None
    end = text.find("\n", at)
    found = re.search(_CLASS, text[at : end if end >= 0 else len(text)])
    return found["c"].rpartition(".")[2] if found is not None else None


def wrapped_module(payload: bytes) -> str | None:
    """The class of the module the wrapper compiled, from the C++ guard tree's manager of its `fn`
    (`Sequential` of `type=<class 'torch.nn.modules.container.Sequential'>`), when the tree guards
    `fn` as an nn.Module: its submodules, parameters or buffers, or that its instance does not
    override `forward`. None for anything else passed through the wrapper (a `functools.partial`,
    a function) and for guards that do not say."""
    text = payload.decode("utf-8", "replace")
    at = text.find("source=L['fn'],")
    if at < 0 or not any(mark in text for mark in _MODULE_MARKS):
        return None
    end = text.find("\n", at)
    found = re.search(_CLASS, text[at : end if end >= 0 else len(text)])
    return found["c"].rpartition(".")[2] if found is not None and "." in found["c"] else None
