"""A branch on a value read from a tensor, after the graph break that read it (corpus
item_branch): the resume function takes the value from the stack (`___stack0`) and recompiles for
other values, first for another float, then for the other side of the branch. The recompile
reasons say `___stack0 == -6.73...` and `___stack0 <= 0.0`; tlscope says which value that is (the
one the graph break at item_branch.py:15 left on the stack) and which condition (`if z > 0:` at
line 16), and classifies `<=` on a value as `value_range` (format 1.44; before, `other`)."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.analyse.fold.compileresult import name_stack_values
from tlscope.analyse.fold.guards import guard_failure
from tlscope.cli import main
from tlscope.format.compiles import SourceLocation

LOG = next((CORPUS / "item_branch").glob("*.log.gz"))


@pytest.fixture(scope="module")
def compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("item_branch") / "out"
    assert main([str(LOG), "-o", str(out), "--no-browser"]) == 0
    found: dict[str, Any] = json.loads((out / "compiles.json").read_text("utf-8"))
    return {c["id"]: c for c in found["compiles"]}


def _reasons() -> list[str]:
    """The recompile_reasons payloads the log holds, in order, read here (torch declares them JSON
    and writes the first as plain text)."""
    lines = gzip.decompress(LOG.read_bytes()).decode().splitlines()
    found = []
    for n, line in enumerate(lines):
        if '"recompile_reasons"' in line:
            payload = []
            for following in lines[n + 1 :]:
                if not following.startswith("\t"):
                    break
                payload.append(following[1:])
            found.append("\n".join(payload))
    return found


def test_the_log_says_only_stack0(compiles: dict[str, Any]) -> None:
    first, second = _reasons()
    assert first.startswith("1/0: ___stack0 == ") and "graph break" not in first
    assert second.startswith('[\n"1/1: ___stack0 <= 0.0  # if z > 0:')


def test_the_value_is_named_by_the_graph_break_that_left_it(compiles: dict[str, Any]) -> None:
    failure = compiles["[1/1]"]["recompile"]["guard_failures"][0]
    assert failure["kind"] == "value" and failure["subject"] == "___stack0"
    assert failure["explanation"] == (
        f"the value the graph break at item_branch.py:15 left on the stack (___stack0) changed: "
        f"{failure['expected']} -> {failure['actual']}"
    )
    # The graph break is the .item() at line 15.
    (brk,) = compiles["[0/0]"]["graph_breaks"]
    assert brk["user_frame"]["line"] == 15 and ".item()" in brk["user_frame"]["code"]


def test_the_other_side_of_the_branch_is_a_value_range(compiles: dict[str, Any]) -> None:
    recompile = compiles["[1/2_1]"]["recompile"]
    chosen = recompile["guard_failures"][recompile["recommended"]["index"]]
    assert (chosen["kind"], chosen["guard"], chosen["expected"]) == ("value_range", "___stack0 <= 0.0", "<= 0.0")
    # The call's value: the float, now a symbol, as create_symbol logged it (> 0: the other side).
    assert float(chosen["actual"]) > 0
    assert chosen["explanation"].endswith(
        f"(___stack0) is {chosen['actual']} in this call, outside `___stack0 <= 0.0`, a condition the "
        "entry's code tested on it (`if z > 0:` at item_branch.py:16)"
    )
    assert recompile["compared_with"] == "[1/1]"


@pytest.mark.parametrize(
    ("guard", "kind", "subject", "expected"),
    [
        ("___stack0 <= 0.0", "value_range", "___stack0", "<= 0.0"),
        ("2 < L['k']", "value_range", "L['k']", "> 2"),
        ("k >= -1.5e-05", "value_range", "k", ">= -1.5e-05"),
        ("2 <= x.size()[0]", "dynamic_range", "x.size()[0]", None),
        ("k == 3", "value", "k", "3"),
    ],
)
def test_a_condition_on_a_value_is_a_value_range(guard: str, kind: str, subject: str, expected: str | None) -> None:
    found = guard_failure(f"0/0: {guard}")
    assert (found.kind, found.subject, found.expected) == (kind, subject, expected)


def test_stack_values_are_named_only_in_a_resume_function() -> None:
    failure = guard_failure("0/0: ___stack0 == 1.5")
    said = failure.explanation
    name_stack_values([failure], SourceLocation(file="/p/a.py", line=3, name="f"))
    assert failure.explanation == said
    name_stack_values([failure], SourceLocation(file="/p/a.py", line=3, name="torch_dynamo_resume_in_f_at_9"))
    assert failure.explanation.startswith("the value the graph break at a.py:9 left on the stack (___stack0) ")
    assert re.search(r"\(___stack0\).*___stack0 == 1\.5", failure.explanation)


def test_a_value_range_without_a_line_says_the_condition_in_words() -> None:
    """A guard logged without its user line (an older torch): the condition in words, no line."""
    from tlscope.analyse.fold.callvalues import fill_actuals

    failure = guard_failure("0/0: ___stack0 <= 0.0")
    failure.user_frame = None
    fill_actuals([failure], {("value", "___stack0"): ("L['___stack0']", "1.5")}, [])
    assert failure.actual == "1.5"
    assert failure.explanation == (
        "___stack0 is 1.5 in this call, outside `___stack0 <= 0.0`, a condition the entry's code tested on it "
        "(an if on its value)"
    )
