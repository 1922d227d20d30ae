"""Why an input is dynamic that no line of the code marked, and the setting that asks for it
(analyse/fold/dynamic.py; compiles.json `dynamic` and `symbols[].why`, format 1.29; `maybe_marked`
and `all_dynamic` 1.32).

On corpus `pgo` (run1 learns by recompiling with TORCH_COMPILE_JOB_ID set, run2 reads the PGO
profile, run3 sets the value tlscope recommends from run1) and `recompiles_dynamic` (automatic
dynamic shapes on two functions, a marked dimension), read against the logs' own events parsed
here, and on hostile values."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, require_shared

import tlscope
from tlscope.analyse.fold.dynamic import DynamicFold, _dynamic_sources, _entries, _matches, _read_profile
from tlscope.api import Trace
from tlscope.cli import main as cli

PGO = CORPUS / "pgo"
SCENARIO = CORPUS.parent / "scenarios" / "pgo.py"


@cache
def _trace(folder: Path) -> Trace:
    return tlscope.load(next(folder.glob("*.log.gz")))


def _recommended_by_scenario() -> str:
    """The value run3 was given: the scenario's RECOMMENDED, read from its source."""
    found = re.search(r'^RECOMMENDED = "(.*)"$', SCENARIO.read_text(), re.M)
    assert found is not None
    return found[1]


def _chromium(folder: Path) -> Iterator[dict[str, Any]]:
    """Each chromium event of the folder's log (its payload), parsed here."""
    lines = gzip.decompress(next(folder.glob("*.log.gz")).read_bytes()).decode("utf-8").split("\n")
    for i, line in enumerate(lines):
        if '"chromium_event"' not in line:
            continue
        body = []
        for later in lines[i + 1 :]:
            if not later.startswith("\t"):
                break
            body.append(later[1:])
        yield json.loads("\n".join(body))


def _automatic(folder: Path) -> dict[str, list[object]]:
    """Per source, the `dim_changed` of each `automatic_dynamic` event of the log."""
    found: dict[str, list[object]] = {}
    for event in _chromium(folder):
        if event.get("name") == "automatic_dynamic":
            found.setdefault(event["args"]["name"], []).append(event["args"]["dim_changed"])
    return found


def test_run1_says_what_automatic_dynamic_shapes_made_dynamic() -> None:
    dynamic = _trace(PGO / "run1").dynamic
    assert dynamic is not None
    logged = _automatic(PGO / "run1")
    assert [s.source for s in dynamic.sources] == list(logged)
    for source in dynamic.sources:
        dims = [d for d in logged[source.source] if isinstance(d, int)]
        assert source.by == "automatic" and source.compile_id == "[0/1]"
        assert source.dims == (None if len(dims) < len(logged[source.source]) else sorted(dims))
        assert source.function is not None and source.function.name == "shaped"
    x = dynamic.sources[0]
    assert x.changed == ["[0/1] dim 0: 4 -> 6"] and x.entries == ["L['x']:0"]
    assert dynamic.configured is None and dynamic.profile is None
    # With TORCH_COMPILE_JOB_ID set, torch wrote what it learned: what run2 reads (the same payload).
    written = dynamic.profile_written
    assert written is not None and written.artifact == "put_local_code_state" and written.compile_id == "[0/1]"
    run2 = _trace(PGO / "run2").dynamic
    assert run2 is not None and run2.profile is not None
    assert written.event.payload_filename == run2.profile.event.payload_filename
    assert "This run wrote them to its PGO profile (put_local_code_state, key tlscope-pgo:None:)" in dynamic.sentence
    # The value run3 was given, which made it compile once (below): tlscope's answer closes the loop.
    assert dynamic.recommended == _recommended_by_scenario()
    assert f'TORCH_COMPILE_DYNAMIC_SOURCES="{dynamic.recommended}"' in dynamic.sentence
    whys = {(s.compile_id, s.source): s.why for s in _trace(PGO / "run1").symbols}
    assert whys == {("[0/1]", "L['x'].size()[0]"): "automatic", ("[0/1]", "L['k']"): "automatic"}


