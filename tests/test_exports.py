"""How each torch.export call ended (format 1.18, compiles.json `exports`): on the corpus's real
torch.export traces (export: draft_export's guesses and fake-kernel problems; export_failures: a
data-dependent branch, a declared-dynamic dimension specialised, a good call), tlparse's two
export logs, and every torch.compile trace of the corpus (which has none). The expected lines are
read from the scenarios' sources, never written here by hand."""

from __future__ import annotations

import gzip
import html
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, TLPARSE_TRACES

import tlscope
from tlscope.analyse.fold.export_words import locals_by_symbol, negated, op_name, python_expr
from tlscope.api import Trace
from tlscope.format.compiles import ExportCall
from tlscope.model.events import FrameLocals

SCENARIOS = CORPUS.parent / "scenarios"
EXPORT_SCENARIOS = ("export", "export_failures", "export_plain", "export_strict")


@cache
def _trace(log: Path) -> Trace:
    return tlscope.load(log)


def _log(scenario: str, contains: str) -> Path:
    """The scenario's log whose text holds `contains` (the export scenario writes three)."""
    import gzip

    for path in sorted((CORPUS / scenario).glob("*.log.gz")):
        if contains in gzip.decompress(path.read_bytes()).decode():
            return path
    raise AssertionError(f"no {scenario} log holds {contains!r}")


