"""torch's own fix hints beside the break they belong to, and an 80-column summary that cuts
nothing (issue 20, finding 9), on the corpus's graph_breaks_repeated trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CORPUS, corpus_compiles

from tlscope.analyse.fold.graphbreaks import parse_graph_break
from tlscope.cli import main

TRACE = CORPUS / "graph_breaks_repeated"


def summary_of(path: Path, *args: str) -> str:
    """`tlscope summary PATH ARGS` run as a user runs it; its stdout."""
    command = [sys.executable, "-m", "tlscope", "summary", str(path), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def test_hints_in_compiles_json_and_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(TRACE), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))
    assert compiles["format_minor"] >= 8
    by_reason = {g["reason"]: g for g in compiles["graph_breaks"]}
    item = next(g for reason, g in by_reason.items() if reason.startswith("Unsupported Tensor.item()"))
    assert any("capture_scalar_outputs = True" in hint for hint in item["hints"])
    assert item["docs_url"].startswith("https://") and item["docs_url"].endswith(".html")
    explicit = by_reason["Call to `torch._dynamo.graph_break()`"]
    assert explicit["hints"] == ["Remove the `torch._dynamo.graph_break()` call."]
    # "Please report an issue to PyTorch" fixes nothing in the user's program: left out.
    assert not any("issue to PyTorch" in h for g in compiles["graph_breaks"] for h in g["hints"])
    per_compile = [gb for c in compiles["compiles"] for gb in c["graph_breaks"]]
    assert all(gb["hints"] for gb in per_compile)
    index = (out / "index.html").read_text("utf-8")
    assert "torch's hint: Set `torch._dynamo.config.capture_scalar_outputs = True`" in index
    assert f'href="{item["docs_url"]}"' in index


def test_80_column_summary_cuts_no_reason_nor_function_name() -> None:
    text = summary_of(TRACE, "--width", "80")
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    # The header is two lines of its own, neither wrapped.
    assert text.splitlines()[1] == "torch 2.13.0+cpu · 38.83 s compiling"
    assert text.splitlines()[2].startswith("21 compiles: ") and "with a graph break" in text.splitlines()[2]
    # The names are folded over lines, never cut: the fold of [2/0]'s resume function.
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "torch_dynamo_resume_in_log_value_at_" in line)
    assert "│ 15 " in lines[at + 1]
    assert "hint: Set" in text and "`torch._dynamo.config.capture_scalar_out" in text


def test_a_compile_id_reused_after_reset_is_explained() -> None:
    """compile_failure's scenario calls torch._dynamo.reset(): [0/0] failed, then [0/0] again worked."""
    trace = CORPUS / "compile_failure"
    reused = json.loads(summary_of(trace, "--json"))["reused"]
    assert [r["id"] for r in reused] == ["[0/0]"]
    assert reused[0]["failed"] == ["BackendCompilerFailed"]
    assert 0.1 < reused[0]["failed_time_s"] < 0.11  # the failed record's 0.1049 s
    flat = " ".join(summary_of(trace, "--width", "80").split())
    assert "[0/0] also held a failed compile (BackendCompilerFailed" in flat
    assert "ids are numbered again after torch._dynamo.reset()" in flat
    # The count line counts the ids and the compiles they held, as the slowest compile's line does.
    assert "4 compile ids, 5 compiles (an id numbered again holds several): " in flat
    rows = json.loads(summary_of(trace, "--json"))["compiles"]
    assert {r["id"]: r["compiles"] for r in rows} == {"[0/0]": 2, "[1/0]": 1, "[1/0_1]": 1, "[2/0]": 1}