def test_run2_says_the_pgo_profile_made_its_first_compile_dynamic() -> None:
    trace = _trace(PGO / "run2")
    dynamic = trace.dynamic
    assert dynamic is not None and dynamic.profile is not None
    assert dynamic.profile.artifact == "get_local_code_state" and dynamic.profile.where == "local"
    assert dynamic.profile.key is not None and dynamic.profile.key.startswith("tlscope-pgo:")
    assert dynamic.profile.functions == 1 and dynamic.profile.event.payload_filename
    run1 = _trace(PGO / "run1").dynamic
    assert run1 is not None
    assert [(s.source, s.dims) for s in dynamic.sources] == [(s.source, s.dims) for s in run1.sources]
    assert {s.by for s in dynamic.sources} == {"profile"}
    assert not trace.recompiles and [c.id for c in trace.compiles if c.status != "outside"] == ["[0/0]"]
    assert {s.why for s in trace.symbols} == {"profile"}
    assert "PGO profile" in dynamic.sentence and "TORCH_COMPILE_JOB_ID" in dynamic.sentence
    assert dynamic.recommended == run1.recommended


def test_run3_given_the_recommendation_compiles_once_with_dim_1_static() -> None:
    trace = _trace(PGO / "run3")
    dynamic = trace.dynamic
    assert dynamic is not None
    assert dynamic.configured == _recommended_by_scenario()
    assert dynamic.sources == [] and dynamic.recommended is None
    assert [c.id for c in trace.compiles if c.status != "outside"] == ["[0/0]"]
    assert sorted(s.source or "" for s in trace.symbols) == ["L['k']", "L['x'].size()[0]"]
    assert {s.why for s in trace.symbols} == {"configured"}


def test_recompiles_dynamic_whole_sources_marked_dims_and_shared_names() -> None:
    trace = _trace(CORPUS / "recompiles_dynamic")
    dynamic = trace.dynamic
    assert dynamic is not None
    by_source = {s.source: s for s in dynamic.sources}
    # x changed its number of dimensions: the whole source, each change with its compile id.
    assert by_source["L['x']"].dims is None and by_source["L['x']"].entries == ["L['x']"]
    assert [c.split()[0] for c in by_source["L['x']"].changed] == ["[0/1]", "[0/2]", "[0/3]"]
    assert "(?, ?) -> (3, 4, 5)" in by_source["L['x']"].changed[2]
    assert by_source["L['k']"].compile_id == "[1/1]" and by_source["L['k']"].function.name == "scaled"  # type: ignore[union-attr]
    assert dynamic.recommended == "L['x'],L['k']"
    # Other functions with an `x` that stayed static: the variable would reach them too.
    assert [f.name for f in by_source["L['x']"].shared_with] == ["scaled", "limited"]
    assert "also names an input of scaled and limited" in dynamic.sentence
    whys = {(s.compile_id, s.symbol): s.why for s in trace.symbols}
    assert whys[("[0/5]", "s77")] == "marked"  # mark_dynamic, over the frame's automatic dynamic
    assert whys[("[0/1]", "s77")] == "automatic" and whys[("[0/6]", "s27")] == "automatic"


def test_sources_the_setting_would_not_help_are_left_out() -> None:
    """specialized: both functions' dim 0 became dynamic, then the code specialised it (a branch on
    the size, a loop over it): no setting helps, the symbols' fixes say what to change.
    graph_breaks_repeated: `___stack0` is Dynamo's name for a value a graph break left."""
    specialized = _trace(CORPUS / "specialized").dynamic
    assert specialized is not None and specialized.recommended is None
    assert [(s.function.name, s.left_out) for s in specialized.sources] == [  # type: ignore[union-attr]
        ("pick", "specialised"),
        ("looped", "specialised"),
    ]
    assert "TORCH_COMPILE_DYNAMIC_SOURCES would not help: x dim 0 of pick, x dim 0 of looped" in specialized.sentence
    breaks = _trace(CORPUS / "graph_breaks_repeated").dynamic
    assert breaks is not None
    internal = [s.source for s in breaks.sources if s.left_out == "internal"]
    assert internal == ["L['___stack0']"] and "___stack0" not in (breaks.recommended or "")
    assert breaks.recommended == "L['x'],L['t']"


