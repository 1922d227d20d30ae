"""A torch.nn built-in module passed to torch.compile (`nn.Sequential`): torch compiles its
wrapper `inner` (torch/_dynamo/external_utils.py), so the log names no model. Format 1.46 reads
the module's class from the wrapper's guards (`module`) and every sentence names the compile
`Sequential.forward` (corpus simple, last_batch)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_compiles

from tlscope.analyse.fold.callvalues import wrapped_module
from tlscope.format.compiles import CompileEntry, SourceLocation
from tlscope.format.compiles import is_torch_wrapper as is_module_wrapper

_TREE = (
    "TREE_GUARD_MANAGER:\n"
    "+- RootGuardManager\n"
    "| +- GuardManager: source=L['fn'], accessed_by=FrameLocalsGuardAccessor(key='fn', framelocals_idx=2),"
    " type=<class 'torch.nn.modules.container.Sequential'>, tag_safe=(False, False)\n"
    "| | +- TYPE_MATCH: ___check_type_id(L['fn'], 94385247303040),"
    " type=<class 'torch.nn.modules.container.Sequential'>\n"
    "| | +- GuardManager: source=L['fn'].__dict__, accessed_by=GetGenericDictGuardAccessor, type=<class 'dict'>\n"
    "| | | +- DICT_CONTAINS: not ___dict_contains('forward', L['fn'].__dict__)\n"
)
#: torch.compile(functools.partial(f, cfg=...)): the wrapper's fn is no module.
_PARTIAL = (
    "| +- GuardManager: source=L['fn'], accessed_by=FrameLocalsGuardAccessor(key='fn', framelocals_idx=2),"
    " type=<class 'functools.partial'>, tag_safe=(False, False)\n"
    "| | +- GuardManager: source=L['fn'].func, accessed_by=GetAttrGuardAccessor(func), type=<class 'function'>\n"
)


def test_the_wrapped_class_is_read_from_the_guard_tree() -> None:
    assert wrapped_module(_TREE.encode()) == "Sequential"
    # A function passed through the wrapper (`torch.compile(torch.exp)`): no class to name.
    function = _TREE.replace("torch.nn.modules.container.Sequential", "function")
    assert wrapped_module(function.encode()) is None
    assert wrapped_module(b"| +- GuardManager: source=L['x'], type=<class 'torch.Tensor'>\n") is None
    assert wrapped_module(_PARTIAL.encode()) is None


def test_only_torchs_wrapper_is_one() -> None:
    wrapper = SourceLocation(
        name="inner", file="/v/lib/python3.11/site-packages/torch/_dynamo/external_utils.py", line=67
    )
    assert is_module_wrapper(wrapper)
    assert not is_module_wrapper(SourceLocation(name="inner", file="/p/train.py", line=3))
    assert not is_module_wrapper(SourceLocation(name="forward", file=wrapper.file, line=67))
    assert not is_module_wrapper(None)


def test_the_compile_is_named_by_its_module() -> None:
    entry = CompileEntry(id="[0/0]", dir="0_0_0_0", status="ok", frame_compile="[0/0]")
    assert entry.function_name() is None
    entry.function = SourceLocation(name="inner", file="/v/torch/_dynamo/external_utils.py", line=67)
    assert entry.function_name() == "inner"
    entry.module = "Sequential"
    assert entry.function_name() == "Sequential.forward"


@pytest.mark.parametrize("scenario", ["simple", "last_batch"])
def test_corpus_sequential_is_named(scenario: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    data: dict[str, Any] = corpus_compiles(scenario, tmp_path_factory)
    entries = [e for e in data["compiles"] if e["status"] == "ok"]
    assert entries and all(e["module"] == "Sequential" and e["function"]["name"] == "inner" for e in entries)
    said = [a["text"] for a in data["first_answers"]]
    assert any("Sequential.forward" in text for text in said) and not any(" inner " in text for text in said)


def test_a_users_own_function_has_no_module(tmp_path_factory: pytest.TempPathFactory) -> None:
    data: dict[str, Any] = corpus_compiles("recompiles", tmp_path_factory)
    assert data["compiles"] and not any("module" in e for e in data["compiles"])


def test_the_ranks_name_a_wrapped_module_by_its_class() -> None:
    """The ranks' sentences (frames compared by function, a straggler's slowest compile) name a
    compile as the run's sentences do; the graphs' keys stay `function_label`, as DynamicSource's."""
    from tlscope.analyse.ranks.graph_divergence import compile_label, function_label

    wrapper = SourceLocation(name="inner", file="/v/torch/_dynamo/external_utils.py", line=67)
    entry = CompileEntry(id="[0/0]", dir="0_0_0_0", status="ok", frame_compile="[0/0]", function=wrapper)
    assert compile_label(entry) == function_label(wrapper) == "inner (external_utils.py:67)"
    entry.module = "Sequential"
    assert compile_label(entry) == "Sequential.forward (external_utils.py:67)"
    assert entry.function is wrapper and wrapper.name == "inner"  # the entry's own is left as logged


