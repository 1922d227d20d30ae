"""Where a dynamic dimension comes from, what to change, and did the sizes change (issue 23,
points 3 and 4): compiles.json's `symbols`, each size recompile's `fix` and `input_shapes`, on
the corpus's recompiling traces, and the vibe test: the answers derived from compiles.json alone
by following FORMAT.md's "Reading the answers"."""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, TLPARSE_TRACES

import tlscope
from tlscope.analyse.fold.symbols import size_refs
from tlscope.api import Trace
from tlscope.format.compiles import CompileEntry
from tlscope.format.raw import display_compile_id

#: The size recompiles of the two recompiling scenarios (corpus/scenarios/*.py say why each
#: call recompiles): compile id -> (input, dimension, kind of fix, text of the call's line).
SIZE_RECOMPILES: dict[str, dict[str, tuple[str, int, str, str]]] = {
    "recompiles": {"[0/1]": ("x", 0, "mark_dynamic", "compiled(torch.randn(5, 8))")},
    "recompiles_dynamic": {
        "[0/1]": ("x", 0, "maybe_mark_dynamic", "f(torch.randn(5, 8))"),  # size 1 is passed later
        "[0/2]": ("x", 1, "mark_dynamic", "f(torch.randn(5, 9))"),
        "[0/5]": ("x", 0, "mark_dynamic", "m(x)"),  # marked dynamic; the entries were not
        "[0/6]": ("x", 0, "mark_unbacked", "m(torch.randn(1, 4))"),  # size 1 outside 2 <= s
    },
}
SIZE_KINDS = ("size", "dynamic_range", "dim_marking")


@cache
def _trace(name: str) -> Trace:
    return tlscope.load(CORPUS / name)


def _summary_text(name: str) -> str:
    """`tlscope summary` of the corpus scenario `name`'s log, as the terminal gets it."""
    log = str(next((CORPUS / name).glob("*.log.gz")))
    done = subprocess.run([sys.executable, "-m", "tlscope", "summary", log], check=True, capture_output=True, text=True)
    return done.stdout


def _explaining(entry: CompileEntry) -> str:
    recompile = entry.recompile
    assert recompile is not None and recompile.guard_failures
    index = recompile.recommended.index if recompile.recommended is not None else 0
    return recompile.guard_failures[index].kind


@pytest.mark.parametrize("name", sorted(SIZE_RECOMPILES))
def test_each_size_recompile_carries_a_fix_naming_the_input_and_dimension(name: str) -> None:
    trace = _trace(name)
    by_size = {
        e.id for e in trace.recompiles if e.recompile and e.recompile.guard_failures and _explaining(e) in SIZE_KINDS
    }
    assert by_size == set(SIZE_RECOMPILES[name])
    for entry in trace.recompiles:
        assert entry.recompile is not None
        fix = entry.recompile.fix
        if entry.id not in by_size:
            # Not a size; recompiles_dynamic's `limited(x, mode)` reaches the limit by a str (1.48).
            assert fix is None or (fix.kind, fix.input) == ("recompile_limit", "mode"), entry.id
            continue
        want_input, want_dim, want_kind, call = SIZE_RECOMPILES[name][entry.id]
        assert fix is not None, entry.id
        assert (fix.input, fix.source, fix.dim, fix.kind) == (want_input, f"L['{want_input}']", want_dim, want_kind)
        module = "torch._dynamo.decorators" if want_kind == "mark_unbacked" else "torch._dynamo"
        assert fix.code == f"{module}.{want_kind}({want_input}, {want_dim})"
        assert fix.where is not None and fix.where.code is not None and fix.where.code.startswith(call)
        # The line really is that call in the scenario the trace was made from.
        script = (CORPUS.parent / "scenarios" / f"{name}.py").read_text().splitlines()
        assert fix.where.line is not None and script[fix.where.line - 1].strip().startswith(call)
        assert f"dim {want_dim}" in fix.why and want_input in fix.why


