"""Recompile reasons (tlparse #153, #44): which guard of which cache entry failed, in plain words.

Dynamo logs, when a frame is compiled again, a `recompile_reasons` artifact: one text per earlier
cache entry, newest first, each `<compile id>: <failed guard>`, e.g.

    0/0: tensor 'x' size mismatch at index 0. expected 4, actual 5
    1/1: G['SCALE_UP'] == False     # return x * k  # model.py:20 in scaled
    User stack trace:
      File "model.py", line 20, in scaled

and puts the first one in `compilation_metrics.recompile_reason`. The artifact is declared
`encoding: "json"`, but torch writes a single reason as bare text (its payload is `reasons[0] if
len(reasons) == 1 else reasons`): both shapes are read here, and `is_torch_bare_reason` tells
that known quirk (a note) from a payload that is really broken (a problem).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import msgspec

from tlscope.analyse.fold.linear import actual_at_end, comment_start, search_ending_by, size_or_symbol
from tlscope.analyse.fold.usercode import UserCode
from tlscope.format.compiles import GuardFailure, SourceLocation
from tlscope.format.json_boundary import JsonError, decode

_REASONS = msgspec.json.Decoder(list[str] | str)


def reason_texts(payload: bytes) -> tuple[list[str], bool]:
    """The reasons of a `recompile_reasons` payload, and whether the payload was JSON as declared."""
    try:
        value = decode(payload, _REASONS)
    except (JsonError, msgspec.ValidationError):
        text = payload.decode("utf-8", "replace").strip()
        return ([text] if text else []), False
    return ([value] if isinstance(value, str) else value), True


def is_torch_bare_reason(payload: bytes) -> bool:
    """True when a non-JSON `recompile_reasons` payload is exactly torch's one bare reason:
    text that starts with the earlier cache entry's compile id (`0/0: ...`)."""
    text = payload.decode("utf-8", "replace").strip()
    return patterns().entry.match(text) is not None


def guard_failure(text: str, user: UserCode | None = None) -> GuardFailure:
    """Classify one reason text (`<cache entry>: <guard>[  # comment][\\nUser stack trace: ...]`)."""
    found = patterns()
    match = found.entry.match(text.strip())
    cache_entry, rest = (f"[{match['cid']}]", match["rest"]) if match else ("[?]", text.strip())
    first, _, trailer = rest.partition("\n")
    guard = _strip_comment(first)
    for pattern, build in found.rules:
        hit = _search(found, pattern, guard)
        if hit is not None:
            failure = build(hit, guard)
            break
    else:
        failure = _failure("other", guard, f"guard failed: {guard}")
    failure.cache_entry = cache_entry
    failure.user_frame = user_frame_of(trailer, user) or _comment_frame(first)
    return failure


def _search(found: _Patterns, pattern: re.Pattern[str], guard: str) -> re.Match[str] | None:
    """`pattern.search(guard)`, in linear time for the rules whose plain search is quadratic."""
    if pattern is found.size_or_symbol:
        return size_or_symbol(pattern, guard)
    if pattern in found.comma_ended:
        return search_ending_by(pattern, guard, ",")
    if pattern.pattern.endswith(" actual (?P<act>.+)$"):
        return actual_at_end(pattern, guard, "tensor '")
    if pattern.pattern.startswith("^"):  # anchored: retrying from every start only repeats the failure
        return pattern.match(guard)
    return pattern.search(guard)


def _strip_comment(line: str) -> str:
    # Dynamo pads the guard and appends `# <source line>  # <file>:<line> in <fn>`; tensor
    # messages have no comment. A `#` inside quotes (a string value) is part of the guard.
    cut = comment_start(line)  # re.search(r"\s{2,}#|\s+#\s", line), in linear time
    return (line if cut is None else line[:cut]).strip()


