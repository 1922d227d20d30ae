"""A module called in training mode, after `.eval()`, under `torch.no_grad()` and under
`torch.autocast` (corpus train_eval): each recompile is named as the code would say it, and the
autocast call is blamed on autocast, not on the grad mode of the no_grad entry Dynamo tried first
(FORMAT.md "Which failure is the cause", format 1.45)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import chosen_failure, corpus_recompiles

from tlscope.analyse.fold.guards import guard_failure, state_words
from tlscope.analyse.fold.recommend import recommended_failure


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("train_eval", tmp_path_factory)


def test_eval_names_the_submodule_as_the_code_does(recompiles: dict[str, Any]) -> None:
    failure = chosen_failure(recompiles["[0/1]"])
    assert (failure["kind"], failure["subject"]) == ("value", "self._modules['drop'].training")
    assert failure["explanation"] == (
        "self.drop.training changed: True -> False (.eval() was called on the module since; "
        "train and eval mode each compile once)"
    )


def test_no_grad_is_grad_mode(recompiles: dict[str, Any]) -> None:
    assert [f["kind"] for f in recompiles["[0/2]"]["guard_failures"]] == ["grad_mode", "grad_mode"]


def test_autocast_call_is_blamed_on_autocast(recompiles: dict[str, Any]) -> None:
    recompile = recompiles["[0/3]"]
    found = [(f["cache_entry"], f["kind"], f["subject"]) for f in recompile["guard_failures"]]
    assert found == [
        ("[0/2]", "global_state", "grad_mode autocast(cpu)_enabled"),
        ("[0/1]", "global_state", "autocast(cpu)_enabled"),
        ("[0/0]", "global_state", "autocast(cpu)_enabled"),
    ]
    assert recompile["recommended"] == {
        "index": 1,
        "why": "[0/1] is the newest entry whose failure the others do not explain: [0/2] failed on grad mode "
        "(torch.no_grad, torch.inference_mode) and autocast on cpu (torch.autocast), but [0/1] was compiled "
        "for the call's grad mode (torch.no_grad, torch.inference_mode)",
    }
    assert chosen_failure(recompile)["explanation"] == (
        "global torch state changed: autocast on cpu (torch.autocast); each state needs its own compile"
    )


def test_each_part_of_global_state_in_words() -> None:
    failure = guard_failure("0/0: GLOBAL_STATE changed: deterministic_algorithms num_threads some_new_part ")
    assert (failure.kind, failure.subject) == ("global_state", "deterministic_algorithms num_threads some_new_part")
    assert failure.explanation == (
        "global torch state changed: deterministic algorithms (torch.use_deterministic_algorithms), number "
        "of threads (torch.set_num_threads) and some_new_part; each state needs its own compile"
    )
    assert state_words(["autocast(cuda)_enabled"]) == "autocast on cuda (torch.autocast)"
    blank = guard_failure("0/0: GLOBAL_STATE changed: ")
    assert (blank.kind, blank.subject, blank.explanation) == (
        "global_state",
        None,
        "global torch state changed: unspecified",
    )


def test_an_unspecified_state_explains_nothing_away() -> None:
    """A GLOBAL_STATE failure that names no part says nothing of which parts the call shares."""
    failures = [
        guard_failure("0/1: GLOBAL_STATE changed: grad_mode autocast(cpu)_enabled"),
        guard_failure("0/0: GLOBAL_STATE changed:"),
    ]
    found = recommended_failure(failures)
    assert found is not None and found.index == 0


def test_train_is_said_too() -> None:
    failure = guard_failure("0/0: L['self'].training == False")
    failure.actual = "True"
    from tlscope.analyse.fold.callvalues import _explained

    assert _explained(failure) == (
        "self.training changed: False -> True (.train() was called on the module since; "
        "train and eval mode each compile once)"
    )


def test_function_modes_are_global_state() -> None:
    """`torch.set_default_device` pushes a torch function mode: Dynamo's guard on the mode stack
    fails, which is global state as grad mode is, and compared as such (a real torch 2.13 run:
    set_num_threads, then set_default_device, then use_deterministic_algorithms)."""
    modes = guard_failure("0/1: ___check_torch_function_mode_stack()")
    assert (modes.kind, modes.subject) == ("global_state", "torch_function_mode_stack")
    assert modes.explanation == (
        "global torch state changed: torch function modes (torch.set_default_device, a TorchFunctionMode); "
        "each state needs its own compile"
    )
    third = [
        guard_failure("0/2: GLOBAL_STATE changed: deterministic_algorithms "),
        guard_failure("0/1: GLOBAL_STATE changed: deterministic_algorithms "),
        guard_failure("0/0: GLOBAL_STATE changed: deterministic_algorithms num_threads "),
    ]
    found = recommended_failure(third)
    assert found is not None and found.index == 0
    second = [modes, guard_failure("0/0: GLOBAL_STATE changed: num_threads ")]
    found = recommended_failure(second)
    assert found is not None and found.index == 0
