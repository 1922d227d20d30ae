"""compiles.json `actual` for guards on Python values (analyse/fold/callvalues.py), on the real trace.

corpus/traces/recompiles_dynamic was made with torch 2.13 by corpus/scenarios/recompiles_dynamic.py,
whose calls are the ground truth: g(x, 2) then g(x, 3) (k specialised, then a dynamic int), the
global SCALE_UP False then True, a list of 2 then 3 tensors, `limited` with 'a', 'bb', then 'ccc'
past the recompile limit (its compile fails before it guards anything: that value is not in the
log), and a marked-dynamic x then one of size 1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.analyse.fold.callvalues import guard_codes, guard_values, value_key
from tlscope.pipeline.single import run
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions

LOG = next((CORPUS / "recompiles_dynamic").glob("*.log.gz"), None)


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if LOG is None:
        pytest.skip("corpus trace recompiles_dynamic not generated (corpus/generate.py)")
    out = OutputDir(tmp_path_factory.mktemp("callvalues") / "out", overwrite=False)
    out.check()
    run(LOG, out, ParseOptions())
    found = json.loads((out.target / "compiles.json").read_text(encoding="utf-8"))
    return {c["id"]: c for c in found["compiles"]}


def failures(entry: dict[str, Any]) -> dict[str, tuple[str, str | None, str | None, str]]:
    """cache entry -> (kind, expected, actual, explanation)."""
    return {
        f["cache_entry"]: (f["kind"], f["expected"], f["actual"], f["explanation"])
        for f in entry["recompile"]["guard_failures"]
    }


def value_changes(entry: dict[str, Any]) -> set[tuple[str, str, str | None, str | None]]:
    kinds = {"value", "length"}
    return {
        (c["input"], c["what"], c["before"], c["after"]) for c in entry["recompile"]["changes"] if c["what"] in kinds
    }


def test_an_int_made_dynamic_gets_its_new_value_from_create_symbol(entries: dict[str, Any]) -> None:
    assert failures(entries["[1/1]"])["[1/0]"] == ("value", "2", "3", "k changed: 2 -> 3")
    assert value_changes(entries["[1/1]"]) == {("L['k']", "value", "2", "3")}


def test_a_global_gets_its_new_value_from_the_new_entrys_guards(entries: dict[str, Any]) -> None:
    found = failures(entries["[1/2]"])
    assert found["[1/1]"] == ("global", "False", "True", "global SCALE_UP changed: False -> True")
    assert found["[1/0]"][:3] == ("value", "2", "3")  # k was 3 in this call too (its create_symbol)
    # `changes` compares with the recommended entry only ([1/1], the newest): it was dynamic in k,
    # so k is no change there.
    assert value_changes(entries["[1/2]"]) == {("G['SCALE_UP']", "value", "False", "True")}


def test_a_length_and_a_string(entries: dict[str, Any]) -> None:
    assert failures(entries["[2/1]"])["[2/0]"] == ("length", "2", "3", "length of xs changed: 2 -> 3")
    assert ("L['xs']", "length", "2", "3") in value_changes(entries["[2/1]"])
    assert failures(entries["[3/1]"])["[3/0]"] == ("value", "'a'", "'bb'", "mode changed: 'a' -> 'bb'")
    assert value_changes(entries["[3/1]"]) == {("L['mode']", "value", "'a'", "'bb'")}


def test_no_actual_where_the_log_does_not_hold_it(entries: dict[str, Any]) -> None:
    """The call with 'ccc' hit the recompile limit: [3/2] logged no guards and no symbol."""
    entry = entries["[3/2]"]
    assert entry["status"] == "failed" and entry["guards"] is None
    assert {cid: f[2] for cid, f in failures(entry).items()} == {"[3/1]": None, "[3/0]": None}
    assert "the entry was compiled for mode == 'bb'" in failures(entry)["[3/1]"][3]
    assert value_changes(entry) == set()


def test_a_dynamic_range_guard_gets_the_calls_size(entries: dict[str, Any]) -> None:
    """m(torch.randn(1, 4)) after a marked-dynamic x: `2 <= x.size()[0]` failed on size 1."""
    found = failures(entries["[0/6]"])
    assert found["[0/5]"][0] == "dynamic_range" and found["[0/5]"][2] == "1"
    assert found["[0/5]"][3].startswith("x.size()[0] is 1 in this call, outside `2 <= x.size()[0]`")
    (x,) = entries["[0/6]"]["inputs"]
    assert x["size"][0] == 1


def test_tensor_guards_keep_what_dynamo_printed(entries: dict[str, Any]) -> None:
    assert failures(entries["[0/1]"])["[0/0]"] == ("size", "4", "5", "size of x on dim 0 changed: 4 -> 5")


def test_guard_payload_forms() -> None:
    """Both guard payloads: the C++ guard tree (torch 2.13) and older torch's `dynamo_guards` JSON.

    A string holding `  # ` cannot be told from the guard's comment: no value rather than a cut one."""
    tree = (
        b"TREE_GUARD_MANAGER:\n"
        b"| +- GuardManager: source=L['k'], accessed_by=FrameLocalsGuardAccessor(key='k'), type=<class 'int'>\n"
        b"| | +- EQUALS_MATCH: L['k'] == 7                  # return x * k  # t.py:3 in f\n"
        b"| | +- LENGTH_CHECK: len(L['xs']) == 4             # total = xs[0]  # t.py:4 in f\n"
        b"| | +- EQUALS_MATCH: L['s'] == 'a  # b'            # s  # t.py:5 in f\n"
        b"| | +- TRUE_MATCH: G['FLAG'] == True  # flag  # t.py:6 in f\n"
    )
    wanted = {("value", "k"), ("length", "xs"), ("value", "s"), ("value", "G['FLAG']")}
    assert guard_values(guard_codes("dynamo_cpp_guards_str", tree), wanted) == {
        ("value", "k"): ("L['k']", "7"),
        ("length", "xs"): ("L['xs']", "4"),
        ("value", "G['FLAG']"): ("G['FLAG']", "True"),
    }
    old = b'[{"code": "L[\'k\'] == 7", "stack": null}, {"code": "___check_obj_id(L[\'m\'], 1)"}, 5]'
    assert guard_values(guard_codes("dynamo_guards", old), wanted) == {("value", "k"): ("L['k']", "7")}
    assert guard_codes("dynamo_guards", b"not json") == []
    assert guard_values(guard_codes("dynamo_cpp_guards_str", tree), {("value", "other")}) == {}


def test_value_key() -> None:
    assert value_key("L['k']") == "k"
    assert value_key("L['self'].n") == "self.n"
    assert value_key("L['xs'][0]") == "xs[0]"
    assert value_key("G['FLAG']") == "G['FLAG']"