def test_maybe_mark_dynamic_dynamic_true_and_export_dims_are_said(capsys: pytest.CaptureFixture[str]) -> None:
    """Format 1.32: corpus marked_dynamic's [0/1] was called on a tensor marked with
    maybe_mark_dynamic (its guards say which dimension: `_dynamo_weak_dynamic_indices`), and
    dynamic_true's only compile ran under `torch.compile(dynamic=True)` (its metrics record logs
    `assume_static_by_default` off): neither was null any more. mark_dynamic stays `marked`."""
    marked = {(s.compile_id, s.source): s.why for s in _trace(CORPUS / "marked_dynamic").symbols}
    assert marked == {("[0/0]", "L['x'].size()[0]"): "marked", ("[0/1]", "L['x'].size()[0]"): "maybe_marked"}
    every = _trace(CORPUS / "dynamic_true")
    assert {(s.source, s.why) for s in every.symbols} == {
        ("L['x'].size()[0]", "all_dynamic"),
        ("L['x'].size()[1]", "all_dynamic"),
    }
    assert [e.id for e in every.compiles if e.status != "outside"] == ["[0/0]"]  # no recompile
    assert every.dynamic is None  # nothing torch did on its own: no setting to recommend
    log = next((CORPUS / "dynamic_true").glob("*.log.gz"))
    assert cli(["summary", str(log), "--width", "200"]) == 0
    assert "dynamic: dynamic=True" in capsys.readouterr().out
    # A strict torch.export compiles with every size it was not told is static dynamic (its
    # metrics record logs assume_static_by_default off too): its symbol is the call's Dim.
    exported = {(s.compile_id, s.source): s.why for s in _trace(CORPUS / "export_strict").symbols if s.source}
    assert exported == {("[0/0]", "L['flat_args'][0].size()[0]"): "dynamic_shapes"}
    # ... and non-strict export's tracing makes its symbols outside any compile.
    plain = {(s.compile_id, s.source): s.why for s in _trace(CORPUS / "export_failures").symbols if s.source}
    assert plain == {
        (cid, source): "dynamic_shapes"
        for cid, source in [("[-/-]", "L['x'].size()[0]"), ("[-/-]", "L['x'].size()[1]"), ("[-/-]", "L['y'].size()[0]")]
    }  # Spec's Dim("b"); MatMul's Dim("k") and Dim("k2")


def test_guards_name_the_dimensions_maybe_mark_dynamic_marked() -> None:
    """The guard torch adds for an input marked with maybe_mark_dynamic, read for its source and
    dimensions; a guard saying an input is not marked, and hostile text, give nothing."""
    fold = DynamicFold()
    weak = "getattr(L['self'].w, '_dynamo_weak_dynamic_indices', set()).issubset({0, 2})"
    fold.guards(f"| +- DIMENSION_DYNAMIC_MARKING_GUARD: (({weak}) if hasattr(...) else True)", "[1/0]")
    fold.guards("hasattr(L['x'], '_dynamo_weak_dynamic_indices') == False", "[2/0]")
    fold.guards("getattr(" + "x" * 100_000 + ", '_dynamo_weak_dynamic_indices', set()).issubset({", "[3/0]")
    assert fold.weak == {("[1/0]", "L['self'].w"): {0, 2}}


def test_a_log_with_nothing_dynamic_has_none() -> None:
    assert _trace(CORPUS / "simple").dynamic is None