def _comment_frame(line: str) -> SourceLocation | None:
    """The user frame of a guard's trailing comment `# <source line>  # <file>:<line> in <fn>`.

    The source line may hold its own `  # `: the frame is after the last one. String operations
    and an anchored match keep it linear on hostile text.
    """
    cut = comment_start(line)
    body = line[cut:].strip() if cut is not None else ""
    if not body.startswith("#"):
        return None
    source, found, tail = body[1:].rpartition("  # ")
    match = patterns().frame_tail.match(tail.lstrip()) if found else None
    if match is None or not match["file"].strip():
        return None
    return SourceLocation(
        file=match["file"].strip(), line=int(match["line"]), name=match["name"], code=source.strip() or None
    )


def frames_of(trailer: str) -> list[SourceLocation]:
    """The `File "f", line N, in fn` frames of a traceback-like text, outermost first, with source lines."""
    lines = trailer.splitlines()
    found = []
    user_frame = patterns().user_frame
    for i, text in enumerate(lines):
        match = user_frame.match(text)
        if match is not None:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not user_frame.match(lines[i + 1]) else None
            found.append(
                SourceLocation(file=match["file"], line=int(match["line"]), name=match["name"], code=code or None)
            )
    return found


def user_frame_of(trailer: str, user: UserCode | None = None) -> SourceLocation | None:
    """The innermost frame of a traceback-like text in the user's own code (analyse/fold/usercode.py),
    else its innermost frame."""
    frames = frames_of(trailer)
    found = (user or UserCode()).innermost(frames)
    return found or (frames[-1] if frames else None)


def block_frame(text: str, marker: str, user: UserCode | None = None) -> SourceLocation | None:
    """`user_frame_of` the traceback block that follows the last `marker` in `text` (up to its first
    blank line), if `text` has one: torch's `from user code:` and `User stack:` blocks."""
    _, found, block = text.rpartition(marker)
    return user_frame_of(block.split("\n\n", 1)[0], user) if found else None


def error_user_frame(text: str, user: UserCode | None = None) -> SourceLocation | None:
    """The innermost frame in the user's own code of a Dynamo traceback's `from user code:` block
    (else its innermost frame), if it has one: a `dynamo_error` payload, a failure's reason."""
    return block_frame(text, "\nfrom user code:\n", user)


def dynamo_error_frame(reason: str, user: UserCode) -> SourceLocation | None:
    """The user's line of a Dynamo failure's reason (a `compilation_metrics` `fail_reason`, where
    no `dynamo_error` artifact was logged): its `from user code:` block, else the `User stack:`
    block of a constraint violation."""
    return error_user_frame(reason, user) or block_frame(reason, "\nUser stack:\n", user)


def _failure(
    kind: str,
    guard: str,
    explanation: str,
    *,
    subject: str | None = None,
    expected: str | None = None,
    actual: str | None = None,
) -> GuardFailure:
    return GuardFailure(
        cache_entry="",
        guard=guard,
        kind=kind,
        explanation=explanation,
        subject=subject,
        expected=expected,
        actual=actual,
    )


def subject_name(source: str) -> str:
    """`L['x']` -> `x`, `G['FLAG']` -> `FLAG` (global), anything else as it is: a failure's `subject`."""
    match = re.fullmatch(r"[LG]\['([^']+)'\]", source.strip())
    return match[1] if match else source.strip()


def input_name(source: str) -> str:
    """The name the compiled function gives a source: `L['x']` -> `x`, `L['self']._modules['fc']`
    -> `self.fc`, `L['xs'][2]` -> `xs[2]`, `G['W']` -> `W`. Dynamo's sources name an nn.Module's
    dicts of submodules, parameters and buffers (`self._modules['drop'].training`); the user's
    code names attributes (`self.drop.training`)."""
    text = re.sub(r"^[LG]\['([^']+)'\]", r"\1", source.strip())
    if "._" not in text:
        return text
    return re.sub(r"\._(?:modules|parameters|buffers)\['([^']+)'\]", r".\1", text)


def as_tensor_of(source: str) -> str | None:
    """The float's source when `source` is the 0-d tensor Dynamo passes a float it made dynamic as
    (`___as_tensor(L['lr'])` -> `L['lr']`); None for any other source."""
    return source[len(_AS_TENSOR) : -1] if source.startswith(_AS_TENSOR) and source.endswith(")") else None


_AS_TENSOR = "___as_tensor("


