"""A slow compile's fix (format 1.49 `time_fix`, kind `regional`): a module compiled whole whose
guards name four or more sibling blocks of one class is told to compile each block instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.analyse.fold.blocks import (
    MIN_BLOCKS,
    RECIPE,
    Blocks,
    loop_code,
    repeated_blocks,
    said_container,
    time_fix,
)
from tlscope.analyse.fold.graphs import BIG_GRAPH, busiest_line
from tlscope.cli import main
from tlscope.format.compiles import Fix, LineNodes, SourceLocation


def _manager(source: str, cls: str, accessor: bool = True) -> str:
    """One line of Dynamo's C++ guard tree, as torch 2.13 prints a module's manager."""
    by = f"accessed_by=DictGetItemGuardAccessor('{source[-3:-2]}'), " if accessor else ""
    return f"| | +- GuardManager: source={source}, {by}type=<class '{cls}'>, tag_safe=(False, False)\n"


LIST = "torch.nn.modules.container.ModuleList"


def _tree(
    root: str, container: str, cls: str, n: int, children: bool = True, holder: str = LIST, keys: str = "{}"
) -> str:
    """A guard tree with `n` siblings of class `cls` in `container` (each with a child if asked),
    the container of class `holder`, the blocks named `keys` formatted with their index."""
    text = _manager(root, "__main__.Model", accessor=False)
    if container != root:
        text += _manager(container, holder)
    for i in range(n):
        block = f"{container}._modules['{keys.format(i)}']"
        # torch prints the first of a dict's values as a ValueManager, with no accessor
        text += _manager(block, cls, accessor=i > 0)
        if children:
            text += _manager(f"{block}._modules['linear']", "torch.nn.modules.linear.Linear")
    return text


def test_a_module_list_of_layers_is_found() -> None:
    text = _tree("L['self']", "L['self']._modules['layers']", "__main__.Layer", 12)
    found = repeated_blocks(text)
    keys = tuple(str(i) for i in range(12))  # in index order, 10 after 9
    assert found == Blocks(container="L['self']._modules['layers']", cls="Layer", copies=12, holder=LIST, keys=keys)
    assert loop_code(found) == "for block in model.layers: block.compile()"


def test_the_wrapper_s_module_is_the_container_itself() -> None:
    """nn.Sequential compiled through torch's wrapper `inner`: its module is `L['fn']`."""
    text = _tree("L['fn']", "L['fn']", "__main__.Block", 6).replace("__main__.Model", SEQUENTIAL)
    found = repeated_blocks(text)
    assert found is not None and (found.container, found.cls, found.copies, found.holder) == (
        "L['fn']",
        "Block",
        6,
        SEQUENTIAL,
    )
    assert loop_code(found) == "for block in model: block.compile()"


SEQUENTIAL = "torch.nn.modules.container.Sequential"


def test_each_container_is_walked_as_python_walks_it() -> None:
    """A ModuleDict is walked by its values (a loop over it yields its keys); blocks held as a
    module's attributes are named one by one (a module is not iterable); a container the guards
    do not name the class of is named one by one too (right whatever it is)."""
    mapped = _tree(
        "L['self']",
        "L['self']._modules['heads']",
        "__main__.Head",
        4,
        holder="torch.nn.modules.container.ModuleDict",
        keys="h{}",
    )
    found = repeated_blocks(mapped)
    assert found is not None and loop_code(found) == "for block in model.heads.values(): block.compile()"
    held = _tree("L['self']", "L['self']", "__main__.Enc", 4, keys="enc{}")
    found = repeated_blocks(held)
    assert found is not None and found.keys == ("enc0", "enc1", "enc2", "enc3")
    assert loop_code(found) == "for block in (model.enc0, model.enc1, model.enc2, model.enc3): block.compile()"
    unknown = Blocks(container="L['self']._modules['layers']", cls="Layer", copies=4, keys=("0", "1", "2", "3"))
    code = "for block in (model.layers[0], model.layers[1], model.layers[2], model.layers[3]): block.compile()"
    assert loop_code(unknown) == code


