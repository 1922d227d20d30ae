"""The words of compiles.json's `exports` (analyse/fold/exports.py): an expression in the user's
names, each issue's sentence and fix, each call's sentence. Plain functions of the fold's facts,
decided here once so that summary, the report, the explorer and diff say the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tlscope.format.compiles import ExportFix, ExportIssue, ExportSymbol, SourceLocation
from tlscope.model.events import FrameLocals

FAKE_KERNEL_DOCS = "https://docs.pytorch.org/docs/stable/library.html#torch.library.register_fake"
COND_DOCS = "https://docs.pytorch.org/docs/stable/cond.html"
SYMBOL = re.compile(r"\b[su]\d+\b")
#: `k = n.item()`, `k: int = t.tolist()[0]`: the name a data-dependent value is given.
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
_DIM = re.compile(r"^(?:L\['(?P<input>[^']+)'\]|(?P<plain>[A-Za-z_]\w*))\.size\(\)\[(?P<dim>\d+)\]$")


def assigned_name(at: SourceLocation | None) -> str | None:
    """The name the user's line gives its value (`k` of `k = n.item()`), if it is an assignment."""
    if at is None or not at.code:
        return None
    match = _ASSIGNED.match(at.code)
    return match[1] if match else None


def dim_name(source: str | None) -> str | None:
    """`x.size()[0]` for Dynamo's `L['x'].size()[0]`; null for other sources."""
    match = _DIM.match(source or "")
    if match is None:
        return None
    return f"{match['input'] or match['plain']}.size()[{match['dim']}]"


def locals_by_symbol(frame_locals: FrameLocals | None) -> dict[str, str]:
    """A symbol's name among the frame's locals: the local whose value is that symbol alone
    (`{"k": ["u0"]}` in torch 2.13, `{"k": "u0"}` before)."""
    found: dict[str, str] = {}
    for local, value in ((frame_locals.locals or {}) if frame_locals is not None else {}).items():
        values: Sequence[Any] = value if isinstance(value, list) else [value]
        if len(values) == 1 and isinstance(values[0], str) and SYMBOL.fullmatch(values[0].strip()):
            found.setdefault(values[0].strip(), local)
    return found


def code_expr(expr: str, symbols: Sequence[ExportSymbol]) -> str:
    """`expr` as Python in the user's names: each symbol the user named replaced by that name
    (`u0 > 2` -> `k > 2`), and sympy's `Eq(a, b)` / `Ne(a, b)` around it as `a == b` / `a != b`."""
    names = {s.symbol: s.name for s in symbols if s.name}
    named = SYMBOL.sub(lambda m: names.get(m[0], m[0]), expr) if names else expr
    return python_expr(named)


def python_expr(expr: str) -> str:
    """`Eq(a, b)` -> `a == b`, `Ne(a, b)` -> `a != b` when the call is the whole expression."""
    text = expr.strip()
    for head, op in (("Eq(", "=="), ("Ne(", "!=")):
        if text.startswith(head) and text.endswith(")"):
            args = top_level_split(text[len(head) : -1])
            if len(args) == 2:
                return f"{args[0].strip()} {op} {args[1].strip()}"
    return text


def top_level_split(text: str) -> list[str]:
    """`text` split at its commas outside brackets; [] when its brackets do not balance."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return []
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts if depth == 0 else []


#: A comparison's negation, for a `torch._check` of what draft_export took to be False.
_NEGATED = {" == ": " != ", " != ": " == ", " >= ": " < ", " <= ": " > ", " > ": " <= ", " < ": " >= "}


def negated(code: str) -> str:
    """`a != b` for `a == b` when the expression is one comparison, else `torch.sym_not(...)`."""
    found = [op for op in _NEGATED if op in code]
    if len(found) == 1 and code.count(found[0]) == 1 and not any(c in code for c in "<>=!" if c not in found[0]):
        return code.replace(found[0], _NEGATED[found[0]])
    return f"torch.sym_not({code})"


def op_name(op: str) -> str:
    """`mylib::op` for torch.ops' `mylib.op.default`: the name register_fake takes."""
    parts = op.split(".")
    if len(parts) >= 2:
        return f"{parts[0]}::{parts[1]}"
    return op


def where_text(at: SourceLocation) -> str:
    """`file.py:12` (the file's name: `user_frame` has its path), or `line 12` when the log's
    string table lacks the file (draft_export's own log)."""
    return f"line {at.line}" if at.file in (None, "(unknown)") else f"{at.file.rsplit('/', 1)[-1]}:{at.line}"