def said_name(source: str) -> str:
    """`input_name`, and a function's closure cell in words: `fn.__closure__[0].cell_contents`
    -> `the value fn captured (closure cell 0)`, what a guard on a closure variable names."""
    name = input_name(source)
    cell = re.fullmatch(r"(.+)\.__closure__\[(\d+)\]\.cell_contents", name) if "__closure__" in name else None
    return f"the value {cell[1]} captured (closure cell {cell[2]})" if cell else name


def _tensor(kind: str, what: str) -> Callable[[re.Match[str], str], GuardFailure]:
    def build(m: re.Match[str], guard: str) -> GuardFailure:
        name, expected, actual = input_name(m["s"]), m["e"], m.groupdict().get("act")
        # A parameter's mismatch goes on: `actual Double. Guard failed on a parameter, consider…`.
        actual = actual.removesuffix(".") if actual is not None else None
        dim = m.groupdict().get("i")
        where = f" on dim {dim}" if dim is not None else ""
        text = f"{what} of {name}{where} changed: {expected} -> {actual}"
        if kind == "dtype":
            # The guard says C++'s ScalarType (`Float`, `Double`); the user writes torch.float32.
            text = f"{what} of {name} changed: {_dtype(expected)} -> {_dtype(actual)}"
        elif kind == "rank":
            text = f"{name} has {actual} dimensions; the entry was compiled for {expected}"
        elif kind == "stride":
            text += " (a transposed, sliced or otherwise non-contiguous tensor)"
        return _failure(kind, guard, text, subject=m["s"], expected=expected, actual=actual)

    return build


#: c10's ScalarType names (a tensor guard's dtype mismatch) as torch's dtypes are named.
_SCALAR_TYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Long": "int64",
    "Int": "int32",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
    "ComplexFloat": "complex64",
    "ComplexDouble": "complex128",
    "ComplexHalf": "complex32",
}


def _dtype(name: str | None) -> str | None:
    """`Float` -> `torch.float32`; another name as it is (`Float8_e4m3fn` is torch's own but for case)."""
    if name is None:
        return None
    found = _SCALAR_TYPES.get(name.strip())
    return f"torch.{found}" if found else name


def _requires_grad(m: re.Match[str], guard: str) -> GuardFailure:
    expected = m["e"] == "1"
    text = f"requires_grad of {input_name(m['s'])} changed: {expected} -> {not expected}"
    return _failure("requires_grad", guard, text, subject=m["s"], expected=str(expected), actual=str(not expected))


def _global_state(m: re.Match[str], guard: str) -> GuardFailure:
    """`GLOBAL_STATE changed: grad_mode autocast(cpu)_enabled`: the parts of torch's global state
    the call differs in from the entry (torch's GlobalStateGuard names each, space-separated);
    `subject` lists them as torch does, which `recommend.py` compares between entries."""
    parts = m["what"].split()
    if parts == ["grad_mode"]:
        text = (
            "grad mode changed: gradients were enabled for one call and disabled (torch.no_grad, "
            "torch.inference_mode) for the other; each mode needs its own compile"
        )
        return _failure("grad_mode", guard, text, subject="grad_mode")
    if not parts:
        return _failure("global_state", guard, "global torch state changed: unspecified")
    return _state_failure(guard, parts)


def _state_failure(guard: str, parts: list[str]) -> GuardFailure:
    text = f"global torch state changed: {state_words(parts)}; each state needs its own compile"
    return _failure("global_state", guard, text, subject=" ".join(parts))


#: The `subject` of a failed `___check_torch_function_mode_stack()`: the torch function modes in
#: force differ (torch.set_default_device pushes one), global state as grad mode is.
FUNCTION_MODES = "torch_function_mode_stack"


def _function_modes(m: re.Match[str], guard: str) -> GuardFailure:
    return _state_failure(guard, [FUNCTION_MODES])