def _create_symbol_logs() -> list[Path]:
    """Every corpus and shared tlparse log that logs a `create_symbol` event."""
    logs = sorted(CORPUS.glob("*/**/*.log.gz"))
    if TLPARSE_TRACES.is_dir():
        logs += sorted(p for p in TLPARSE_TRACES.rglob("*") if p.is_file() and p.name != "LICENSE")
    found = []
    for log in logs:
        opener: Any = gzip.open if log.suffix == ".gz" else open
        with opener(log, "rb") as f:
            if any(b'"create_symbol"' in line for line in f):
                found.append(log)
    return found


def test_every_create_symbol_is_in_symbols_with_its_source() -> None:
    logs = _create_symbol_logs()
    assert {p.parent.name for p in logs} >= {"recompiles", "recompiles_dynamic", "export", "specialized"}
    for log in logs:
        trace = tlscope.load(log)
        have = {(s.compile_id, s.symbol, s.source) for s in trace.symbols}
        events = list(trace.events("create_symbol"))
        assert events, log
        for event in events:
            body = event["create_symbol"]
            assert (display_compile_id(event), body["symbol"], body.get("source")) in have, (log, body["symbol"])


def test_a_symbol_says_where_its_input_entered_and_what_constrains_it() -> None:
    symbols = _trace("recompiles_dynamic").symbols
    s27 = next(s for s in symbols if s.compile_id == "[0/2]" and s.symbol == "s27")
    assert (s27.source, s27.input_source, s27.input, s27.dim, s27.what) == (
        "L['x'].size()[1]",
        "L['x']",
        "x",
        1,
        "size",
    )
    assert (s27.value, s27.range) == ("9", "[2, int_oo]")
    assert s27.entered_at is not None and s27.entered_at.line == 40 and s27.entered_at.name == "main"
    assert s27.traced_at is not None and s27.traced_at.name == "shaped"
    k = next(s for s in symbols if s.compile_id == "[1/1]" and s.symbol == "s16")
    assert (k.input, k.dim, k.what, k.value) == ("k", None, "value", "3")
    # [0/6]'s call (size 1) failed [0/5]'s `2 <= x.size()[0]`: s77 of [0/5] says so.
    s77 = next(s for s in symbols if s.compile_id == "[0/5]" and s.symbol == "s77")
    assert s77.failed_in == ["[0/6]"]
    # export: guards on a symbol (guard_added / guard_added_fast), unbacked symbols too.
    export = tlscope.load(next(p for p in _create_symbol_logs() if p.parent.name == "export"))
    u0 = next(s for s in export.symbols if s.symbol == "u0")
    assert u0.kind == "unbacked" and "u0 <= s77" in u0.guards and u0.guard_count == len(u0.guards)
    assert u0.traced_at is not None and u0.traced_at.code == "k = n.item()"


@pytest.mark.parametrize("name", sorted(SIZE_RECOMPILES))
def test_did_the_sizes_change_marks_the_dimension_the_recompile_names(name: str) -> None:
    trace = _trace(name)
    tables = {t.frame: t for t in trace.input_shapes}
    assert "[0/0]" in tables  # the frame compiled more than once
    table = tables["[0/0]"]
    assert table.compile_ids == [e.id for e in trace.compiles if e.frame_compile.startswith("[0/")]
    row = next(r for r in table.inputs if r.source == "L['x']")
    cells = {c.compile_id: c for c in row.cells}
    for cid, (_, dim, kind, _) in SIZE_RECOMPILES[name].items():
        cell = cells[cid]
        assert cell.recompile == cid
        if kind != "mark_dynamic" or cid != "[0/5]":  # [0/5]: a marking changed, not a size
            assert cell.reason_dim == dim and dim in cell.changed_dims, (cid, cell)
    # The first compile has nothing to compare with; a dtype recompile marks the dtype only.
    assert cells["[0/0]"].changed_dims == [] and cells["[0/0]"].recompile is None
    if name == "recompiles":
        assert cells["[0/2]"].dtype_changed and cells["[0/2]"].changed_dims == [] and cells["[0/2]"].dtype == "f64"
        assert cells["[0/1]"].shape == ["s77", "8"] and cells["[0/1]"].sizes == [5, 8]


