"""A module's int attribute that recompiles its frame again and again (corpus module_counter:
`self.step += 1` in forward, the recompile limit set to 4): the recompiles get the fix that
makes such an attribute dynamic, `torch._dynamo.config.allow_unspec_int_on_nn_module = True`
(compiles.json `recompile.fix`, kind `unspec_int_on_nn_module`, format 1.44), and the failure at
the limit says what filled it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.analyse.fold.value_fixes import CODE, KIND, repeated_value_fixes
from tlscope.cli import main
from tlscope.format.compiles import CompileEntry, GuardFailure, RecommendedFailure, Recompile


@pytest.fixture(scope="module")
def compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("module_counter") / "out"
    assert main([str(CORPUS / "module_counter"), "-o", str(out), "--no-browser"]) == 0
    found: dict[str, Any] = json.loads((out / "compiles.json").read_text("utf-8"))
    return found


def test_each_recompile_by_the_counter_gets_the_setting(compiles: dict[str, Any]) -> None:
    recompiles = [c for c in compiles["compiles"] if c["recompile"]]
    assert [c["id"] for c in recompiles] == ["[0/1]", "[0/2]", "[0/3]", "[0/4]"]
    for entry in recompiles:
        failure = entry["recompile"]["guard_failures"][entry["recompile"]["recommended"]["index"]]
        assert (failure["kind"], failure["subject"]) == ("value", "self.step")
        fix = entry["recompile"]["fix"]
        assert (fix["kind"], fix["input"], fix["source"], fix["dim"], fix["code"]) == (
            KIND,
            "self.step",
            "L['self'].step",
            None,
            CODE,
        )
        assert fix["why"].startswith(
            "self.step, an int attribute of the module, explains 3 recompiles of Scaled.forward"
        )
    said = {a["kind"]: a["text"] for a in compiles["first_answers"]}
    assert said["recompile"] == f"first recompile: [0/1] Scaled.forward: self.step changed: 0 -> 1; fix: {CODE}"
    assert said["failure"].endswith(
        "Dynamo recompile limit exceeded; Scaled.forward had compiled 4 times: 3 recompiles because self.step changed"
    )


def _recompiled(cid: str, subject: str, expected: str) -> CompileEntry:
    failure = GuardFailure(cache_entry="[0/0]", guard="g", kind="value", explanation="e", subject=subject)
    failure.expected = expected
    recompile = Recompile(guard_failures=[failure], recommended=RecommendedFailure(index=0, why="w"))
    return CompileEntry(id=cid, dir="d", status="ok", frame_compile=cid, recompile=recompile)


def test_only_an_int_attribute_of_self_that_recompiled_twice() -> None:
    """One recompile is automatic dynamic at work (the attribute was made dynamic after it);
    a string, a local or another object's attribute is not this fix's."""
    assert repeated_value_fixes([_recompiled("[0/1]", "self.step", "0")]) == {}
    two = [_recompiled("[0/1]", "L['self'].n", "0"), _recompiled("[0/2]", "self.n", "1")]
    assert sorted(repeated_value_fixes(two)) == ["[0/1]", "[0/2]"]
    for subject, expected in (("self.mode", "'a'"), ("k", "1"), ("other.step", "1"), ("self.flag", "True")):
        entries = [_recompiled("[0/1]", subject, expected), _recompiled("[0/2]", subject, expected)]
        assert repeated_value_fixes(entries) == {}, subject


def test_a_growing_list_gets_stacked(tmp_path_factory: pytest.TempPathFactory) -> None:
    """corpus growing_list: a decode cache passed as a list, one tensor more each step, recompiles
    by its length to the limit; each recompile's fix (format 1.47, kind `stack_list`) passes the
    tensors stacked into one, whose size automatic dynamic makes dynamic (checked on torch 2.13:
    2 compiles where the list made 9)."""
    out = tmp_path_factory.mktemp("growing_list") / "out"
    assert main([str(CORPUS / "growing_list"), "-o", str(out), "--no-browser"]) == 0
    data = json.loads((out / "compiles.json").read_text("utf-8"))
    fixes = {c["id"]: c["recompile"]["fix"] for c in data["compiles"] if c["recompile"]}
    assert sorted(fixes) == [f"[0/{n}]" for n in range(1, 9)]
    fix = fixes["[0/1]"]
    assert (fix["kind"], fix["input"], fix["source"], fix["where"]) == ("stack_list", "cache", "L['cache']", None)
    assert fix["code"] == "pass torch.stack(cache) to decode_step, not the list cache"
    assert "7 recompiles of decode_step" in fix["why"] and "TORCH_COMPILE_DYNAMIC_SOURCES" not in fix["why"]
    said = [a["text"] for a in data["first_answers"] if a["kind"] == "recompile"]
    assert said == ["first recompile: [0/1] decode_step: length of cache changed: 1 -> 2; fix: " + fix["code"]]


def test_a_list_of_other_things_is_not_stacked() -> None:
    """Only a list of tensors of one shape and dtype stacks: a list of ints, or of tensors of
    several shapes, gets no fix."""
    from tlscope.format.compiles import TensorInput

    def entries(sizes: list[list[int]]) -> list[CompileEntry]:
        found = []
        for n in (1, 2):
            failure = GuardFailure(cache_entry="[0/0]", guard="len(xs) == 1", kind="length", explanation="e")
            failure.subject, failure.expected = "xs", str(n)
            recompile = Recompile(guard_failures=[failure], recommended=RecommendedFailure(index=0, why="w"))
            inputs = [TensorInput(source=f"L['xs'][{i}]", dtype="torch.float32", size=s) for i, s in enumerate(sizes)]
            found.append(CompileEntry(id=f"[0/{n}]", dir="d", status="ok", frame_compile="[0/0]", recompile=recompile))
            found[-1].inputs = inputs
        return found

    assert sorted(repeated_value_fixes(entries([[4], [4]]))) == ["[0/1]", "[0/2]"]
    assert repeated_value_fixes(entries([[4], [5]])) == {}
    assert repeated_value_fixes(entries([])) == {}


def test_a_str_that_fills_the_recompile_limit_gets_a_higher_limit(tmp_path_factory: pytest.TempPathFactory) -> None:
    """corpus str_values: `act(x, kind)` called with ten names recompiles once a name (Dynamo
    specialises a str on its value, even names that take one branch) until the limit refuses the
    ninth. Each of its recompiles gets the fix of kind `recompile_limit` (format 1.48): a limit of
    twice the 8 values the log saw (checked on torch 2.13: 16 compiles all ten, none refused).
    `norm(x, how)` with three names never reaches the limit: three graphs are what a str costs, no fix."""
    out = tmp_path_factory.mktemp("str_values") / "out"
    assert main([str(CORPUS / "str_values"), "-o", str(out), "--no-browser"]) == 0
    data = json.loads((out / "compiles.json").read_text("utf-8"))
    fixes = {c["id"]: c["recompile"]["fix"] for c in data["compiles"] if c["recompile"]}
    assert sorted(i for i, f in fixes.items() if f) == [f"[0/{n}]" for n in range(1, 9)]
    assert fixes["[1/1]"] is None and fixes["[1/2]"] is None
    fix = fixes["[0/1]"]
    assert (fix["kind"], fix["input"], fix["source"], fix["dim"], fix["where"]) == (
        "recompile_limit",
        "kind",
        "L['kind']",
        None,
        None,
    )
    assert fix["code"] == "torch._dynamo.config.recompile_limit = 16"
    assert "7 recompiles of act" in fix["why"] and "8 values seen" in fix["why"]
    said = [a["text"] for a in data["first_answers"] if a["kind"] == "recompile"]
    assert said == ["first recompile: [0/1] act: kind changed: 'relu' -> 'gelu'; fix: " + fix["code"]]


def test_a_swapped_adapter_of_another_rank_gets_dynamic_parameters() -> None:
    """corpus adapter_swap (format 1.48): a low-rank adapter swapped for one of another rank
    recompiles on its weights' sizes, module parameters Dynamo keeps static whatever marks them.
    1.47 said `torch._dynamo.mark_dynamic(self._modules['adapter']…, 1)` (ignored for a parameter:
    checked on torch 2.13, still 4 compiles) and blamed automatic dynamic shapes being off; the fix
    of kind `dynamic_parameters` turns off the two settings that keep them static (checked: 2
    compiles). Its input is named as the code names it."""
    import tlscope
    from tlscope.analyse.fold.fixes import PARAMETER_CODE, PARAMETER_KIND

    trace = tlscope.load(CORPUS / "adapter_swap")
    assert [e.id for e in trace.recompiles] == ["[0/1]", "[0/2]", "[0/3]"]
    for entry in trace.recompiles:
        assert entry.recompile is not None and entry.recompile.fix is not None
        fix = entry.recompile.fix
        assert (fix.kind, fix.code, fix.where) == (PARAMETER_KIND, PARAMETER_CODE, None)
        assert fix.input.startswith("self.adapter.") and "_modules" not in fix.input
        assert fix.source.startswith("L['self']._modules['adapter']") and "._parameters['weight']" in fix.source
        assert "keeps static" in fix.why and "automatic dynamic shapes is off" not in fix.why


def test_an_int_the_code_loops_over_gets_the_loops_line() -> None:
    """corpus int_loop (format 1.48): `for _ in range(n)` in a compiled function called with n from
    2 to 11. n is made dynamic after it changes, then specialised again by range() in every compile,
    so each value recompiles to the limit. Each specialisation of n and each recompile by its value
    gets the fix `change_code` at the loop's line (1.47: none, while "Why dynamic?" pointed at the
    symbol's fix); looping outside the compiled function compiles once (checked on torch 2.13)."""
    import tlscope

    trace = tlscope.load(CORPUS / "int_loop")
    script = (CORPUS.parent / "scenarios" / "int_loop.py").read_text().splitlines()
    loop = next(i for i, line in enumerate(script, 1) if "for _ in range(n):" in line)
    specs = [p for s in trace.symbols if s.input == "n" for p in s.specializations]
    assert len(specs) == 7 and all(p.fix is not None for p in specs)
    recompiles = [e for e in trace.recompiles if e.status != "failed"]
    assert len(recompiles) == 7
    for fix in [p.fix for p in specs] + [e.recompile.fix for e in recompiles if e.recompile]:
        assert fix is not None and fix.kind == "change_code" and fix.input == "n" and fix.source == "L['n']"
        assert fix.where is not None and fix.where.line == loop and fix.code == script[loop - 1].strip()
        assert "loop outside the compiled function" in fix.why and fix.dim is None
    assert trace.dynamic is not None and "the symbol's fix says what to change" in trace.dynamic.sentence