def test_blocks_without_submodules_are_not_blocks() -> None:
    """A Sequential of Linears: one op each, nothing a block's compile would reuse."""
    text = _tree("L['self']", "L['self']._modules['mlp']", "torch.nn.modules.linear.Linear", 8, children=False)
    assert repeated_blocks(text) is None


def test_fewer_than_the_minimum_are_left_alone() -> None:
    text = _tree("L['self']", "L['self']._modules['layers']", "__main__.Layer", MIN_BLOCKS - 1)
    assert repeated_blocks(text) is None
    assert repeated_blocks(text + _manager("L['self']._modules['layers']._modules['9']", "__main__.Layer")) is not None


def test_the_largest_group_is_the_blocks() -> None:
    """An encoder of 4 and a decoder of 6: the decoder's are said (one fix, the largest win)."""
    text = _tree("L['self']", "L['self']._modules['encoder']", "__main__.Enc", 4)
    text += _tree("L['self']", "L['self']._modules['decoder']", "__main__.Dec", 6)
    found = repeated_blocks(text)
    assert found is not None and (found.cls, found.copies) == ("Dec", 6)


def test_the_outermost_repetition_is_the_blocks() -> None:
    """4 layers of 16 heads each: the layers are the blocks (compiling each compiles its heads),
    not one layer's heads, however many more they are."""
    text = _tree("L['self']", "L['self']._modules['layers']", "__main__.Layer", 4)
    for layer in range(4):
        heads = f"L['self']._modules['layers']._modules['{layer}']._modules['heads']"
        text += _tree(f"L['self']._modules['layers']._modules['{layer}']", heads, "__main__.Head", 16)
    found = repeated_blocks(text)
    assert found is not None and (found.container, found.cls, found.copies) == (
        "L['self']._modules['layers']",
        "Layer",
        4,
    )


def test_another_argument_s_modules_are_not_the_compiled_module_s() -> None:
    """A compiled function that takes the model (`L['model']`): compiling its blocks would not
    stop the function's compile from tracing them again, so no fix is said."""
    text = _tree("L['model']", "L['model']._modules['layers']", "__main__.Layer", 8)
    assert repeated_blocks(text) is None
    assert repeated_blocks("no modules here") is None


@pytest.mark.parametrize(
    ("container", "said"),
    [
        ("L['fn']", "model"),
        ("L['self']._modules['layers']", "model.layers"),
        ("L['self']._modules['encoder']._modules['0']._modules['blocks']", "model.encoder[0].blocks"),
    ],
)
def test_the_container_is_said_as_the_code_reaches_it(container: str, said: str) -> None:
    assert said_container(container) == said


def test_only_a_slow_compile_gets_the_fix() -> None:
    blocks = Blocks(container="L['self']._modules['layers']", cls="Layer", copies=12, holder=LIST)
    call = SourceLocation(file="train.py", line=35, name="<module>")
    assert time_fix(blocks, 0.9, "Model", call) is None
    assert time_fix(blocks, None, "Model", call) is None
    assert time_fix(None, 30.0, "Model", call) is None
    fix = time_fix(blocks, 1.0, "Model", call)
    assert fix is not None and (fix.kind, fix.input, fix.source, fix.dim) == (
        "regional",
        "model.layers",
        "L['self']._modules['layers']",
        None,
    )
    assert fix.code == "for block in model.layers: block.compile()" and fix.where == call
    assert fix.why.startswith("The Model was compiled whole: its 12 Layer modules are one graph")
    assert "Layer is compiled once and the 11 others reuse it" in fix.why and fix.why.endswith(RECIPE)