def test_the_vibe_test_answers_from_compiles_json_alone(tmp_path: Path) -> None:
    """FORMAT.md "Reading the answers": for each recompile of the recompiles trace, which input and
    dimension changed and what line to add, from compiles.json's documented fields only."""
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "tlscope", str(next((CORPUS / "recompiles").glob("*.log.gz"))), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    data = json.loads((out / "compiles.json").read_text())
    answers = {}
    for c in data["compiles"]:
        if not c["recompile"]:
            continue
        f = c["recompile"]["guard_failures"][c["recompile"]["recommended"]["index"]]
        fix = c["recompile"]["fix"]
        if fix is None:
            answers[c["id"]] = (f["explanation"], None)
            continue
        cell = next(
            cell
            for table in data["input_shapes"]
            for row in table["inputs"]
            if row["source"] == fix["source"]
            for cell in row["cells"]
            if cell["compile_id"] == c["id"]
        )
        assert cell["reason_dim"] == fix["dim"] and fix["dim"] in cell["changed_dims"]
        where = fix["where"]
        answers[c["id"]] = ((fix["input"], fix["dim"]), (fix["code"], Path(where["file"]).name, where["line"]))
    assert answers == {
        "[0/1]": (("x", 0), ("torch._dynamo.mark_dynamic(x, 0)", "recompiles.py", 17)),
        "[0/2]": ("dtype of x changed: torch.float32 -> torch.float64", None),
        "[0/3]": ("requires_grad of x changed: False -> True", None),
        "[0/4]": (
            "grad mode changed: gradients were enabled for one call and disabled (torch.no_grad, "
            "torch.inference_mode) for the other; each mode needs its own compile",
            None,
        ),
    }


def test_the_report_says_the_fix_under_its_recompile(tmp_path: Path) -> None:
    out = tmp_path / "out"
    log = str(next((CORPUS / "recompiles_dynamic").glob("*.log.gz")))
    subprocess.run([sys.executable, "-m", "tlscope", log, "-o", str(out)], check=True, capture_output=True)
    page = (out / "index.html").read_text()
    data = json.loads((out / "compiles.json").read_text())
    fixes = [c for c in data["compiles"] if c["recompile"] and c["recompile"]["fix"]]
    # Four size fixes of `shaped`, and (format 1.48) `limited`'s two recompiles by a str at the limit.
    assert page.count('<p class="answers-fix">') == len(fixes) == 6
    for entry in fixes:
        block = page.split(f'<div id="recompile-{entry["dir"]}"', 1)[1].split("</div>", 1)[0]
        fix = entry["recompile"]["fix"]
        where = f" before recompiles_dynamic.py:{fix['where']['line']}" if fix["where"] else ""
        assert f"To avoid it, add <code>{fix['code']}</code>{where}" in block
    limited = [e["recompile"]["fix"]["code"] for e in fixes if e["recompile"]["fix"]["kind"] == "recompile_limit"]
    assert limited == ["torch._dynamo.config.recompile_limit = 4"] * 2  # 2 compiles, 2 values: twice, for 4