#: The parts of torch's global state a GLOBAL_STATE guard names, in words (torch 2.13's
#: GlobalStateGuard; `autocast(<device>)_enabled` is read apart, any other part said as it is).
_STATE_WORDS = {
    "grad_mode": "grad mode (torch.no_grad, torch.inference_mode)",
    "torch_function": "torch function handling (torch._C.DisableTorchFunction)",
    "torch_function_all_disabled": "torch function handling (torch._C.DisableTorchFunction)",
    "deterministic_algorithms": "deterministic algorithms (torch.use_deterministic_algorithms)",
    "deterministic_algorithms_warn_only": "deterministic algorithms' warn_only",
    "allow_tf32": "TF32 matmuls (torch.backends.cuda.matmul.allow_tf32)",
    "allow_fp16_reduce": "reduced-precision fp16 reductions (torch.backends.cuda.matmul)",
    "allow_bf16_reduce": "reduced-precision bf16 reductions (torch.backends.cuda.matmul)",
    "num_threads": "number of threads (torch.set_num_threads)",
    "default_dtype": "default dtype (torch.set_default_dtype)",
    "autocast_cache_enabled": "autocast's weight cache (torch.autocast(cache_enabled=...))",
    # Not a GLOBAL_STATE part: the guard `___check_torch_function_mode_stack()`, said as one.
    FUNCTION_MODES: "torch function modes (torch.set_default_device, a TorchFunctionMode)",
}


def state_words(parts: list[str]) -> str:
    """`grad_mode autocast(cpu)_enabled` as `grad mode (...) and autocast on cpu (torch.autocast)`."""
    said = []
    for part in parts:
        if part.startswith("autocast(") and part.endswith(")_enabled"):
            said.append(f"autocast on {part[9:-9]} (torch.autocast)")
        else:
            said.append(_STATE_WORDS.get(part, part))
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


def _dim_marking(m: re.Match[str], guard: str) -> GuardFailure:
    return _failure(
        "dim_marking",
        guard,
        "an input is marked dynamic (torch._dynamo.mark_dynamic) now but was not when the entry was compiled",
    )


def _dynamic_range(m: re.Match[str], guard: str) -> GuardFailure:
    text = (
        f"a dynamic size does not satisfy `{guard}`, a shape guard of the entry's dynamic graph "
        "(sizes 0 and 1 are always specialised)"
    )
    return _failure("dynamic_range", guard, text, subject=subject_name(m["s"]))


def _length(m: re.Match[str], guard: str) -> GuardFailure:
    name, said = subject_name(m["s"]), input_name(m["s"])
    return _failure(
        "length", guard, f"length of {said} changed: the entry was compiled for {m['e']}", subject=name, expected=m["e"]
    )


def _empty(m: re.Match[str], guard: str) -> GuardFailure:
    """`not L['rest']`: Dynamo's length check of an empty list, tuple or dict (`*rest` passed
    nothing when the entry was compiled)."""
    name = subject_name(m["s"])
    text = f"length of {input_name(m['s'])} changed: the entry was compiled for 0 (empty)"
    return _failure("length", guard, text, subject=name, expected="0")


def _identity(kind: str) -> Callable[[re.Match[str], str], GuardFailure]:
    def build(m: re.Match[str], guard: str) -> GuardFailure:
        # `___check_obj_id(mode, 1402…), type=<class '__main__.Mode'>`: the entry's object's class.
        typed = re.search(r", type=<class '(?:[\w.]*\.)?(\w+)'>", guard)
        name = input_name(m["s"])
        if kind == "identity" and name.endswith(".__code__"):  # a function passed in: its code
            text = f"{name.removesuffix('.__code__')} is a different function than when the entry was compiled"
        elif kind == "identity":
            what = f"is a different {typed[1]} object" if typed else "is a different object"
            text = f"{name} {what} than when the entry was compiled"
        else:
            was = f" (it was {_a(typed[1])})" if typed else ""
            text = f"{name} has a different type than when the entry was compiled{was}"
        return _failure(kind, guard, text, subject=subject_name(m["s"]))

    return build


def _presence(kind: str, what: str) -> Callable[[re.Match[str], str], GuardFailure]:
    """`not ___dict_contains('y', d)`: the entry was compiled for a `d` without the key `'y'`
    (the code tested `"y" in d`), and the call's has it; without `not`, the other way round.
    `not hasattr(o, 'bias')` likewise, of an attribute (kind `attribute`)."""

    def build(m: re.Match[str], guard: str) -> GuardFailure:
        present = m["neg"] is not None
        expected, actual = ("absent", "present") if present else ("present", "absent")
        name = input_name(m["s"])
        text = f"{what} {m['k']} of {name} changed: {expected} -> {actual} (the code tests whether {name} has it)"
        return _failure(kind, guard, text, subject=subject_name(m["s"]), expected=expected, actual=actual)

    return build