def test_the_corpus_transformer_is_told_to_compile_its_layers() -> None:
    """Corpus `layers`: eight layers compiled whole with Inductor, one training step; the fix was
    checked on torch 2.13 (12 such layers: 27.5 s whole, 13.5 s and one compile as blocks)."""
    import tlscope

    trace = tlscope.load(CORPUS / "layers")
    (entry,) = [c for c in trace.compiles if c.status != "outside"]
    fix = entry.time_fix
    assert isinstance(fix, Fix) and fix.kind == "regional"
    assert fix.code == "for block in model.layers: block.compile()"
    assert fix.where is not None and (fix.where.file or "").endswith("layers.py")
    assert fix.where.code == "compiled(torch.randn(4, 10, 8)).sum().backward()"
    assert "its 8 Layer modules are one graph" in fix.why
    (slow,) = [a for a in trace.first_answers if a.kind == "slow_compile"]
    assert slow.text.startswith("most compile time: [0/0] Model.forward (layers.py:")
    assert slow.text.endswith(
        "; fix: compile each block, not the whole: `for block in model.layers: block.compile()` before layers.py:51"
    )


def test_a_sequential_compiled_through_torch_s_wrapper_is_told_to_compile_its_blocks(tmp_path: Path) -> None:
    """Corpus `deep_stack`: nn.Sequential of 180 residual blocks, compiled through torch's
    wrapper: the container is the Sequential itself, called at deep_stack.py:29."""
    out = tmp_path / "out"
    assert main([str(CORPUS / "deep_stack"), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text())
    (entry,) = [c for c in compiles["compiles"] if c["status"] != "outside"]
    fix = entry["time_fix"]
    assert (fix["kind"], fix["code"], fix["source"]) == ("regional", "for block in model: block.compile()", "L['fn']")
    assert (fix["where"]["line"], fix["where"]["name"]) == (29, "main")
    assert "The Sequential was compiled whole: its 180 Block modules" in fix["why"]
    slow = next(a for a in compiles["first_answers"] if a["kind"] == "slow_compile")
    assert slow["text"].endswith("`for block in model: block.compile()` before deep_stack.py:29")


def test_a_compile_without_blocks_has_no_time_fix() -> None:
    """Corpus `recompiles_dynamic`: slow compiles (38 s), a function of tensors, no module."""
    import tlscope

    trace = tlscope.load(CORPUS / "recompiles_dynamic")
    assert not any(isinstance(c.time_fix, Fix) for c in trace.compiles)
    slow = next(a for a in trace.first_answers if a.kind == "slow_compile")
    assert "fix:" not in slow.text


def test_a_wrapped_module_s_slowest_function_is_where_the_user_called_it(tmp_path: Path) -> None:
    """`tlscope summary --json` of corpus deep_stack: nn.Sequential compiled through torch's
    wrapper `inner`, whose file is torch's (external_utils.py): the slowest functions' row says
    the user's line that called it, as the Compiles table's `called from` does."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(CORPUS / "deep_stack"), "--json"],
        capture_output=True,
        check=True,
    )
    (row,) = json.loads(done.stdout)["slowest_functions"]
    assert row["function"] == "Sequential.forward" and row["compiles"] == 1
    assert row["file"].endswith("deep_stack.py") and row["line"] == 29


def test_an_unrolled_loop_s_line_is_said_with_the_slow_compile() -> None:
    """Corpus unrolled: a loop of 200 iterations traced into one graph of 601 nodes, 600 of them
    from the loop's one-line body: the Dynamo graph's `busiest_line` (format 1.49), said by the
    slow compile's first answer (no `time_fix`: compiling one iteration instead trades run time
    for compile time, which tlscope leaves to the user)."""
    import tlscope

    trace = tlscope.load(CORPUS / "unrolled")
    (entry,) = [c for c in trace.compiles if c.status != "outside"]
    assert not isinstance(entry.time_fix, Fix)
    (graph,) = [g for g in entry.graphs if g.kind == "dynamo_output_graph"]
    line = graph.busiest_line
    assert isinstance(line, LineNodes) and graph.nodes == 601
    assert (line.file.rsplit("/", 1)[-1], line.line, line.code, line.nodes) == (
        "unrolled.py",
        18,
        "x = torch.sin(x) * 1.01 + i",
        600,
    )
    assert all(not isinstance(g.busiest_line, LineNodes) for g in entry.graphs if g is not graph)
    (slow,) = [a for a in trace.first_answers if a.kind == "slow_compile"]
    assert slow.text.endswith(
        "; 600 of its graph's 601 nodes are unrolled.py:18 (`x = torch.sin(x) * 1.01 + i`), one line traced "
        "again and again (a Python loop Dynamo unrolls, or a function called in one): its compile grows with "
        "the iterations"
    )


def _graph(lines: list[tuple[str, int]]) -> str:
    """A printed graph whose nodes come from the given (comment, nodes) runs."""
    text = 'class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: "f32[4][1]cpu"):\n'
    for n, (comment, nodes) in enumerate(lines):
        text += f"        # {comment}\n" + "".join(f'        v{n}_{i}: "f32[4][1]cpu" = f(x)\n' for i in range(nodes))
    return text + "        return (x,)\n"


def test_the_busiest_line_holds_half_of_a_big_graph() -> None:
    loop = "File: /a/my dir/train.py:7 in body, code: x = g(x, code: 1)"
    text = _graph(
        [
            (loop, 300),
            ("No stacktrace found for following nodes", 10),
            (loop, 200),
            ("File: /a/b.py:3 in f, code: y", 100),
        ]
    )
    found = busiest_line(text, 610)
    assert found == LineNodes(file="/a/my dir/train.py", line=7, code="x = g(x, code: 1)", nodes=500)
    assert busiest_line(text, BIG_GRAPH - 1) is None  # a small graph is not searched
    other = "File: /a/b.py:3 in f, code: y"
    assert busiest_line(_graph([(loop, 300), (other, 300), ("File: /a/c.py:1 in h, code: z", 100)]), 700) is None


def test_a_compile_s_backward_time_is_in_the_file() -> None:
    """Format 1.49 `backward_s`: corpus layers' backward compiled at the first backward call
    (its bwd_compilation_metrics records' time_s), beside the span every view adds it to; none
    for a compile without a backward (recompiles_dynamic's eager-time functions of no grad)."""
    import tlscope

    (entry,) = [c for c in tlscope.load(CORPUS / "layers").compiles if c.status != "outside"]
    records = [r.time_s or 0.0 for r in entry.metrics_records if r.kind == "bwd_compilation_metrics"]
    assert records and entry.backward_s == round(sum(records), 6)
    assert not any(isinstance(c.backward_s, float) for c in tlscope.load(CORPUS / "recompiles_dynamic").compiles)


def test_a_failed_compile_gets_no_time_fix(tmp_path: Path) -> None:
    """Corpus layers with its compile made a failure (its metrics record's `fail_type` set): a
    failed compile's first answer is its failure, and compiling the blocks is no answer to it."""
    import gzip

    import tlscope

    log = next((CORPUS / "layers").glob("*.log.gz"))
    text = gzip.decompress(log.read_bytes()).decode()
    assert text.count('"fail_type": null') >= 1
    failed = tmp_path / "failed.log"
    failed.write_text(text.replace('"fail_type": null', '"fail_type": "RuntimeError"', 1))
    (entry,) = [c for c in tlscope.load(failed).compiles if c.status != "outside"]
    assert entry.status == "failed" and not isinstance(entry.time_fix, Fix)


def test_summary_says_how_to_compile_faster(capsys: pytest.CaptureFixture[str]) -> None:
    """`tlscope summary` of corpus layers: a table of the slow compiles' time fixes, the line and
    why, as compiles.json has them; its `--json` compile row carries the fix."""
    assert main(["summary", str(CORPUS / "layers")]) == 0
    out = capsys.readouterr().out
    assert "To compile faster" in out and "for block in model.layers: block.compile()  before layers.py:51" in out
    assert main(["summary", str(CORPUS / "layers"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["compiles"]
    (row,) = [r for r in rows if r["time_fix"] is not None]
    assert row["id"] == "[0/0]" and row["time_fix"]["code"] == "for block in model.layers: block.compile()"
    assert main(["summary", str(CORPUS / "unrolled")]) == 0
    assert "To compile faster" not in capsys.readouterr().out