def test_summary_shows_the_fix_and_the_shapes() -> None:
    log = str(next((CORPUS / "recompiles").glob("*.log.gz")))
    text = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", log], check=True, capture_output=True, text=True
    ).stdout
    assert "fix: torch._dynamo.mark_dynamic(x, 0)" in text
    assert "before recompiles.py:17" in text
    assert "Did the sizes change? fn (frame [0/0])" in text and "[s77*, 8]" in text and "dim 0 ←" in text
    data = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tlscope", "summary", "--json", log], check=True, capture_output=True, text=True
        ).stdout
    )
    row = next(r for r in data["recompiles"] if r["id"] == "[0/1]")
    assert row["fix"]["code"] == "torch._dynamo.mark_dynamic(x, 0)"
    assert data["input_shapes"][0]["frame"] == "[0/0]"
    assert {(s["compile_id"], s["symbol"], s["source"]) for s in data["symbols"]} >= {
        ("[0/1]", "s77", "L['x'].size()[0]")
    }
    # The terminal: where each dynamic dimension came from, and a specialisation where there is one.
    assert "Dynamic dimensions" in text and "recompiles.py:17" in text
    log = str(next((CORPUS / "specialized").glob("*.log.gz")))
    text = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", log], check=True, capture_output=True, text=True
    ).stdout
    assert "specialised to 5 at" in text and "specialized.py:13" in text
    assert "fix: change the line specialized.py:13" in text


def test_a_specialised_size_says_the_line_to_change_or_dynamic_false() -> None:
    """specialized: `pick` singles out size 5 (`if x.shape[0] == 5`), so its recompile for 5 is
    avoided only by changing that line; `looped` specialises every size (`range(x.shape[0])`), so
    dynamic=False is the better fix. The lines are checked against the scenario."""
    trace = _trace("specialized")
    script = (CORPUS.parent / "scenarios" / "specialized.py").read_text().splitlines()
    fixes = {e.id: e.recompile.fix for e in trace.recompiles if e.recompile is not None}
    branch = fixes["[0/1]"]
    assert branch is not None and (branch.kind, branch.input, branch.dim) == ("change_code", "x", 0)
    assert branch.where is not None and branch.where.line is not None
    assert script[branch.where.line - 1].strip().startswith("if x.shape[0] == 5:") and branch.code.startswith(
        "if x.shape[0] == 5:"
    )
    assert "[0/2]" in branch.why  # the dynamic graph other sizes share
    later = fixes["[0/2]"]
    assert later is not None and later.kind == "mark_dynamic" and later.code == "torch._dynamo.mark_dynamic(x, 0)"
    for cid in ("[1/1]", "[1/2]"):
        fix = fixes[cid]
        assert fix is not None and (fix.kind, fix.input, fix.dim) == ("dynamic_false", "x", 0)
        assert fix.where is not None and fix.where.line is not None
        assert script[fix.where.line - 1].strip().startswith("for i in range(1, x.shape[0]):")
    specialised = [s for s in trace.symbols if s.specializations]
    assert {(s.compile_id, s.specializations[0].value) for s in specialised} == {
        ("[0/1]", "5"),
        ("[1/1]", "4"),
        ("[1/2]", "5"),
    }
    assert all(s.specializations[0].user_frame is not None for s in specialised)


#: What fixes.py and shapes.py searched a guard with, before `size_refs` (quadratic on long names).
SIZE_REF = re.compile(r"([A-Za-z_][\w.\[\]']*)\.size\(\)\[(\d+)\]", re.ASCII)


