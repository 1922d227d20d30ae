"""Functions passed to a compiled function (corpus functions_passed): a function argument's
code object and a closure's captured value, said in words (format 1.45), and the call of the
first function with a new shape blamed on the shape: the new compile's guards hold the call's
function's id, which an earlier recompile said the first entry was compiled for."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_recompiles

from tlscope.analyse.fold.callvalues import guard_codes, guard_values
from tlscope.analyse.fold.guards import guard_failure
from tlscope.analyse.fold.recommend import expected_of, recommended_failure


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("functions_passed", tmp_path_factory)


def _said(recompile: dict[str, Any]) -> str:
    failure: dict[str, Any] = recompile["guard_failures"][recompile["recommended"]["index"]]
    return str(failure["explanation"])


def test_each_recompile_in_words(recompiles: dict[str, Any]) -> None:
    assert {cid: _said(r) for cid, r in recompiles.items()} == {
        "[0/1]": "fn is a different function than when the entry was compiled",
        "[0/2]": "shape[0] changed: 2 -> 4",
        "[0/3]": "fn is a different function than when the entry was compiled",
        "[0/4]": "the value fn captured (closure cell 0) changed: 2 -> 3",
    }
    assert recompiles["[0/2]"]["recommended"]["why"].endswith(
        "[0/1] failed on which function fn is, but [0/0] was compiled for the call's"
    )
    # An id means nothing outside the process: never said, only compared.
    identity = recompiles["[0/2]"]["guard_failures"][0]
    assert (identity["kind"], identity["actual"]) == ("identity", None)


def test_the_calls_id_is_read_from_the_new_compiles_guards() -> None:
    tree = "| +- ID_MATCH: ___check_obj_id(L['fn'].__code__, 140)                # return fn(x)  # a.py:3 in f\n"
    codes = guard_codes("dynamo_cpp_guards_str", tree.encode())
    assert codes == ["___check_obj_id(L['fn'].__code__, 140)"]
    assert guard_values(codes, {("identity", "fn.__code__")}) == {
        ("identity", "fn.__code__"): ("L['fn'].__code__", "140")
    }
    newest = guard_failure("0/1: ___check_obj_id(fn.__code__, 150), type=<class 'code'>")
    assert expected_of(newest) == ("identity fn.__code__", "150")
    failures = [newest, guard_failure("0/0: shape[0] == 2")]
    known = {"[0/0]": {"identity fn.__code__": "140"}}
    found = recommended_failure(failures, entry_expected=known, call_ids={"identity fn.__code__": "140"})
    assert found is not None and found.index == 1
    found = recommended_failure(failures, entry_expected=known, call_ids={"identity fn.__code__": "160"})
    assert found is not None and found.index == 0


def test_a_global_function_is_named_as_the_code_names_it() -> None:
    """A global function swapped and swapped back (`ACT = gelu`, then `ACT = relu` with a new scale):
    the identity key of the newest entry's failure matches the id the call's guards hold, and the
    why names `ACT` as the code does, not Dynamo's `G['ACT'].__code__`."""
    newest = guard_failure("0/1: ___check_obj_id(G['ACT'].__code__, 150), type=<class 'code'>")
    failures = [newest, guard_failure("0/0: G['SCALE'] == 2")]
    about = expected_of(newest)
    assert about == ("identity G['ACT'].__code__", "150")
    found = recommended_failure(failures, entry_expected={"[0/0]": {about[0]: "140"}}, call_ids={about[0]: "140"})
    assert found is not None and found.index == 1
    assert found.why.endswith("[0/1] failed on which function ACT is, but [0/0] was compiled for the call's")