def at_text(at: SourceLocation | None) -> str:
    if at is None:
        return ""
    code = f" `{at.code.strip()}`" if at.code else ""
    return f" at {at.name or '?'} ({where_text(at)}){code}"


def origin_text(symbols: Sequence[ExportSymbol]) -> str:
    """`k is read from tensor data by `k = n.item()` (main.py:4)`, for the data-dependent symbols."""
    parts = []
    for s in symbols:
        if s.kind != "unbacked":
            continue
        made = s.created_at
        where = f" by `{made.code.strip()}` ({where_text(made)})" if made is not None and made.code else ""
        parts.append(f"{s.name or s.symbol} is read from tensor data{where}")
    return "; ".join(parts)


def expr_sentence(
    kind: str, code: str, result: str | None, at: SourceLocation | None, symbols: Sequence[ExportSymbol]
) -> str:
    origin = origin_text(symbols)
    if kind == "data_dependent_error":
        return f"export could not decide `{code}`{at_text(at)}: {origin or 'it depends on tensor data'}."
    if kind == "data_dependent":
        return (
            f"draft_export could not decide `{code}`{at_text(at)} and took the example's answer, {result}, "
            f"asserting it in the program" + (f"; {origin}." if origin else ".")
        )
    return f"export evaluated the guard `{code}`{at_text(at)}, which narrows the sizes it names."


#: torch's GuardOnDataDependentSymNode message: `Could not guard on data-dependent expression u0 > 2 (unhinted: ...`.
_DATA_DEPENDENT = re.compile(r"Could not guard on data-dependent expression (.+?) \(unhinted")


def data_dependent_expr(reason: str) -> str | None:
    """The expression of a data-dependent error's message, if the reason is one."""
    match = _DATA_DEPENDENT.search(reason)
    return match[1].strip() if match else None


def dynamo_error_text(fail_type: str, reason: str, at: SourceLocation | None) -> tuple[str, ExportFix | None]:
    """A strict export's Dynamo failure: its sentence (torch's first line of the reason, or the
    constraint violation's own bullet) and, for a declared-dynamic dimension the code specialised,
    the line to change."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    said = next((line[2:] for line in lines if line.startswith("- ")), None) or (lines[0] if lines else "")
    said = said if len(said) <= 300 else said[:299] + "…"
    sentence = f"torch.export's strict tracing (Dynamo) raised {fail_type}{at_text(at)}"
    sentence += f": {said}" if said else "."
    if fail_type != "ConstraintViolationError" or at is None:
        return sentence, None
    fix = ExportFix(
        kind="change_code",
        code="make it not single out the size",
        where=at,
        why=(
            "the code specialised a dimension declared dynamic (a Dim in dynamic_shapes): change that line so it "
            "does not depend on the size's value (torch.cond or torch.where instead of a Python branch on it). If "
            "the size really is fixed, drop its Dim (or give Dim.AUTO, which lets export keep it static)."
        ),
    )
    return sentence, fix


def partial_sentence(at: SourceLocation | None) -> str:
    """The partial graph's issue: where tracing stopped, when the graph says."""
    stopped = "" if at is None else f" after the line{at_text(at)}, the last one traced"
    return (
        f"Tracing raised an error{stopped}; the graph traced until then is logged "
        "(the error itself is not: it reached the caller)."
    )


def expr_fix(
    kind: str, code: str, result: str | None, at: SourceLocation | None, symbols: Sequence[ExportSymbol]
) -> ExportFix | None:
    if kind not in ("data_dependent_error", "data_dependent") or not any(s.kind == "unbacked" for s in symbols):
        return None
    check = f"torch._check({code})" if result != "False" else f"torch._check({negated(code)})"
    taken = f"`{code}` is False" if result == "False" else f"`{code}` holds"
    return ExportFix(
        code=check,
        where=at,
        why=(
            f"if {taken} for every input you will pass, torch._check says so: export keeps that branch and "
            "checks it at run time. If either branch can happen, write the branch with torch.cond, which "
            "exports both."
        ),
        docs_url=COND_DOCS,
    )