def test_size_refs_finds_what_the_pattern_found_in_linear_time() -> None:
    """A guard is log text: `size_refs` gives the pattern's matches on random strings of the
    characters that matter, and finishes on the inputs that made the pattern take the square of
    their length (a hang check in a subprocess, not a speed target)."""
    rng = random.Random(23)
    alphabet = ["a", "x", "_", "1", ".", "[", "]", "'", "(", ")", " ", ".size()[", "é"]
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert size_refs(text) == [(m[1], int(m[2])) for m in SIZE_REF.finditer(text)], text
    script = (
        "from tlscope.analyse.fold.symbols import size_refs\n"
        "assert size_refs('2 <= ' + 'a' * 400000 + '.size()[') == []\n"
        "assert size_refs(('x' * 1000 + '.size()[') * 400 + '0]')[-1][1] == 0\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_specialisation_or_a_guarded_size_carries_its_own_fix() -> None:
    """Format 1.15: a specialisation is not necessarily a recompile, and a guard on a dynamic size
    may cause a later one: each carries its `fix` in `symbols`, whether a recompile followed or
    not. specialized: `pick`'s `if x.shape[0] == 5` specialises [0/1] (change that line: other
    sizes share [0/2]) and guards [0/2] with Ne(s77, 5) at the same line; `looped`'s
    `range(1, x.shape[0])` specialises every size (dynamic=False). recompiles_dynamic: only [0/4]'s
    transposed input is guarded (its storage bound on s77 and s27), at `shaped`'s line."""
    trace = _trace("specialized")
    script = (CORPUS.parent / "scenarios" / "specialized.py").read_text().splitlines()
    by = {(s.compile_id, s.symbol): s for s in trace.symbols}
    kinds = {key: [p.fix.kind if p.fix else None for p in s.specializations] for key, s in by.items()}
    assert kinds == {
        ("[0/1]", "s77"): ["change_code"],
        ("[0/2]", "s77"): [],
        ("[1/1]", "s77"): ["dynamic_false"],
        ("[1/2]", "s77"): ["dynamic_false"],
    }
    branch = by[("[0/1]", "s77")].specializations[0].fix
    assert branch is not None and (branch.input, branch.source, branch.dim) == ("x", "L['x']", 0)
    assert branch.where is not None and branch.where.line is not None
    assert script[branch.where.line - 1].strip() == branch.code.strip()
    assert branch.code.startswith("if x.shape[0] == 5:")
    assert "[0/2]" in branch.why and "to 5" in branch.why  # the graph other sizes share, the size singled out
    for cid in ("[1/1]", "[1/2]"):
        loop = by[(cid, "s77")].specializations[0].fix
        assert loop is not None and loop.code == "torch.compile(..., dynamic=False)" and loop.where is not None
        assert script[(loop.where.line or 0) - 1].strip().startswith("for i in range(1, x.shape[0]):")
    guarded = {key: s.fix for key, s in by.items() if s.fix is not None}
    assert set(guarded) == {("[0/2]", "s77")}
    fix = guarded[("[0/2]", "s77")]
    assert fix.kind == "size_guard" and "Ne(s77, 5)" in fix.why and fix.where is not None
    assert script[(fix.where.line or 0) - 1].strip() == fix.code.strip()
    dynamic = _trace("recompiles_dynamic")
    script = (CORPUS.parent / "scenarios" / "recompiles_dynamic.py").read_text().splitlines()
    fixes = {(s.compile_id, s.symbol): s.fix for s in dynamic.symbols if s.fix is not None}
    assert set(fixes) == {("[0/4]", "s77"), ("[0/4]", "s27")}
    assert not any(p.fix for s in dynamic.symbols for p in s.specializations)
    for (_, symbol), fix in fixes.items():
        assert fix.kind == "size_guard" and fix.dim == {"s77": 0, "s27": 1}[symbol] and fix.where is not None
        assert "4*s77*(s27 - 1) + 4*s77 <= 192" in fix.why
        assert script[(fix.where.line or 0) - 1].strip() == fix.code == "return torch.relu(x) * 2"
    text = _summary_text("specialized")
    assert "guarded: Ne(s77, 5)" in text and "dynamic=False) (or change" in text


def test_a_marked_dimension_the_code_specialises_says_change_the_line_not_dynamic_false() -> None:
    """marked_dynamic: `branchy(x)` with `mark_dynamic(x, 0)` fails (ConstraintViolationError) at
    its `if x.shape[0] == 4`. dynamic=False cannot help (the marking is a requirement), so the fix
    is that line, with maybe_mark_dynamic as the other way; the same call marked with
    maybe_mark_dynamic compiled, and its specialisation keeps the usual rule."""
    trace = _trace("marked_dynamic")
    scenario = (CORPUS.parent / "scenarios" / "marked_dynamic.py").read_text().splitlines()
    branch = next(i for i, line in enumerate(scenario, 1) if "if x.shape[0] == 4" in line)
    failed = trace.compile("[0/0]")
    assert failed.failure is not None and failed.failure.type == "ConstraintViolationError"
    by_compile = {s.compile_id: s for s in trace.symbols if s.symbol == "s77"}
    fix = by_compile["[0/0]"].specializations[0].fix
    assert fix is not None and fix.kind == "change_code" and (fix.input, fix.dim) == ("x", 0)
    assert fix.where is not None and fix.where.line == branch and fix.code.startswith("if x.shape[0] == 4:")
    assert "ConstraintViolationError" in fix.why and "torch._dynamo.maybe_mark_dynamic(x, 0)" in fix.why
    hinted = by_compile["[0/1]"].specializations[0].fix
    assert hinted is not None and hinted.kind == "dynamic_false"
    log = str(next((CORPUS / "marked_dynamic").glob("*.log.gz")))
    text = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", log, "--width", "200"], check=True, capture_output=True, text=True
    ).stdout
    assert f"fix: change the line marked_dynamic.py:{branch}" in text