def _line_of(scenario: str, text: str) -> int:
    """The 1-based line of the scenario's code (not its docstring) starting with `text`."""
    lines = (SCENARIOS / f"{scenario}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(text))


def _calls(log: Path) -> list[ExportCall]:
    return _trace(log).exports


def _envelopes(log: Path) -> list[dict[str, Any]]:
    text = gzip.decompress(log.read_bytes()).decode()
    return [json.loads(line.split("] ", 1)[1]) for line in text.splitlines() if line and not line.startswith("\t")]


def test_a_data_dependent_branch_fails_the_call_and_names_the_users_line_and_value() -> None:
    calls = _calls(_log("export_failures", "guard_on_data_dependent_error"))
    assert [c.status for c in calls] == ["failed", "failed", "exported", "failed"]
    first = calls[0]
    kinds = [i.kind for i in first.issues]
    assert kinds == ["data_dependent_error", "partial_graph"]
    issue = first.issues[0]
    branch, item = _line_of("export_failures", "if k > 2"), _line_of("export_failures", "k = n.item()")
    assert issue.expr == "u0 > 2" and issue.code_expr == "k > 2"
    assert issue.user_frame is not None and issue.user_frame.line == branch
    assert [(s.symbol, s.name, s.kind) for s in issue.symbols] == [("u0", "k", "unbacked")]
    assert issue.symbols[0].created_at is not None and issue.symbols[0].created_at.line == item
    assert issue.fix is not None and issue.fix.code == "torch._check(k > 2)" and issue.fix.kind == "add"
    assert issue.fix.where is not None and issue.fix.where.line == branch and "torch.cond" in issue.fix.why
    assert first.sentence == f"Failed: {issue.sentence}"
    assert f"export_failures.py:{branch}" in issue.sentence and f"export_failures.py:{item}" in issue.sentence
    graph = first.issues[1].payload
    assert graph is not None and graph.payload_filename is not None and first.program is None


def test_a_declared_dynamic_dimension_the_code_specialises_says_which_line_to_change() -> None:
    calls = _calls(_log("export_failures", "guard_on_data_dependent_error"))
    second = calls[1]
    (issue,) = second.issues
    branch = _line_of("export_failures", "if x.shape[0] == 4")
    call = _line_of("export_failures", "lambda: torch.export.export(Spec(), (torch.randn(4, 3),), dynamic_shapes")
    assert issue.kind == "guard_evaluated" and issue.code_expr == "x.size()[0] == 4"
    assert issue.fix is not None and issue.fix.kind == "change_code"
    assert issue.fix.where is not None and issue.fix.where.line == branch
    assert "x.size()[0] a constant (4)" in issue.sentence and "constraint violation" in issue.sentence
    assert second.called_at is not None and second.called_at.line == call
    third = calls[2]
    assert third.issues == [] and third.program is not None and third.sentence.startswith("Exported")


def test_two_dims_for_one_size_say_to_give_them_one() -> None:
    """`x @ y` exported with `Dim("k")` for x's dim 1 and `Dim("k2")` for y's dim 0 (format 1.46):
    the code needs them equal; the fix is one Dim for both, at the export call's line."""
    (issue,) = _calls(_log("export_failures", "guard_on_data_dependent_error"))[3].issues
    matmul = _line_of("export_failures", "return x @ y")
    assert (issue.kind, issue.expr, issue.code_expr) == (
        "guard_evaluated",
        "Eq(s27, s17)",
        "x.size()[1] == y.size()[0]",
    )
    assert issue.sentence.startswith("export found that `x.size()[1] == y.size()[0]` must hold at forward (export_")
    assert issue.user_frame is not None and issue.user_frame.line == matmul
    fix = issue.fix
    assert fix is not None and fix.kind == "change_code"
    assert fix.code == "give x.size()[1] and y.size()[0] the same Dim in dynamic_shapes"
    assert fix.where is not None and fix.where.line == _line_of("export_failures", "MatMul(),") - 1


def test_the_programs_and_partial_graphs_are_in_the_folders_payloads(tmp_path: Path) -> None:
    log = _log("export_failures", "guard_on_data_dependent_error")
    out = tmp_path / "out"
    said = subprocess.run(
        [sys.executable, "-m", "tlscope", str(log), "-o", str(out), "--no-browser"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # The run says how the calls ended, and the first failure's sentence, as compiles.json has it.
    assert "torch.export: 4 calls, 3 failed, 1 exported." in said
    assert f"  call 0: {_calls(log)[0].sentence}\n" in said and f"tlscope summary {out}" in said
    written = json.loads((out / "compiles.json").read_text())
    refs = [written["exports"][2]["program"], written["exports"][0]["issues"][1]["payload"]]
    for ref in refs:
        text = (out / ref["payload_filename"]).read_text()
        assert len(text.encode()) == ref["payload_size"] and text.strip()
    raw = (out / "raw.jsonl").read_text().splitlines()
    assert '"exported_program"' in raw[refs[0]["raw_line"] - 1]
    assert [c["status"] for c in written["exports"]] == ["failed", "failed", "exported", "failed"]
    # The report's index.html says them first among its answers, escaped (the sentences hold `>`).
    page = (out / "index.html").read_text()
    section = page[page.index('<h2 id="exports">') : page.index('<h2 id="compiles">')]
    for call in written["exports"]:
        assert html.escape(call["sentence"], quote=False) in section
        for issue in call["issues"]:
            if issue["fix"]:
                assert f"<code>{html.escape(issue['fix']['code'], quote=False)}</code>" in section
    assert "k > 2" not in section and "k &gt; 2" in section


def test_draft_exports_guesses_and_fake_kernel_problems() -> None:
    (guessed,) = _calls(_log("export", "propagate_real_tensors_provenance"))
    assert guessed.status == "exported_with_issues" and guessed.program is not None
    (issue,) = guessed.issues
    assert (issue.kind, issue.code_expr, issue.result) == ("data_dependent", "k > 2", "True")
    assert issue.fix is not None and issue.fix.code == "torch._check(k > 2)"
    assert issue.user_frame is not None and issue.user_frame.line == _line_of("export", "if k > 2:")
    (kernels,) = _calls(_log("export", "missing_fake_kernel"))
    assert kernels.status == "exported_with_issues"
    by_kind = {i.kind: i for i in kernels.issues}
    assert set(by_kind) == {"missing_fake_kernel", "mismatched_fake_kernel"}
    missing, mismatched = by_kind["missing_fake_kernel"], by_kind["mismatched_fake_kernel"]
    assert missing.op == "corpus.no_fake.default" and missing.fix is not None
    assert missing.fix.code == '@torch.library.register_fake("corpus::no_fake")'
    assert mismatched.fix is not None and mismatched.fix.code == '@torch.library.register_fake("corpus::bad_fake")'
    assert mismatched.reason is not None and mismatched.reason in mismatched.sentence
    (good,) = _calls(_log("export", "DataDependent"))
    assert good.status == "exported" and good.issues == []
    assert good.called_at is not None and good.called_at.line == _line_of("export", "ep = torch.export.export(")


@pytest.mark.skipif(not TLPARSE_TRACES.exists(), reason="../shared/traces/tlparse is absent")
def test_tlparses_export_logs_say_what_its_export_report_says() -> None:
    """tlparse's -e report lists one issue on each: a data-dependent guess (taken False) and a guard."""
    (guessed,) = _calls(TLPARSE_TRACES / "inputs" / "export.log")
    (issue,) = guessed.issues
    assert issue.title == "Data Dependent Error" and issue.expr == "Eq((((-u0)//3)) + 5, 0)"
    assert issue.code_expr == "(((-a)//3)) + 5 == 0" and issue.result == "False"
    assert issue.fix is not None and issue.fix.code == "torch._check((((-a)//3)) + 5 != 0)"
    (guarded,) = _calls(TLPARSE_TRACES / "inputs" / "export_guard_added.log")
    (guard,) = guarded.issues
    assert (guard.title, guard.expr, guard.fix) == ("Guard Evaluated", "Eq(s0, 3)", None)
    assert guarded.status == "exported_with_issues"


def test_no_torch_compile_trace_has_an_export(tmp_path: Path) -> None:
    compile_logs = [p for p in sorted(CORPUS.glob("*/*.log.gz")) if p.parent.name not in EXPORT_SCENARIOS]
    assert len(compile_logs) > 20
    for log in compile_logs[:: max(1, len(compile_logs) // 12)]:
        assert _calls(log) == [], log
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "tlscope", str(compile_logs[0]), "-o", str(out), "--no-browser"], check=True)
    assert 'id="exports"' not in (out / "index.html").read_text()


def test_summary_prints_the_calls_first_and_json_carries_them() -> None:
    log = str(_log("export_failures", "guard_on_data_dependent_error"))
    run = [sys.executable, "-m", "tlscope", "summary", log]
    text = subprocess.run([*run, "--width", "250"], check=True, capture_output=True, text=True).stdout
    assert "4 export calls: 3 failed, 1 exported" in text and "0 compiles" not in text
    branch = _line_of("export_failures", "if k > 2")
    assert f"fix: torch._check(k > 2) before export_failures.py:{branch}" in text
    assert text.index("torch.export") < text.index("Dynamic dimensions")
    data = json.loads(subprocess.run([*run, "--json"], check=True, capture_output=True, text=True).stdout)
    assert [c["status"] for c in data["exports"]] == ["failed", "failed", "exported", "failed"]
    assert data["exports"][0]["issues"][0]["fix"]["code"] == "torch._check(k > 2)"


def test_expressions_in_python() -> None:
    assert python_expr("Eq((((-a)//3)) + 5, 0)") == "(((-a)//3)) + 5 == 0"
    assert python_expr("Ne(f(a, b), 2)") == "f(a, b) != 2"
    assert python_expr("Eq(a, b) | c") == "Eq(a, b) | c"  # not the whole expression
    assert python_expr("Eq(a, (b)") == "Eq(a, (b)"  # unbalanced: as logged
    assert negated("k > 2") == "k <= 2" and negated("a == 0") == "a != 0"
    assert negated("a > 2 and b < 1") == "torch.sym_not(a > 2 and b < 1)"
    assert negated("a >= b") == "a < b"
    assert op_name("mylib.op.default") == "mylib::op" and op_name("bare") == "bare"
    assert locals_by_symbol(FrameLocals(locals={"k": ["u0"], "z": "Tensor(...)", "a": "(-u0)//3"})) == {"u0": "k"}
    assert locals_by_symbol(FrameLocals(locals={"k": "u1"})) == {"u1": "k"}


def test_diff_says_how_the_export_calls_differ() -> None:
    """export_failures (export.export raised on `k > 2`) against the export scenario's draft_export
    of the same branch (it guessed True): the calls differ, the status and each side's issue said;
    a trace against itself has no difference."""
    failed = _log("export_failures", "guard_on_data_dependent_error")
    guessed = _log("export", "propagate_real_tensors_provenance")
    run = [sys.executable, "-m", "tlscope", "diff"]
    said = subprocess.run([*run, str(failed), str(guessed)], capture_output=True, text=True)
    assert said.returncode == 1
    head = said.stdout.split("\nDetails:")[0].splitlines()
    assert head == [
        "What differs:",
        "  export calls: 4 in A, 1 in B",
        "  export call 0: failed -> exported_with_issues",
        "  export call 0: only in A: data_dependent_error k > 2; partial_graph",
        "  export call 0: only in B: data_dependent k > 2",
    ]
    same = subprocess.run([*run, str(failed), str(failed)], capture_output=True, text=True)
    assert same.returncode == 0 and same.stdout.startswith("No differences.")
    data = json.loads(
        subprocess.run([*run, str(failed), str(guessed), "--json"], capture_output=True, text=True).stdout
    )
    assert data["equal"] is False and data["summary"]["exports"] == [line.strip() for line in head[1:]]


def test_hostile_export_events_are_read_without_a_fault(tmp_path: Path) -> None:
    """A log is untrusted: unbalanced and deeply nested expressions, locals of any JSON type, a
    frame index the string table lacks, an empty operator, a call with no event but its start.
    Each call is still cut and said; nothing raises."""
    prefix = "V1127 23:01:45.917000 9368 torch/_logging/structured.py:28] "
    deep = "Eq(" * 300 + "u0" + ", 1)" * 299
    envelopes: list[dict[str, object]] = [
        {"export": {}},
        {"guard_on_data_dependent_error": {"expr": deep, "stack": [{"filename": 999, "line": 3, "name": "f"}]}},
        {
            "propagate_real_tensors_provenance": {
                "expr": "Ne(u0, (2)",
                "result": "False",
                "frame_locals": {"locals": {"k": [1, 2], "j": None, "m": ["u0"], "n": {"a": 1}}},
                "user_stack": [{"filename": "x.py", "line": 1, "name": "g", "loc": "m = t.item()  # = not =="}],
            }
        },
        {"missing_fake_kernel": {"op": ""}},
        {"mismatched_fake_kernel": {"op": "lib", "reason": None}},
        {"export": {}},
        {"exported_program": {}},
        {"export": {}},
    ]
    log = tmp_path / "hostile.log"
    log.write_text("".join(prefix + json.dumps(e) + "\n" for e in envelopes))
    calls = _trace(log).exports
    assert [c.status for c in calls] == ["failed", "exported", "failed"]
    kinds = [i.kind for i in calls[0].issues]
    assert kinds == ["data_dependent_error", "data_dependent", "mismatched_fake_kernel"]  # an empty op is no issue
    guessed = calls[0].issues[1]
    assert guessed.code_expr == "Ne(m, (2)" and guessed.fix is not None  # unbalanced: not rewritten
    assert guessed.fix.code == "torch._check(torch.sym_not(Ne(m, (2)))"
    assert calls[0].issues[2].fix is not None and calls[0].issues[2].fix.code == '@torch.library.register_fake("lib")'
    assert calls[2].sentence.startswith("Failed: no program was logged, and no reason either")
    out = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(log), "--width", "120"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "3 export calls: 2 failed, 1 exported" in out.stdout


def test_without_torch_dtrace_the_partial_graph_says_which_branch_export_could_not_decide() -> None:
    """export_plain: export_failures' calls under TORCH_TRACE alone (what most users have). torch
    logs neither the error nor the calls' ends; the partial graph's last node is the comparison
    on `k` that nothing used, which export could not decide: the same issue and fix as under
    TORCH_DTRACE, and the partial graph says the last line traced."""
    (log,) = sorted((CORPUS / "export_plain").glob("*.log.gz"))
    (call,) = _calls(log)  # no `export` event: the failed call shows through its partial graph only
    branch, item = _line_of("export_failures", "if k > 2"), _line_of("export_failures", "k = n.item()")
    assert call.status == "failed" and [i.kind for i in call.issues] == ["data_dependent_error", "partial_graph"]
    issue, graph = call.issues
    assert issue.expr == "u0 > 2" and issue.code_expr == "k > 2"
    assert issue.user_frame is not None and issue.user_frame.line == branch
    assert [(s.symbol, s.name, s.kind) for s in issue.symbols] == [("u0", "k", "unbacked")]
    assert issue.symbols[0].created_at is not None and issue.symbols[0].created_at.line == item
    assert issue.fix is not None and issue.fix.code == "torch._check(k > 2)" and issue.fix.kind == "add"
    assert call.sentence == f"Failed: {issue.sentence}"
    assert graph.user_frame is not None and graph.user_frame.line == branch
    assert f"after the line at forward (export_failures.py:{branch})" in graph.sentence
    # Under TORCH_DTRACE the error's own event said it: the graph adds no second issue.
    dtraced = _calls(_log("export_failures", "guard_on_data_dependent_error"))[0]
    assert [i.kind for i in dtraced.issues] == ["data_dependent_error", "partial_graph"]
    assert dtraced.issues[0].count == 1 and dtraced.issues[1].user_frame == graph.user_frame


def test_a_declared_dynamic_dimension_export_specialised_is_fixed_in_the_code_not_by_a_compile_option() -> None:
    """The symbols' table: a dimension torch.export made dynamic (outside any compile) and the code
    specialised has the line to change as its fix; torch.compile's dynamic=False means nothing
    to export."""
    branch = _line_of("export_failures", "if x.shape[0] == 4")
    for log in (_log("export_failures", "guard_on_data_dependent_error"), *sorted((CORPUS / "export_plain").glob("*"))):
        (symbol,) = [s for s in _trace(log).symbols if s.symbol == "s77"]
        (spec,) = symbol.specializations
        assert symbol.compile_id == "[-/-]" and spec.fix is not None
        assert spec.fix.kind == "change_code" and spec.fix.where is not None and spec.fix.where.line == branch
        assert "dynamic=False" not in spec.fix.why and "drop its Dim" in spec.fix.why


def test_a_partial_graph_is_read_for_its_last_line_whatever_it_holds() -> None:
    """Untrusted payloads: no graph, a graph whose last node is used or is no comparison, one on a
    backed size only, library frames only, invalid UTF-8: no undecided branch is made up."""
    from tlscope.analyse.fold.partial_graph import MAX_BYTES, stopped_at
    from tlscope.analyse.fold.usercode import UserCode

    user = UserCode().is_user
    head = 'def forward(self, a: "i64[][]cpu"):\n'
    line = "    # File: /u/m.py:{n} in forward, code: {code}\n"
    item = line.format(n=3, code="k = a.item()") + '    item: "Sym(u0)" = torch.ops.aten.item.default(a)\n'
    cases = {
        b"": None,
        b"not a graph \xff": None,
        (head + item).encode(): ("m.py", 3, None),
        (head + item + line.format(n=4, code="if k > 2:") + '    gt: "Sym(u0 > 2)" = item > 2\n').encode(): (
            "m.py",
            4,
            "u0 > 2",
        ),
        (head + item + '    gt: "Sym(u0 > 2)" = item > 2\n    y: "Sym(u0 + 1)" = gt + 1\n').encode(): ("m.py", 3, None),
        (head + '    # File: /s/site-packages/torch/f.py:9 in f, code: x\n    gt: "Sym(s0 > 2)" = a > 2\n').encode(): (
            None,
            None,
            None,
        ),
        b"x" * (MAX_BYTES + 1): None,
    }
    for payload, expected in cases.items():
        stopped = stopped_at(payload, user)
        if expected is None:
            assert stopped is None, payload[:80]
            continue
        file, number, undecided = expected
        assert stopped is not None, payload[:80]
        assert (stopped.at.file.rsplit("/", 1)[-1] if stopped.at and stopped.at.file else None) == file
        assert (stopped.at.line if stopped.at else None) == number and stopped.undecided == undecided


def test_strict_export_failures_are_read_from_the_metrics_dynamo_logs_outside_any_compile() -> None:
    """export_strict: export_failures' calls with strict=True (Dynamo traces each, as [0/0] again,
    and logs its metrics outside any compile id, with the failure): the data-dependent branch is
    the same issue and fix as non-strict export's; the specialised Dim is a dynamo_error whose fix
    is the line; the good call's trace logs no failure and, without DTRACE, nothing after it: it is
    `traced` (1.28), its end not logged. Each names its Dynamo trace's compile id (`trace_id`)."""
    (log,) = sorted((CORPUS / "export_strict").glob("*.log.gz"))
    calls = _calls(log)
    assert [(c.status, [i.kind for i in c.issues]) for c in calls] == [
        ("failed", ["data_dependent_error"]),
        ("failed", ["dynamo_error"]),
        ("traced", []),
    ]
    metrics = [m["compilation_metrics"] for m in _envelopes(log) if "compilation_metrics" in m]
    assert [bool(m.get("fail_type")) for m in metrics] == [True, True, False]  # one record a call
    assert [c.trace_id for c in calls] == ["[0/0]"] * 3  # strict export numbers them again each call
    assert calls[2].sentence.startswith("Traced: strict export's Dynamo trace of this call ended without error")
    assert calls[2].program is None
    branch, item = _line_of("export_failures", "if k > 2"), _line_of("export_failures", "k = n.item()")
    (issue,) = calls[0].issues
    assert issue.expr == "u0 > 2" and issue.code_expr == "k > 2" and issue.user_frame is not None
    assert issue.user_frame.line == branch and issue.user_frame.file is not None
    assert issue.user_frame.file.endswith("export_failures.py")  # not torch's functional_export.py
    assert issue.symbols[0].created_at is not None and issue.symbols[0].created_at.line == item
    assert issue.fix is not None and issue.fix.code == "torch._check(k > 2)"
    (error,) = calls[1].issues
    size = _line_of("export_failures", "if x.shape[0] == 4")
    assert error.title == "Dynamo Error (strict export)" and error.reason is not None
    assert error.reason.startswith("Constraints violated") and error.user_frame is not None
    assert error.user_frame.line == size and "ConstraintViolationError" in error.sentence
    assert "specialized it to be a constant (4)" in error.sentence and calls[1].sentence == f"Failed: {error.sentence}"
    assert error.fix is not None and error.fix.kind == "change_code" and error.fix.where == error.user_frame
    # The compile id strict export traced is export's: its specialised size's fix is the line.
    (symbol,) = [s for s in _trace(log).symbols if s.specializations]
    (spec,) = symbol.specializations
    assert symbol.compile_id == "[0/0]" and spec.fix is not None and spec.fix.kind == "change_code"
    assert spec.fix.where is not None and spec.fix.where.line == size and "dynamic=False" not in spec.fix.why


def test_metrics_outside_a_compile_are_read_whatever_they_hold(tmp_path: Path) -> None:
    """Untrusted metrics outside any compile id: no failure (a call traced, its end not logged), an
    empty reason, a data-dependent message cut short, a huge reason, a failure inside a compile
    (torch.compile's: no export call)."""
    prefix = "V1127 23:01:45.917000 9368 torch/_logging/structured.py:28] "
    cut = "Could not guard on data-dependent expression"  # no `(unhinted`: not read as one
    envelopes: list[dict[str, object]] = [
        {"compilation_metrics": {"fail_type": None}},
        {"compilation_metrics": {"fail_type": "RuntimeError", "fail_reason": ""}},
        {"compilation_metrics": {"fail_type": "UserError", "fail_reason": cut}},
        {"compilation_metrics": {"fail_type": "E", "fail_reason": "x" * 100_000 + "\nfrom user code:\n"}},
        {"compilation_metrics": {"fail_type": "E", "fail_reason": "r"}, "frame_id": 0, "frame_compile_id": 0},
    ]
    log = tmp_path / "metrics.log"
    log.write_text("".join(prefix + json.dumps(e) + "\n" for e in envelopes))
    calls = _trace(log).exports
    assert [(c.status, [i.kind for i in c.issues]) for c in calls] == [("traced", [])] + [
        ("failed", ["dynamo_error"])
    ] * 3
    assert all(c.trace_id is None for c in calls)  # no capture span said which compile id
    calls = calls[1:]
    assert calls[0].issues[0].sentence == "torch.export's strict tracing (Dynamo) raised RuntimeError."
    long = calls[2].issues[0]
    assert long.reason is not None and len(long.reason) == 4000 and len(long.sentence) < 400


def test_a_strict_trace_that_worked_ends_its_call_only_without_torch_dtrace(tmp_path: Path) -> None:
    """Under TORCH_DTRACE a strict call's `export` and `exported_program` say how it ended: its
    trace's metrics end nothing. Without it the metrics end the call `traced`, also when an issue
    (a guard export evaluated) came before them: the trace went on past it."""
    from helpers import write_trace

    metrics = ({"compilation_metrics": {"fail_type": None}}, None)
    dtraced = write_trace(
        tmp_path / "dtraced.log",
        [({"export": {}}, None), metrics, ({"exported_program": {}}, "ExportedProgram: ...")],
    )
    (call,) = _calls(dtraced)
    assert (call.status, call.program is not None, call.trace_id) == ("exported", True, None)
    guard = {"guard_added": {"expr": "Eq(s0, 3)", "prefix": "eval", "user_stack": [], "stack": []}}
    plain = write_trace(tmp_path / "plain.log", [(guard, None), metrics, metrics])
    first, second = _calls(plain)
    assert (first.status, [i.kind for i in first.issues]) == ("traced", ["guard_evaluated"])
    assert (second.status, second.issues) == ("traced", [])
    assert first.sentence == second.sentence and first.sentence.startswith("Traced: ")


def test_without_torch_dtrace_the_exports_say_that_only_failed_calls_show(tmp_path: Path) -> None:
    """compiles.json's `exports_note` (1.19): said for the logs of torch.export without its own
    events (export_plain, export_strict), not for a dtraced one or a torch.compile log; the run's
    output, summary (and --json) and the report's section say it as written."""
    plain = sorted((CORPUS / "export_plain").glob("*.log.gz"))[0]
    strict = sorted((CORPUS / "export_strict").glob("*.log.gz"))[0]
    dtraced = _log("export_failures", "guard_on_data_dependent_error")
    note = _trace(plain).exports_note
    assert note is not None and "TORCH_DTRACE" in note and "only failed calls show" in note
    assert _trace(strict).exports_note == note
    assert _trace(dtraced).exports_note is None
    assert _trace(sorted((CORPUS / "simple").glob("*.log.gz"))[0]).exports_note is None
    out = tmp_path / "out"

    def run(*args: str) -> str:
        command = [sys.executable, "-m", "tlscope", *args]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout

    assert f"  {note}\n" in run(str(plain), "-o", str(out), "--no-browser")
    assert json.loads((out / "compiles.json").read_text())["exports_note"] == note
    assert f'<p class="answers-note">{note}</p>' in html.unescape((out / "index.html").read_text())
    assert note in run("summary", str(out), "--width", "400")
    assert json.loads(run("summary", str(out), "--json"))["exports_note"] == note


def test_each_issue_names_the_kind_of_its_event() -> None:
    """`event_kind` (1.23): the event `log_line` names, as a viewer filters by it; a data-dependent
    error read without TORCH_DTRACE or from strict export is not at a guard_on_data_dependent_error."""
    kinds = {
        scenario: [
            (i.kind, i.event_kind)
            for call in _calls(sorted((CORPUS / scenario).glob("*.log.gz"))[0])
            for i in call.issues
        ]
        for scenario in ("export_plain", "export_strict")
    }
    assert kinds["export_plain"] == [
        ("data_dependent_error", "make_fx_fail_partial"),
        ("partial_graph", "make_fx_fail_partial"),
    ]
    assert kinds["export_strict"] == [
        ("data_dependent_error", "compilation_metrics"),
        ("dynamo_error", "compilation_metrics"),
    ]
    dtraced = _calls(_log("export_failures", "guard_on_data_dependent_error"))
    assert ("data_dependent_error", "guard_on_data_dependent_error") in [
        (i.kind, i.event_kind) for c in dtraced for i in c.issues
    ]
    # Each names the kind of the record at its log line.
    for scenario in ("export_plain", "export_strict", "export_failures", "export"):
        for log in sorted((CORPUS / scenario).glob("*.log.gz")):
            lines = gzip.decompress(log.read_bytes()).decode().split("\n")
            for issue in (i for call in _calls(log) for i in call.issues):
                envelope = json.loads(lines[issue.log_line - 1].split("] ", 1)[1])
                key = next(
                    k
                    for k in envelope
                    if k not in ("frame_id", "frame_compile_id", "attempt", "has_payload", "stack", "rank")
                )
                assert issue.event_kind == (envelope[key]["name"] if key == "artifact" else key), (log.name, issue)


def test_strict_exports_reused_id_is_said_to_be_strict_exports_not_a_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """export_strict's [0/0] held its three calls' traces, two failed: strict export numbers its
    traces from [0/0] again each call, which summary and the report say (they said
    torch._dynamo.reset(), which the program never called)."""
    from tlscope.cli import main as cli

    (log,) = sorted((CORPUS / "export_strict").glob("*.log.gz"))
    assert "reset" not in (SCENARIOS / "export_strict.py").read_text()
    capsys.readouterr()
    cli(["summary", str(log), "--json"])
    (reused,) = json.loads(capsys.readouterr().out)["reused"]
    assert (reused["id"], reused["compiles"], len(reused["failed"])) == ("[0/0]", 3, 2)
    assert reused["why"] == "strict export numbers compile ids from [0/0] again for each call"
    out = tmp_path / "out"
    assert cli([str(log), "-o", str(out), "--no-browser"]) == 0
    index = html.unescape((out / "index.html").read_text())
    assert "before a later compile of the same id worked (strict export numbers compile ids" in index
    assert "torch._dynamo.reset()" not in index