def test_hints_of_a_failed_compile(tmp_path: Path) -> None:
    """The recompile limit's own hints (format 1.12): compiles.json `failure.hints` and `.docs_url`,
    the entry's and its metrics record's, are the `Hint:` lines and the page of its fail_reason."""
    import gzip
    import re

    trace = CORPUS / "recompiles_dynamic"
    out = tmp_path / "out"
    assert main([str(trace), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))
    assert compiles["format_minor"] >= 12
    reasons = []
    with gzip.open(next(trace.glob("*.log.gz")), "rt", encoding="utf-8") as log:
        for line in log:
            envelope = re.match(r"^[VIWEC]\d{4} [\d:.]+ \d+ [^\]]+\] (\{.*)$", line)
            if envelope and '"fail_reason": "' in line:
                reasons.append(json.loads(envelope.group(1))["compilation_metrics"]["fail_reason"])
    assert len(reasons) == 1 and reasons[0].startswith("Dynamo recompile limit exceeded")
    lines = reasons[0].splitlines()
    want = [m.group(1) for m in (re.match(r"^\s*Hint:\s*(.*\S)", x) for x in lines) if m]
    url = re.search(r"please visit:\s*(https://\S+)", reasons[0])
    assert want and url and "recompile_limit" in want[0]
    failed = [c for c in compiles["compiles"] if c["failure"]]
    assert [c["id"] for c in failed] == ["[3/2]"]
    for failure in [failed[0]["failure"], *(r["failure"] for r in failed[0]["metrics_records"] if r["failure"])]:
        assert failure["hints"] == want and failure["docs_url"] == url.group(1)
    # A compile that did not fail has no failure, and so no hints.
    assert all(c["failure"] is None for c in compiles["compiles"] if c["status"] != "failed")
    # tlscope summary shows them under the failure, as it does a break's (they were only in the file).
    failures = summary_of(out, "--width", "400").split("Failures", 1)[1]
    assert f"hint: {want[0]}" in failures and url.group(1) in failures


def test_a_failure_that_announces_its_error_says_the_error() -> None:
    """BackendCompilerFailed's fail_reason is `backend='inductor' raised:` and the error on the
    next line: the first line alone said nothing of what failed, so the error is joined to it;
    a first line that is the error itself stays alone, as it was logged."""
    from tlscope.analyse.fold.compileacc import failure_headline

    raised = "backend='inductor' raised:\n\nInductorError: LoweringException: boom\n  target: aten.x"
    assert failure_headline(raised.splitlines()) == "backend='inductor' raised: InductorError: LoweringException: boom"
    assert failure_headline(["Dynamo recompile limit exceeded", "  Explanation: ..."]) == (
        "Dynamo recompile limit exceeded"
    )
    assert failure_headline(["backend='b' raised:"]) == "backend='b' raised:"
    assert failure_headline(["Observed exception  ", "x:"]) == "Observed exception  "
    assert failure_headline([]) == ""
    # A constraint violation lists what was violated: its first item is joined.
    violated = ["Constraints violated (L['x'].size()[0])!", "  - You marked it dynamic (4).", "  - Not all values."]
    assert failure_headline(violated) == "Constraints violated (L['x'].size()[0])! You marked it dynamic (4)."
    assert failure_headline(["Lists:", "  -  "]) == "Lists: -"


def test_a_constraint_violation_says_what_was_violated_and_where(tmp_path: Path) -> None:
    """corpus marked_dynamic: mark_dynamic(x, 0), then `if x.shape[0] == 4:` specialised it.
    fail_reason's first line says only `Constraints violated (L['x'].size()[0])!`; its list says
    what (and the fix), its `User stack:` block where. The dynamo_error traceback is torch's own
    (the error is raised producing guards), so the user's line comes from the reason: compiles.json
    and the first answer say both."""
    out = tmp_path / "out"
    assert main([str(CORPUS / "marked_dynamic"), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))
    (failed,) = [c for c in compiles["compiles"] if c["failure"]]
    failure = failed["failure"]
    assert failure["type"] == "ConstraintViolationError"
    assert failure["reason"].startswith("Constraints violated (L['x'].size()[0])! ")
    assert (
        "You marked L['x'].size()[0] as dynamic but your code specialized it to be a constant (4)"
        in (failure["reason"])
    )
    frame = failure["user_frame"]
    assert frame["file"].endswith("marked_dynamic.py") and frame["line"] == 14
    assert frame["code"].strip().startswith("if x.shape[0] == 4:")
    (said,) = [a["text"] for a in compiles["first_answers"] if a["kind"] == "failure"]
    assert said.startswith("first failure: [0/0] branchy failed at marked_dynamic.py:14 (`if x.shape[0] == 4:")
    assert "You marked" in said