def test_a_list_the_module_grows_in_forward_gets_the_line_that_grows_it() -> None:
    """corpus module_history (format 1.48): `self.history.append(...)` in a compiled forward
    recompiles every call by the list's length until the limit. Each recompile's fix is that line
    (kind `change_code`, where the guard was installed; 1.47: none): appending where the model is
    called compiles once (checked on torch 2.13)."""
    import tlscope

    trace = tlscope.load(CORPUS / "module_history")
    script = (CORPUS.parent / "scenarios" / "module_history.py").read_text().splitlines()
    line = next(i for i, text in enumerate(script, 1) if "self.history.append" in text)
    recompiles = [e for e in trace.recompiles if e.recompile is not None]
    assert len(recompiles) == 8  # 7 compiled, the 8th refused at the limit
    for entry in recompiles:
        assert entry.recompile is not None
        fix = entry.recompile.fix
        assert fix is not None and (fix.kind, fix.input, fix.source) == (
            "change_code",
            "self.history",
            "L['self'].history",
        )
        assert fix.where is not None and fix.where.line == line and fix.code == script[line - 1].strip()
        assert "7 recompiles of Tracker.forward" in fix.why


def test_a_list_an_argument_keeps_gets_the_line_that_grows_it() -> None:
    """corpus kv_object (format 1.49): a KV cache object whose list of keys the compiled code
    appends to recompiles every call by the list's length until the limit, as a module's list
    does; each recompile's fix is the append line (1.48: none). Concatenated before the call
    instead, `attend` compiles twice (checked on torch 2.13)."""
    import tlscope

    trace = tlscope.load(CORPUS / "kv_object")
    script = (CORPUS.parent / "scenarios" / "kv_object.py").read_text().splitlines()
    line = next(i for i, text in enumerate(script, 1) if text.strip().startswith("cache.keys.append"))
    recompiles = [e for e in trace.recompiles if e.recompile is not None]
    assert len(recompiles) == 8
    for entry in recompiles:
        assert entry.recompile is not None
        fix = entry.recompile.fix
        assert fix is not None and (fix.kind, fix.input, fix.source) == ("change_code", "cache.keys", "L['cache'].keys")
        assert fix.where is not None and fix.where.line == line and fix.code == script[line - 1].strip()
        assert fix.why.startswith("the length of cache.keys, a list cache keeps, explains 7 recompiles of attend")