def _unbacked_kernels() -> dict[str, str]:
    """Each unbacked symbol of corpus `unbacked`'s log -> the innermost frame of its creation's
    stack (torch's fake kernel that made it), read from the log itself."""
    log = next((CORPUS / "unbacked").glob("*.log.gz"))
    kernels: dict[str, str] = {}
    for text in gzip.decompress(log.read_bytes()).decode().splitlines():
        if '"create_unbacked_symbol"' in text:
            event = json.loads(text[text.index("{") :])["create_unbacked_symbol"]
            kernels[event["symbol"]] = event["stack"][-1]["name"]
    return kernels


def test_unbacked_symbols_made_again_stand_for_the_ones_the_code_made() -> None:
    """unbacked: Dynamo makes u0 (`.item()`) and u1 (`nonzero()`) at the scenario's lines; the
    symbols AOTAutograd and Inductor make again (no user line) each stand for the one its operator
    made (the log's own create_unbacked_symbol stacks say which operator), in turn; summary lists
    only the code's own, and counts the others."""
    trace = _trace("unbacked")
    scenario = (CORPUS.parent / "scenarios" / "unbacked.py").read_text().splitlines()
    line = {
        text: next(i for i, s in enumerate(scenario, 1) if s.strip().startswith(text))
        for text in ("n = x.sum()", "nz = x.nonzero()", "return x.sum().item()")
    }
    log = next((CORPUS / "unbacked").glob("*.log.gz"))
    ops = _unbacked_kernels()
    symbols = {(s.compile_id, s.symbol): s for s in trace.symbols}
    assert set(ops) == {name for _, name in symbols}
    own = {k: s for k, s in symbols.items() if s.retrace_of is None}
    assert {k: s.traced_at.line if s.traced_at else None for k, s in own.items()} == {
        ("[0/0]", "u0"): line["n = x.sum()"],
        ("[0/0]", "u1"): line["nz = x.nonzero()"],
        ("[1/0]", "zuf0"): line["return x.sum().item()"],
    }
    again = [s for s in symbols.values() if s.retrace_of is not None]
    assert len(again) == len(symbols) - 3 >= 6
    for s in again:
        assert s.traced_at is None and ops[s.symbol] == ops[s.retrace_of], s
        assert (s.compile_id, s.retrace_of) in own
    text = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(log), "--width", "200"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    shown = text[text.index("Dynamic dimensions") :]
    assert f"{len(again)} unbacked symbols made again by AOTAutograd and Inductor" in shown
    assert " u2 " not in shown and " u0 " in shown
    assert "unbacked: item()" in shown and "unbacked: nonzero()" in shown