def _break_payload(headline: str, explanation: str, context: str, code: str) -> str:
    """A torch 2.13 `dynamo_graph_break_reason` payload: a break at /w/gbs.py:19 of `headline`."""
    head = [
        "Graph break in user code at /w/gbs.py:19",
        "Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
        "",
        headline,
        f"  Explanation: {explanation}",
        "",
        f"  Developer debug context: {context}",
    ]
    return "\n".join([*head, "", "User code traceback:", '  File "/w/gbs.py", line 19, in f3', f"    {code}"])


def test_a_skipped_function_is_named(tmp_path_factory: pytest.TempPathFactory) -> None:
    """torch 2.13 names the function a break skipped only in its debug context: `random.random()`
    (a C builtin) and DDP's `_inside_ddp_forward` (corpus ddp_sequential)."""
    text = _break_payload(
        "Attempted to call function marked as skipped",
        "Dynamo does not know how to trace the builtin `<unknown module>.Random.random.`",
        "module: <unknown module>, qualname: Random.random, skip reason: builtin",
        "return x * random.random()",
    )
    assert parse_graph_break(text).reason == "Attempted to call function marked as skipped: Random.random"
    # A module's function (`time.time()`): torch's qualname is `time`, said with its module.
    builtin = text.replace("module: <unknown module>, qualname: Random.random", "module: time, qualname: time")
    assert parse_graph_break(builtin).reason == "Attempted to call function marked as skipped: time.time"
    # A `torch.compiler.disable`d function (format 1.46): its debug context is the function's repr.
    disabled = text.replace(
        "Attempted to call function marked as skipped", "Skip calling `torch.compiler.disable()`d function"
    )
    disabled = disabled.replace(
        "module: <unknown module>, qualname: Random.random, skip reason: builtin", "<function logger at 0x7f18>"
    )
    assert parse_graph_break(disabled).reason == "Skip calling `torch.compiler.disable()`d function: logger"
    no_context = text.replace("Developer debug context", "Context")
    assert parse_graph_break(no_context).reason == "Attempted to call function marked as skipped"
    breaks = {b["reason"] for b in corpus_compiles("ddp_sequential", tmp_path_factory)["graph_breaks"]}
    assert "Attempted to call function marked as skipped: DistributedDataParallel._inside_ddp_forward" in breaks


def test_an_operator_the_data_decides_is_named(tmp_path_factory: pytest.TempPathFactory) -> None:
    """torch's breaks at an op fake tensors cannot trace (`Dynamic shape operator`, `Data
    dependent operator`) name the op only in their debug context: two such breaks in one run
    (torch.unique, torch.nonzero) read alike (format 1.47 names it; corpus dynamic_output)."""
    data = corpus_compiles("dynamic_output", tmp_path_factory)
    breaks = {b["reason"] for b in data["graph_breaks"]}
    assert breaks == {
        "Data dependent operator: aten.equal.default",
        "Dynamic shape operator: aten._unique2.default",
        "Dynamic shape operator: aten.nonzero.default",
    }
    text = _break_payload(
        "Dynamic shape operator",
        "Operator `aten.nonzero.default`'s output shape depends on input Tensor data.",
        "aten.nonzero.default",
        "return torch.nonzero(x)",
    )
    assert parse_graph_break(text).reason == "Dynamic shape operator: aten.nonzero.default"
    no_context = text.replace("  Developer debug context: aten.nonzero.default", "")
    assert parse_graph_break(no_context).reason == "Dynamic shape operator"