def test_summary_and_report_say_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((PGO / "run1").glob("*.log.gz"))
    assert cli(["summary", str(log), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["dynamic"]["recommended"] == _recommended_by_scenario()
    assert cli(["summary", str(log), "--width", "200"]) == 0
    assert "Why dynamic? torch made 2 inputs dynamic" in capsys.readouterr().out
    assert cli([str(log), "-o", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "index.html").read_text()
    assert '<h3 id="why-dynamic">' in page
    assert "TORCH_COMPILE_DYNAMIC_SOURCES=&#34;L[&#39;x&#39;]:0,L[&#39;k&#39;]&#34;" in page  # escaped
    written = json.loads((tmp_path / "out" / "compiles.json").read_text())
    assert written["format_minor"] >= 29 and written["dynamic"]["sources"][0]["entries"] == ["L['x']:0"]


def test_entries_and_matching_as_torch_reads_them() -> None:
    assert _entries(" L['x']:0, L['k'],,G['w']:12 ") == [("L['x']", 0), ("L['k']", None), ("G['w']", 12)]
    assert _matches("L['x']", 0, "L['x']", 0) and not _matches("L['x']", 1, "L['x']", 0)
    assert _matches(r"L\['x.*'\]", None, "L['xs']", 2)  # a regex, as torch's re.match
    assert not _matches("([", None, "L['x']", 0)  # a bad pattern matches nothing, never raises


def test_hostile_values_are_kept_or_dropped_never_raised() -> None:
    assert _dynamic_sources("{not json") == (None, False)
    assert _dynamic_sources('["a list"]') == (None, False)
    assert _dynamic_sources('{"dynamic_sources": 3}') == (None, True)
    assert _dynamic_sources('{"dynamic_sources": ""}') == (None, True)
    assert _dynamic_sources('{"dynamic_sources": "L[\'x\']"}') == ("L['x']", True)
    assert _read_profile("garbage\n  L['x']: tensor size=[?]\n::::\n", None) == {}
    profile = _read_profile("f.py:3:g:\n  L['x']: tensor size=[?, 8, ?] stride=[]\n  L['n']: scalar 4\n", "[0/0]")
    assert [(k.source, k.dims) for k in profile[("f.py", 3, "g")]] == [("L['x']", [0, 2])]
    fold = DynamicFold()
    fold.chromium("automatic_dynamic", {"name": 5, "dim_changed": 0}, "[0/1]")
    fold.chromium("automatic_dynamic", "not a dict", "[0/1]")
    fold.chromium("automatic_dynamic", {"name": "L['y']", "dim_changed": {"a": 1}}, None)
    fold.metrics('{"dynamic_sources": "(["}')
    assert fold.configured == "(["
    result = fold.result()
    assert result is not None and result.sources == []  # a source with no dimension said is not one


def test_diff_says_why_the_sides_are_dynamic_differently(capsys: pytest.CaptureFixture[str]) -> None:
    """run1 recompiled to learn, run2 read the profile run1 wrote, run3 was told the value: the
    graphs differ in which sizes are symbols, and diff says why (informative lines)."""
    logs = {run: str(next((PGO / run).glob("*.log.gz"))) for run in ("run1", "run2", "run3")}
    cli(["diff", logs["run1"], logs["run2"], "--json"])
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["dynamic"] == [
        "B read a PGO profile (get_local_code_state, key tlscope-pgo:None:), A none: it made x dim 0, k dynamic "
        "from B's first compile (the one A wrote)",
        "A made x dim 0, k ([0/1]) dynamic by recompiling (automatic dynamic shapes), B did not",
    ]
    cli(["diff", logs["run1"], logs["run3"]])
    out = capsys.readouterr().out
    assert f"config differs: compiler dynamic_sources: '' -> \"{_recommended_by_scenario()}\"" in out
    assert "config differs: compiler job_id: 'tlscope-pgo' -> None" in out
    assert "why dynamic differs: A made x dim 0, k ([0/1]) dynamic by recompiling" in out
    cli(["diff", logs["run1"], logs["run1"]])
    assert "why dynamic differs" not in capsys.readouterr().out


def test_dynamic_false_recompiles_name_the_setting_that_overrides_it() -> None:
    """dynamic_false run1: compiled with dynamic=False, each new size recompiled with it static;
    each size recompile's fix names the setting that overrides dynamic=False (and not dynamic=False
    itself, which the run already used). run2 was given that setting: one dynamic compile."""
    setting = re.search(r'^SETTING = "(.*)"$', (SCENARIO.parent / "dynamic_false.py").read_text(), re.M)
    assert setting is not None
    run1 = _trace(CORPUS / "dynamic_false" / "run1")
    fixes = [c.recompile.fix for c in run1.recompiles if c.recompile is not None]
    assert len(fixes) == 3 and all(f is not None for f in fixes)
    for fix in fixes:
        assert fix is not None and fix.kind == "mark_dynamic"
        assert f'TORCH_COMPILE_DYNAMIC_SOURCES="{setting[1]}" (it overrides dynamic=False)' in fix.why
        assert "dynamic=False) keeps" not in fix.why
    assert run1.dynamic is None  # torch made nothing dynamic on its own
    run2 = _trace(CORPUS / "dynamic_false" / "run2")
    assert [c.id for c in run2.compiles if c.status != "outside"] == ["[0/0]"]
    assert [(s.source, s.why) for s in run2.symbols] == [("L['x'].size()[0]", "configured")]
    assert run2.dynamic is not None and run2.dynamic.configured == setting[1]


def _envelope(body: dict[str, Any], payload: object) -> str:
    head = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0, "has_payload": "0" * 32}
    text = json.dumps(payload, indent=0)
    return f"V1128 09:08:27.920000 1952 torch/_dynamo/utils.py:2389] {json.dumps({**head, **body})}\n" + "".join(
        f"\t{line}\n" for line in text.splitlines()
    )


def test_hostile_chromium_events_are_read_safely(tmp_path: Path) -> None:
    """Names that are no text (a list: fuzz seed 20251123 input 268 raised TypeError in the
    compile fold), huge values and sources: kept bounded or left out, never raised."""
    huge = "9" * 100_000
    events = [
        {"name": ["automatic_dynamic"], "ts": 1, "ph": "i", "args": {}},
        {"name": {"a": 1}, "ts": 2, "ph": "B", "args": {}},
        {
            "name": "automatic_dynamic",
            "ts": 3,
            "ph": "i",
            "args": {"name": "L['x']", "dim_changed": 0, "cached": huge, "new": "5", "compile_id": "0/1"},
        },
        {
            "name": "automatic_dynamic",
            "ts": 4,
            "ph": "i",
            "args": {"name": "L['" + "y" * 5000 + "']", "dim_changed": 1, "compile_id": "0/1"},
        },
        {"name": "pgo.get_local_code_state", "ts": 5, "ph": "E", "args": {"cache_key": ["not text"]}},
    ]
    log = tmp_path / "hostile.log"
    # The compile made x's dim 0 a symbol (since 1.48 a dimension no compile made dynamic is not said).
    symbol = {"symbol": "s0", "val": "5", "vr": "[2, int_oo]", "source": "L['x'].size()[0]"}
    head = {"frame_id": 0, "frame_compile_id": 1, "attempt": 0, "create_symbol": symbol}
    created = f"V1128 09:08:27.910000 1952 torch/fx/experimental/symbolic_shapes.py:1] {json.dumps(head)}\n"
    log.write_text(created + "".join(_envelope({}, e) for e in events))
    trace = tlscope.load(log)
    dynamic = trace.dynamic
    assert dynamic is not None and [s.source for s in dynamic.sources] == ["L['x']"]
    (changed,) = dynamic.sources[0].changed
    assert changed.startswith("[0/1] dim 0: 999") and len(changed) < 200 and changed.endswith("… -> 5")


def test_dynamic_lines_name_the_sides_as_told() -> None:
    """`tlscope diff --ranks` names ranks, not A and B (Trace.diff's `sides`)."""
    from tlscope.analyse.dynamic_diff import dynamic_lines

    run1, run2 = _trace(PGO / "run1").dynamic, _trace(PGO / "run2").dynamic
    lines = dynamic_lines(run1, run2, ("rank 0", "rank 1"))
    assert lines[0].startswith("rank 1 read a PGO profile") and "(the one rank 0 wrote)" in lines[0]
    assert lines[1].startswith("rank 0 made x dim 0, k ([0/1]) dynamic by recompiling") and lines[1].endswith(
        "rank 1 did not"
    )
    assert dynamic_lines(None, None) == [] and dynamic_lines(run1, run1) == []


def test_an_older_torch_is_never_told_to_set_the_variable() -> None:
    """tlparse's multi_rank_logs come from a torch whose configs do not list dynamic_sources: its
    kept-static size recompiles' fixes say mark_dynamic and what happens left alone, not a
    setting that torch does not have; corpus dynamic_false (torch 2.13) names it."""
    log = require_shared() / "inputs" / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log"
    fixes = [c.recompile.fix for c in tlscope.load(log).recompiles if c.recompile is not None and c.recompile.fix]
    assert fixes and all(f is not None and "kept it static" in f.why for f in fixes)
    assert not any(f is not None and "TORCH_COMPILE_DYNAMIC_SOURCES" in f.why for f in fixes)
    assert all(f is not None and "Left as it is, each new size is one more compile" in f.why for f in fixes)


def test_a_dimension_no_compile_made_a_symbol_of_is_not_asked_for() -> None:
    """Format 1.48, corpus decode: the first decode step's input is one token long, and torch
    logged x's dim 1 (7 -> 1) as made dynamic; every compile specialises size 1, so no compile made
    a symbol of it and asking for it (1.47 recommended `L['x']:1`) changes nothing. The caches'
    dim 1, symbols from [0/1] on, stay."""
    dynamic = tlscope.load(CORPUS / "decode").dynamic
    assert dynamic is not None and [s.source for s in dynamic.sources] == ["L['cache_k']", "L['cache_v']"]
    assert dynamic.recommended == "L['cache_k']:1,L['cache_v']:1" and "7 -> 1" not in dynamic.sentence