def test_the_flame_graph_names_the_wrappers_frame_by_the_module() -> None:
    """The compile's stack ends in the wrapper's own frame: drawn as `Sequential.forward` there,
    not as `inner` with a `Sequential.forward` leaf of the same line below it."""
    from tlscope.analyse.flame import flame_tree
    from tlscope.format.compiles import Timing

    wrapper = SourceLocation(name="inner", file="/v/torch/_dynamo/external_utils.py", line=67)
    user = SourceLocation(name="main", file="/p/train.py", line=21)
    entry = CompileEntry(
        id="[0/0]",
        dir="d",
        status="ok",
        frame_compile="[0/0]",
        function=wrapper,
        stack=[user, wrapper],
        time=Timing(duration_s=2.0, source="chromium_event"),
        module="Sequential",
    )
    root = flame_tree([entry])
    (main,) = root.children
    (leaf,) = main.children
    assert (leaf.name, leaf.line, leaf.children) == ("Sequential.forward", 67, [])


def test_summary_counts_one_compile_in_the_singular() -> None:
    """corpus simple, one compile of the wrapped Sequential: `1 compile: 1 ok` (not `1 compiles`)."""
    import subprocess
    import sys

    from helpers import CORPUS

    log = str(next((CORPUS / "simple").glob("*.log.gz")))
    text = subprocess.run([sys.executable, "-m", "tlscope", "summary", log], check=True, capture_output=True, text=True)
    lines = text.stdout.splitlines()  # the log's path first, wrapped at 80 columns where it is long
    at = lines.index("1 compile: 1 ok")
    assert lines[at + 1].startswith("  most compile time: [0/0] Sequential.forward")
    assert not any(" compiles: " in line for line in lines)


def test_a_method_is_named_by_its_class(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Format 1.47: `module` is `self`'s class for a method, read from the guards on `L['self']`
    (corpus loop_break: Net.forward loops over blocks whose Block.forward breaks). A compile with
    no guards (Net's, which failed) and a resume function stay unnamed; a restarted attempt, which
    logs no guards, takes its sibling's."""
    from tlscope.analyse.fold.callvalues import method_class

    data: dict[str, Any] = corpus_compiles("loop_break", tmp_path_factory)
    modules = {e["id"]: e.get("module") for e in data["compiles"] if e["id"] != "[-/-]"}
    assert modules == {"[0/0]": None, "[1/0]": "Block", "[1/0_1]": "Block", "[1/1]": "Block", "[1/1_1]": "Block"}
    said = {a["kind"]: a["text"] for a in data["first_answers"]}
    assert said["recompile"].startswith("first recompile: [1/1_1] Block.forward: ")
    # Net.forward failed in Block.forward: the failing line is not Net's, so where Net's is, too.
    assert said["failure"].startswith("first failure: [0/0] forward (loop_break.py:31) failed at loop_break.py:23")
    line = "| +- GuardManager: source=L['self'], accessed_by=FrameLocalsGuardAccessor(key='self'), "
    line += "type=<class '__main__.Block'>\n"
    assert method_class(line.encode()) == "Block"
    assert method_class(line.replace("L['self']", "L['x']").encode()) is None
    nested = line.replace("__main__.Block", "model.layers.Outer.Inner")
    assert method_class(nested.encode()) == "Inner"


def test_a_failed_method_is_named_by_its_recompiles_guards(tmp_path_factory: pytest.TempPathFactory) -> None:
    """corpus fullgraph_debug: Net.forward's first compile failed (fullgraph=True and a debug
    print) before logging guards; its next compile of the same code did, so both are Net's."""
    data: dict[str, Any] = corpus_compiles("fullgraph_debug", tmp_path_factory)
    entries = {e["id"]: e for e in data["compiles"] if e["id"] != "[-/-]"}
    assert {cid: (e["status"], e.get("module")) for cid, e in entries.items()} == {
        "[0/0]": ("failed", "Net"),
        "[0/1]": ("ok", "Net"),
    }
    assert entries["[0/0]"]["guards"] is None and entries["[0/1]"]["guards"] is not None
    (failure,) = [a["text"] for a in data["first_answers"] if a["kind"] == "failure"]
    assert failure.startswith("first failure: [0/0] Net.forward failed at fullgraph_debug.py:22")