def _none(m: re.Match[str], guard: str) -> GuardFailure:
    """`mask is None`: the entry was compiled for `mask` None and the call passes something (an
    optional argument); `mask is not None` the reverse. `expected` and `actual` say `None` or
    `not None`."""
    expected, actual = ("not None", "None") if m["not"] else ("None", "not None")
    name = input_name(m["s"])
    text = f"{name} changed: {expected} -> {actual} (the entry was compiled for {name} {expected})"
    return _failure("none", guard, text, subject=subject_name(m["s"]), expected=expected, actual=actual)


def _not_a_tensor(m: re.Match[str], guard: str) -> GuardFailure:
    """`expected type of 'mask' to be a tensor type, ' but found <class 'NoneType'>`: the entry was
    compiled for a tensor; the call passes None (kind `none`) or another type (kind `type`)."""
    name, found = input_name(m["s"]), m["t"].rpartition(".")[2]
    if found == "NoneType":
        text = f"{name} changed: a tensor -> None (the entry was compiled for a tensor {name})"
        return _failure("none", guard, text, subject=subject_name(m["s"]), expected="not None", actual="None")
    if m["t"].startswith("torch."):  # a tensor still: a Parameter where a plain tensor was, or the reverse
        text = f"{name} is {_a(found)} now; the entry was compiled for another tensor type ({_OTHER_TENSOR})"
        return _failure("type", guard, text, subject=subject_name(m["s"]), actual=found)
    text = f"{name} is {_a(found)} now; the entry was compiled for a tensor"
    return _failure("type", guard, text, subject=subject_name(m["s"]), expected="Tensor", actual=found)


#: Why a tensor of another class recompiles: Dynamo guards the exact type of a tensor input.
_OTHER_TENSOR = "an nn.Parameter, a plain Tensor and each tensor subclass compile apart"


def _a(word: str) -> str:
    """`a ReLU`, `an int`: a class name with its article, as said before a vowel letter."""
    return f"an {word}" if word[:1].lower() in {"a", "e", "i", "o", "u"} else f"a {word}"


def _aliasing(m: re.Match[str], guard: str) -> GuardFailure:
    """`Duplicate tensors found: ["a", "b"]`: the call passes one tensor as several inputs the
    entry was compiled for as distinct tensors (Dynamo's NO_TENSOR_ALIASING guard)."""
    # A Python list's repr: a source with quotes of its own is double-quoted (`["G['x']", "y"]`).
    names = [input_name(a or b) for a, b in re.findall(r"\"([^\"]+)\"|'([^']+)'", m["g"])]
    said = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "two inputs"
    text = f"{said} are the same tensor in this call; the entry was compiled for distinct tensors"
    return _failure("aliasing", guard, text, subject=" ".join(names) or None)


def _backend(m: re.Match[str], guard: str) -> GuardFailure:
    """`BACKEND_MATCH failure: … Cached backend: _TorchCompileWrapper(compiler='eager', …) (id=…).
    New backend: …`: the function was compiled again by another torch.compile backend (read
    with `partition`, linear on hostile text)."""
    cached = guard.partition("Cached backend: ")[2]
    new = cached.partition("New backend: ")[2]
    expected, actual = (_backend_name(text.partition(" (id=")[0]) for text in (cached, new))
    text = (
        f"torch.compile backend changed: {expected} -> {actual} (another backend compiles its own entry; "
        "a new backend object on each call recompiles each time: reuse one)"
    )
    return _failure("backend", guard, text, expected=expected or None, actual=actual or None)


def _backend_name(wrapper: str) -> str:
    """`_TorchCompileWrapper(compiler='eager', dynamic=None)` -> `eager`; another callable as printed."""
    named = re.search(r"compiler='([^']*)'", wrapper)
    return named[1] if named else wrapper.strip()


