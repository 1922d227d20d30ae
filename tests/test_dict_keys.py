"""A dict's key, an enum member and an int attribute that recompile one function (corpus
dict_keys): the key's presence is the guard kind `dict_key` (format 1.45), an object's identity
names its class, and a failure on the key is explained away by an entry an earlier recompile
said lacks it, as the call does (FORMAT.md "Which failure is the cause")."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import chosen_failure, corpus_recompiles

from tlscope.analyse.fold.guards import guard_failure
from tlscope.analyse.fold.recommend import expected_of, recommended_failure


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("dict_keys", tmp_path_factory)


def test_a_new_key_is_said(recompiles: dict[str, Any]) -> None:
    failure = chosen_failure(recompiles["[0/1]"])
    assert (failure["kind"], failure["subject"], failure["expected"], failure["actual"]) == (
        "dict_key",
        "d",
        "absent",
        "present",
    )
    assert failure["explanation"] == "key 'y' of d changed: absent -> present (the code tests whether d has it)"


def test_the_enum_call_is_blamed_on_the_enum(recompiles: dict[str, Any]) -> None:
    recompile = recompiles["[0/2]"]
    assert [(f["cache_entry"], f["kind"]) for f in recompile["guard_failures"]] == [
        ("[0/1]", "dict_key"),
        ("[0/0]", "identity"),
    ]
    assert recompile["recommended"]["index"] == 1
    assert recompile["recommended"]["why"].endswith(
        "[0/1] failed on key 'y' of d, but [0/0] was compiled for d without it, as the call's"
    )
    assert (
        chosen_failure(recompile)["explanation"] == "mode is a different Mode object than when the entry was compiled"
    )
    assert recompile["compared_with"] == "[0/0]"


def test_the_int_attribute_is_the_newest_entrys(recompiles: dict[str, Any]) -> None:
    assert chosen_failure(recompiles["[0/3]"])["explanation"] == "cfg.scale changed: 2 -> 3"


def test_dict_key_guards_read_as_written() -> None:
    lacks = guard_failure("0/0: ___dict_contains('a, b', L['d'])  # if 'a, b' in d:  # f.py:3 in f")
    assert (lacks.kind, lacks.subject, lacks.expected, lacks.actual) == ("dict_key", "d", "present", "absent")
    assert lacks.explanation.startswith("key 'a, b' of d changed: present -> absent")
    assert expected_of(lacks) == ("dict_key d 'a, b'", "present")
    assert guard_failure("0/0: ___dict_contains(1)").kind == "other"
    plain = guard_failure("0/0: ___check_obj_id(fn, 140225641337040)")
    assert plain.explanation == "fn is a different object than when the entry was compiled"


def test_nothing_known_explains_nothing_away() -> None:
    failures = [
        guard_failure("0/1: ___dict_contains('y', d)"),
        guard_failure("0/0: ___check_obj_id(mode, 1), type=<class 'Mode'>"),
    ]
    failures[0].actual = "absent"
    found = recommended_failure(failures)
    assert found is not None and found.index == 0
    found = recommended_failure(failures, entry_expected={"[0/0]": {"dict_key d 'y'": "absent"}})
    assert found is not None and found.index == 1


def test_an_attribute_and_a_backend(recompiles: dict[str, Any]) -> None:
    attribute = chosen_failure(recompiles["[0/4]"])
    assert (attribute["kind"], attribute["subject"], attribute["expected"], attribute["actual"]) == (
        "attribute",
        "cfg",
        "absent",
        "present",
    )
    assert attribute["explanation"] == (
        "attribute 'bias' of cfg changed: absent -> present (the code tests whether cfg has it)"
    )
    backend = chosen_failure(recompiles["[0/5]"])
    assert (backend["kind"], backend["expected"], backend["actual"]) == ("backend", "eager", "aot_eager")
    assert backend["explanation"].startswith("torch.compile backend changed: eager -> aot_eager")


def test_attribute_and_backend_guards_read_as_written() -> None:
    has = guard_failure("0/0: hasattr(L['o'], 'w')")
    assert (has.kind, has.subject, has.expected, has.actual) == ("attribute", "o", "present", "absent")
    assert expected_of(has) == ("attribute o 'w'", "present")
    other = guard_failure("0/0: BACKEND_MATCH failure: Cached backend: <function f at 0x1> (id=0x1). New backend: g")
    assert (other.kind, other.expected, other.actual) == ("backend", "<function f at 0x1>", "g")
    blank = guard_failure("0/0: BACKEND_MATCH failure: something else")
    assert (blank.kind, blank.expected, blank.actual) == ("backend", None, None)
    failures = [guard_failure("0/1: hasattr(o, 'w')"), guard_failure("0/0: ___check_obj_id(m, 1)")]
    found = recommended_failure(failures, entry_expected={"[0/0]": {"attribute o 'w'": "absent"}})
    assert found is not None and found.index == 1
    assert found.why.endswith(
        "[0/1] failed on attribute 'w' of o, but [0/0] was compiled for o without it, as the call's"
    )
