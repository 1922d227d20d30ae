"""A recompile's input changes named as the code names them (format 1.47 `changes[].name`).

Dynamo's sources (`L['x']`, `L['self']._modules['a']._parameters['weight']`) are how the log
names an input, not how the user's code does; `summary`, the report and the explorer said them
as they were (`L['x'] size: [4, 8] -> [5, 8]` under `size of x on dim 0 changed`). Python names
each change once; every view says the name."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_compiles

from tlscope.analyse.fold.compileresult import name_changes
from tlscope.format.compiles import InputChange, SourceLocation


def _changes(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for e in data["compiles"] if e["recompile"] for c in e["recompile"]["changes"]]


@pytest.mark.parametrize(
    ("scenario", "source", "name"),
    [
        ("recompiles", "L['x']", "x"),
        ("module_counter", "L['self'].step", "self.step"),
        ("frozen_layer", "L['self']._modules['a']._parameters['weight']", "self.a.weight"),
    ],
)
def test_corpus_changes_are_named_as_the_code_does(
    scenario: str, source: str, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    changes = _changes(corpus_compiles(scenario, tmp_path_factory))
    assert changes and all(isinstance(c["name"], str) and c["name"] for c in changes)
    named = {c["name"] for c in changes if c["input"] == source}
    assert named == {name}


def test_a_resume_functions_stack_value_is_said_in_words() -> None:
    resume = SourceLocation(name="torch_dynamo_resume_in_f_at_12", file="/p/train.py", line=12)
    changes = [
        InputChange(input="L['___stack0']", what="size", before="[4]", after="[5]"),
        InputChange(input="L['x']", what="size", before="[4]", after="[5]"),
    ]
    name_changes(changes, resume)
    assert [c.said() for c in changes] == [
        "the value the graph break at train.py:12 left on the stack (___stack0)",
        "x",
    ]
    # Not a resume function: the stack value keeps Dynamo's name.
    other = [InputChange(input="L['___stack0']", what="size", before="[4]", after="[5]")]
    name_changes(other, SourceLocation(name="f", file="/p/train.py", line=3))
    assert other[0].said() == "___stack0"


def test_an_older_files_change_is_said_by_its_source() -> None:
    assert InputChange(input="L['x']", what="size", before="[4]", after="[5]").said() == "L['x']"


def test_the_summary_says_the_name(tmp_path_factory: pytest.TempPathFactory) -> None:
    import subprocess
    import sys

    from helpers import CORPUS

    command = [sys.executable, "-m", "tlscope", "summary", str(CORPUS / "recompiles")]
    run = subprocess.run(command, check=True, capture_output=True, text=True)
    assert "  x size: " in run.stdout and "L['x'] size" not in run.stdout