def _value(m: re.Match[str], guard: str) -> GuardFailure:
    source, expected = m["s"].strip(), m["e"].strip()
    if source.startswith("G["):
        name = subject_name(source)
        return _failure(
            "global",
            guard,
            f"global {name} changed: the entry was compiled for {name} == {expected}",
            subject=source,
            expected=expected,
        )
    name = said_name(source)
    text = f"{name} changed: the entry was compiled for {name} == {expected}"
    return _failure("value", guard, text, subject=source, expected=expected)


#: The constant a guard compares with: an int or a float as Python prints it.
_NUMBER = r"-?\d[\d.]*(?:e[+-]?\d+)?"
#: A comparison read with its source on the left: `2 < k` is `k > 2`.
_FLIPPED = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}


def _value_range(m: re.Match[str], guard: str) -> GuardFailure:
    """`___stack0 <= 0.0`: the entry's code tested a condition on a dynamic value, and the call's
    value is outside it; `expected` is the condition with the source on the left (`<= 0.0`)."""
    if m["s1"] is not None:
        source, condition = m["s1"], f"{_FLIPPED[m['op1']]} {m['n1']}"
    else:
        source, condition = m["s2"], f"{m['op2']} {m['n2']}"
    name = subject_name(source)
    if name.endswith(".storage_offset()"):
        return _offset_range(name.removesuffix(".storage_offset()"), guard)
    text = f"{name} is outside `{guard}`, a condition the entry's code tested on it (an if on its value)"
    return _failure("value_range", guard, text, subject=source, expected=condition)


def _offset_range(name: str, guard: str) -> GuardFailure:
    """`2 <= x.storage_offset()`: no code of the user's tested it; the entry compiled a view (a
    slice, `out[:, -1:]`) at a dynamic offset into its storage, and Dynamo specialises offsets 0
    and 1 as it does sizes, so a view that starts at 0 (a fresh tensor's slice) fails it."""
    text = (
        f"the storage offset of {name} (where the view starts in its tensor's storage) does not satisfy "
        f"`{guard}`, a guard of the entry's dynamic graph: the entry was compiled for {name} as a view at a "
        "dynamic offset, and offsets 0 and 1 are always specialised, as sizes are"
    )
    return _failure("dynamic_range", guard, text, subject=f"{name}.storage_offset()")


#: A tensor mismatch's name: `x`, or a source with quotes of its own, `G['buf']` (no blank in
#: either, so an attempt ends at the first blank: linear on hostile text).
_TENSOR = r"tensor '(?P<s>\S*?)'"
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], str], GuardFailure]]