def specialised_fix(issue: ExportIssue, specialised: dict[str, tuple[str | None, str | None]]) -> None:
    """A guard evaluated that specialised a dimension: say which, and the fix."""
    for symbol in issue.symbols:
        if symbol.symbol not in specialised:
            continue
        value, source = specialised[symbol.symbol]
        dim = dim_name(source) or symbol.name or symbol.symbol
        issue.sentence = (
            f"export evaluated `{issue.code_expr}`{at_text(issue.user_frame)}, which made {dim} a constant ({value}): "
            "if it was declared dynamic (a Dim in dynamic_shapes), export raised a constraint violation."
        )
        issue.fix = ExportFix(
            kind="change_code",
            code=f"make it not depend on {dim} being {value}",
            where=issue.user_frame,
            why=(
                f"the code branches on the exact size, so the program is only valid for {value}. If the size "
                "really is fixed, drop its Dim (or give Dim.AUTO, which lets export keep it static)."
            ),
        )
        return


#: A guard that two backed sizes are equal (`Eq(s27, s17)`, in either order).
_EQUAL = r"Eq\((s\d+), (s\d+)\)"


def equal_dims_fix(issue: ExportIssue, called_at: SourceLocation | None) -> None:
    """A guard evaluated that two input dimensions are one size (`x @ y` needs `x.size()[1] ==
    y.size()[0]`): declared as two Dims in dynamic_shapes, export raises a constraint violation;
    one Dim for both (or Dim.AUTO) says what the code needs. Said where export was called, whose
    line gives `dynamic_shapes`."""
    found = re.fullmatch(_EQUAL, issue.expr or "")
    names = {s.symbol: s.name for s in issue.symbols if s.kind == "backed" and s.name}
    if issue.fix is not None or found is None or found[1] not in names or found[2] not in names:
        return
    a, b = names[found[1]], names[found[2]]
    issue.sentence = (
        f"export found that `{issue.code_expr or issue.expr}` must hold{at_text(issue.user_frame)}: {a} and {b} "
        "are one size: if they were declared as two Dims in dynamic_shapes, export raised a constraint violation."
    )
    issue.fix = ExportFix(
        kind="change_code",
        code=f"give {a} and {b} the same Dim in dynamic_shapes",
        where=called_at,
        why=(
            f"the code{at_text(issue.user_frame)} needs {a} == {b}, so the program is valid only where they are "
            "equal: one Dim object for both declares that (or Dim.AUTO, which lets export find it)."
        ),
    )


def call_sentence(status: str, issues: Sequence[ExportIssue]) -> str:
    if status == "exported":
        return "Exported: a program was logged, with no issue."
    if status == "exported_with_issues":
        kinds = {i.kind for i in issues}
        titles = ", ".join(sorted({i.title for i in issues}))
        why = []
        if "data_dependent" in kinds:
            why.append(
                "it asserts draft_export's guesses of data-dependent values, which torch.export.export cannot make"
            )
        if "missing_fake_kernel" in kinds:
            why.append("draft_export ran a custom operator's real kernel, having no fake one")
        if "mismatched_fake_kernel" in kinds:
            why.append("a custom operator's fake kernel gives other shapes than its real one")
        if "guard_evaluated" in kinds:
            why.append("guards export evaluated narrowed sizes, which fails if they were declared dynamic")
        count = f"{len(issues)} issue{'s' if len(issues) != 1 else ''}"
        return f"Exported with {count} ({titles}): " + "; ".join(why) + "."
    if status == "traced":
        return (
            "Traced: strict export's Dynamo trace of this call ended without error; without TORCH_DTRACE "
            "torch logs nothing of what followed, so whether it exported is not in the log."
        )
    if not issues:
        return "Failed: no program was logged, and no reason either (the error reached the caller)."
    first = next((i for i in issues if i.kind in ("data_dependent_error", "guard_evaluated")), issues[0])
    return f"Failed: {first.sentence}"


def kernel_text(kind: str, op: str, reason: str | None) -> tuple[str, ExportFix]:
    """A missing or mismatched fake kernel's sentence and fix (`register_fake` of the op)."""
    if kind == "missing_fake_kernel":
        sentence = f"torch.ops.{op} has no fake kernel, so export cannot tell its output's shape without running it."
        why = (
            "export traces with fake tensors (shapes, no data); a custom operator needs a fake kernel that "
            "computes its output's size and dtype from its inputs'. draft_export ran the real kernel instead, "
            "which torch.export.export cannot do."
        )
    else:
        sentence = f"torch.ops.{op}'s fake kernel disagrees with its real kernel" + (f": {reason}." if reason else ".")
        why = (
            "the fake kernel registered for it returns a different size (or dtype, or stride) than the real "
            "kernel on the example inputs, so the exported program's shapes are wrong; fix that function."
        )
    fix = ExportFix(code=f'@torch.library.register_fake("{op_name(op)}")', why=why, docs_url=FAKE_KERNEL_DOCS)
    return sentence, fix