def test_an_unbacked_symbol_says_the_operator_that_made_it() -> None:
    """unbacked (format 1.39): each unbacked symbol's `op` is the data-dependent operator whose
    output it is, read from the innermost frame of its log record's stack (torch's fake kernel,
    `local_scalar_dense` for `.item()`), and its `why` `data_dependent`; a retrace says its
    original's operator. A backed symbol has neither."""
    trace = _trace("unbacked")
    kernels = _unbacked_kernels()
    words = {"local_scalar_dense": "item", "nonzero": "nonzero"}
    assert set(kernels.values()) == set(words)
    for s in trace.symbols:
        assert (s.op, s.why) == (words[kernels[s.symbol]], "data_dependent"), s
    by_name = {(s.compile_id, s.symbol): s for s in trace.symbols}
    assert (by_name[("[0/0]", "u0")].op, by_name[("[0/0]", "u1")].op, by_name[("[1/0]", "zuf0")].op) == (
        "item",
        "nonzero",
        "item",
    )
    for s in trace.symbols:
        if s.retrace_of is not None:
            assert by_name[(s.compile_id, s.retrace_of)].op == s.op
    backed = _trace("recompiles_dynamic").symbols
    assert backed and all(s.op is None and s.why != "data_dependent" for s in backed)


def test_an_unbacked_symbol_no_fake_kernel_made_says_no_operator(tmp_path: Path) -> None:
    """A create_unbacked_symbol whose innermost frame is not in torch's fake kernels (an input
    marked unbacked, a loop's carried value) names no operator and no `why`; one whose kernel
    tlscope has no word for keeps the kernel's own name."""
    envelope = "V1127 23:16:09.851000 1 torch/fx/experimental/symbolic_shapes.py:5340] "
    strings = [
        '{"str": ["/x/torch/_subclasses/fake_impls.py", 0]}',
        '{"str": ["/x/torch/fx/experimental/symbolic_shapes.py", 1]}',
    ]
    records = [
        {"symbol": "u0", "vr": "[0, int_oo]", "stack": [{"line": 1, "name": "masked_select", "filename": 0}]},
        {"symbol": "u1", "vr": "[0, int_oo]", "stack": [{"line": 2, "name": "create_symbol", "filename": 1}]},
        {"symbol": "u2", "vr": "[0, int_oo]", "stack": [{"line": 3, "name": "_unique", "filename": 0}]},
    ]
    lines = [envelope + s for s in strings]
    ids = {"frame_id": 0, "frame_compile_id": 0}
    lines += [envelope + json.dumps({"create_unbacked_symbol": r, **ids}) for r in records]
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_text("\n".join(lines) + "\n")
    said = {s.symbol: (s.op, s.why) for s in tlscope.load(log).symbols}
    assert said == {"u0": ("masked_select", "data_dependent"), "u1": (None, None), "u2": ("unique", "data_dependent")}


def test_summary_says_no_in_one_line_when_no_size_changed() -> None:
    """recompiles_dynamic: `scaled` recompiled for an int and a global, `limited` for a string;
    their tensor input never changed, so each frame gets one line, not a table of equal rows; the
    frames whose inputs did change keep their tables."""
    log = str(next((CORPUS / "recompiles_dynamic").glob("*.log.gz")))
    run = [sys.executable, "-m", "tlscope", "summary", log]
    data = json.loads(subprocess.run([*run, "--json"], check=True, capture_output=True, text=True).stdout)
    unchanged, changed = [], []
    for frame in data["input_shapes"]:
        cells = [c for row in frame["inputs"] for c in row["cells"]]
        moved = any(c["changed_dims"] or c["changed_strides"] or c["dtype_changed"] or c["absent"] for c in cells)
        (changed if moved else unchanged).append(frame)
    assert [f["function"]["name"] for f in unchanged] == ["scaled", "limited"] and changed
    text = " ".join(subprocess.run([*run, "--width", "400"], check=True, capture_output=True, text=True).stdout.split())
    assert (
        "Did the sizes change? scaled (frame [1/0]): no, its input kept its dtype, shape and stride in all 3 "
        "compiles ([1/0], [1/1], [1/2])." in text
    )
    assert "Did the sizes change? limited (frame [3/0]): no, its input kept its dtype, shape and stride in both" in text
    for frame in changed:
        assert f"Did the sizes change? {frame['function']['name']} (frame {frame['frame']}) " in text