class _Patterns:
    """The regexes of recompile reasons and their rules, compiled when the first reason is read
    (`patterns`): a log that recompiles nothing never needs these 27 (~6M instructions, 1 % of a
    small log's run: bench/README.md, session 9)."""

    def __init__(self) -> None:
        self.entry = re.compile(r"^(?P<cid>!?\d+(?:/\d+){1,2}(?:_\d+)?):\s*(?P<rest>.*)$", re.DOTALL)
        #: `(?P<name>.+?)\s*$` (what it means) retried the trailing whitespace at each character of
        #: the name: quadratic on a long line of spaces. The last non-space character ends it instead.
        self.user_frame = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<name>.*\S|.)\s*$')
        #: The end of Dynamo's guard comment, after its last `  # `: `<file>:<line> in <fn>[ (a note)]`.
        self.frame_tail = re.compile(r"(?P<file>[^#]*?):(?P<line>\d+) in (?P<name>[\w<>.]+)")
        #: Rules searched in linear time by `_search` (see analyse/fold/linear.py).
        self.comma_ended = (
            re.compile(r"___check_obj_id\((?P<s>[^,]+),"),
            re.compile(r"___check_type_id\((?P<s>[^,]+),"),
        )
        self.size_or_symbol = re.compile(r"(?P<s>[\w\[\]'.()]*\.(?:size|stride)\(\)\[\d+\]|\bs\d+\b)")
        #: `len(<source>) == <n>` and `<source> == <value>`: Dynamo's guards on a length and on a
        #: Python value, in a recompile reason and in an entry's own guards alike (callvalues.py).
        self.length_guard = re.compile(r"^len\((?P<s>.+)\) == (?P<e>\d+)$")
        #: `not L['rest']`: the length check of an empty container.
        self.empty_guard = re.compile(r"^not (?P<s>[^\s()]+)$")
        self.value_guard = re.compile(r"^(?P<s>[^=<>!]+?) == (?P<e>.+)$")
        #: `<source> <= 0.0` or `2 < <source>`: a condition on a dynamic Python value (a branch on it).
        left = rf"(?P<n1>{_NUMBER}) (?P<op1><=|>=|<|>) (?P<s1>[^\s<>=!]+)"
        right = rf"(?P<s2>[^\s<>=!]+) (?P<op2><=|>=|<|>) (?P<n2>{_NUMBER})"
        self.value_range = re.compile(rf"^(?:{left}|{right})$")
        self.rules: list[Rule] = [*_tensor_rules(), *self._other_rules()]

    def _other_rules(self) -> list[Rule]:
        return [
            (re.compile(r"GLOBAL_STATE changed:(?P<what>.*)"), _global_state),
            (re.compile(r"^___check_torch_function_mode_stack\(\)$"), _function_modes),
            (re.compile(r"_has_dynamo_dim_marking"), _dim_marking),
            (
                re.compile(r"^(?P<neg>not )?___dict_contains\((?P<k>.*), (?P<s>[^,]+)\)$"),
                _presence("dict_key", "key"),
            ),
            (
                re.compile(r"^(?P<neg>not )?hasattr\((?P<s>[^,]+), (?P<k>'[^']*')\)$"),
                _presence("attribute", "attribute"),
            ),
            (re.compile(r"^BACKEND_MATCH failure: "), _backend),
            (re.compile(r"^Duplicate tensors found: (?P<g>.*)$"), _aliasing),
            (re.compile(r"^(?P<s>[^\s()]+) is (?P<not>not )?None$"), _none),
            (
                re.compile(r"^expected type of '(?P<s>[^']+)' to be a tensor type, ' but found <class '(?P<t>[^']+)'>"),
                _not_a_tensor,
            ),
            (self.length_guard, _length),
            (self.empty_guard, _empty),
            (self.comma_ended[0], _identity("identity")),
            (self.comma_ended[1], _identity("type")),
            (self.size_or_symbol, _dynamic_range),
            (self.value_guard, _value),
            (self.value_range, _value_range),
        ]


def _tensor_rules() -> list[Rule]:
    return [
        (
            re.compile(_TENSOR + r" size mismatch at index (?P<i>\d+)\. expected (?P<e>[^,]+), actual (?P<act>\S+)"),
            _tensor("size", "size"),
        ),
        (
            re.compile(_TENSOR + r" stride mismatch at index (?P<i>\d+)\. expected (?P<e>[^,]+), actual (?P<act>\S+)"),
            _tensor("stride", "stride"),
        ),
        (
            re.compile(_TENSOR + r" rank mismatch\. expected (?P<e>\d+), actual (?P<act>\d+)"),
            _tensor("rank", "number of dimensions"),
        ),
        (
            re.compile(_TENSOR + r" dtype mismatch\. expected (?P<e>[^,]+), actual (?P<act>\S+)"),
            _tensor("dtype", "dtype"),
        ),
        (re.compile(_TENSOR + r" requires_grad mismatch\. expected requires_grad=(?P<e>\d)"), _requires_grad),
        (
            re.compile(
                _TENSOR + r" (?:Tensor )?device(?: index)? mismatch\. "
                r"[Ee]xpected (?:device index to be )?(?P<e>.+?),? actual (?P<act>.+)$"
            ),
            _tensor("device", "device"),
        ),
        (
            re.compile(_TENSOR + r" dispatch key set mismatch\. expected (?P<e>.+?), actual (?P<act>.+)$"),
            _tensor("dispatch_keys", "dispatch keys"),
        ),
    ]


@functools.cache
def patterns() -> _Patterns:
    """The recompile reasons' regexes, compiled once, on first use."""
    return _Patterns()