def test_a_layout_recompile_marks_the_stride_and_asks_for_no_size() -> None:
    """Format 1.48, corpus layouts: `gram` called with a matrix, its transpose and every other
    column of a wider one recompiles twice on x's stride 0 (the same sizes throughout). The sizes
    table marks that stride (`reason_stride`), not a size (`reason_dim`, 1.47 put it there); the
    strides torch made dynamic are not sizes TORCH_COMPILE_DYNAMIC_SOURCES could name (1.47 said
    `dim 0: InferStride(dim=1) -> 1` and recommended `L['x']:0,L['x']:1`), nor is the view's base;
    and the base's guard, the view's bounds in it, names no line to change (1.47: `gram`'s line)."""
    trace = _trace("layouts")
    tables = {t.frame: t for t in trace.input_shapes}
    row = next(r for r in tables["[0/0]"].inputs if r.source == "L['x']")
    cells = {c.compile_id: c for c in row.cells}
    for cid in ("[0/1]", "[0/2]"):
        assert _explaining(next(e for e in trace.compiles if e.id == cid)) == "stride"
        assert (cells[cid].reason_stride, cells[cid].reason_dim, cells[cid].changed_dims) == (0, None, [])
        assert 0 in cells[cid].changed_strides
    assert trace.dynamic is not None
    assert [s.source for s in trace.dynamic.sources] == ["L['lr']"]
    assert trace.dynamic.recommended == "L['lr']" and "InferStride" not in trace.dynamic.sentence
    base = next(s for s in trace.symbols if s.source == "L['x']._base.size()[1]")
    assert base.guards and any("s7" in g for g in base.guards) and base.fix is None and base.why is None
    text = _summary_text("layouts")
    assert "stride 0 ←" in text and "dim 0" not in text.split("Did the sizes change? gram", 1)[1].split("Did")[0]


def test_a_float_made_dynamic_is_a_value_not_a_row_of_the_sizes() -> None:
    """Format 1.48, corpus layouts: `sgd_step(w, lr)` with a new float each call recompiles once
    with lr dynamic, passed to the graph as a 0-d tensor (`L_lr_: f64[]`, source
    `___as_tensor(L['lr'])`). It is a value, as an int made dynamic is (a `Sym` input): the sizes
    table leaves it out (1.47: a row said `L_lr_`, absent then `f64 [] []`), and the recompile's
    changes say it (`lr dynamic: static -> dynamic`)."""
    trace = _trace("layouts")
    table = {t.frame: t for t in trace.input_shapes}["[1/0]"]
    assert [r.source for r in table.inputs] == ["L['w']"]
    entry = next(e for e in trace.compiles if e.id == "[1/1]")
    assert entry.recompile is not None
    assert ("L['lr']", "dynamic", "static", "dynamic") in [
        (c.input, c.what, c.before, c.after) for c in entry.recompile.changes
    ]
    text = _summary_text("layouts")
    assert "L_lr_" not in text and "Did the sizes change? sgd_step (frame [1/0]): no" in text


def test_two_sizes_guarded_equal_name_no_line_to_change() -> None:
    """Format 1.48: a guard that two sizes are equal (`Eq(s2, s48)`: break_batch's batch and its
    target, whose loss needs them equal; export_failures' `x @ y`) is the code's meaning, not a
    size it depends on: a call breaking it fails in eager too. 1.47 gave both symbols a
    `size_guard` fix, "change the line" of the loss or the matmul."""
    for name, pair in (("break_batch", ("s2", "s48")), ("export_failures", ("s27", "s17"))):
        symbols = [s for s in _trace(name).symbols if s.symbol in pair]
        equal = f"Eq({pair[0]}, {pair[1]})"
        assert any(equal in s.guards for s in symbols), name
        assert all(s.fix is None for s in symbols if equal in s.guards), name
