"""The run's first answers (analyse/headline.py): each compiles.json's own words, cut to a line,
at the user's line when the log gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CORPUS, REPO

from tlscope.analyse.headline import CUT, SLOW_S, FirstAnswers, answer_changes, first_answers, slow_label
from tlscope.cli import main
from tlscope.format.compiles import (
    CacheOutcome,
    CompileEntry,
    DistinctGraphBreak,
    Failure,
    FirstAnswer,
    Fix,
    MetricsRecord,
    PayloadRef,
    Phase,
    Recompile,
    SourceLocation,
    Timing,
)


def headline(
    failed: CompileEntry | None, breaks: list[DistinctGraphBreak], recompiled: CompileEntry | None
) -> list[str]:
    """The answers' lines, each of the kind its place says, about the compile it names."""
    found = first_answers(failed, breaks, recompiled)
    assert all(isinstance(a, FirstAnswer) for a in found)
    return [a.text for a in found]


def _ref() -> PayloadRef:
    return PayloadRef(kind="artifact", log_line=1)


def _entry(cid: str, **fields: object) -> CompileEntry:
    fields.setdefault("status", "ok")
    fields.setdefault("frame_compile", cid)
    return CompileEntry(id=cid, dir="d", **fields)  # type: ignore[arg-type]


def test_a_long_reason_is_cut_to_its_first_line_and_a_missing_frame_says_no_place() -> None:
    reason = "x" * (CUT + 40) + "\nsecond line"
    failed = _entry("[1/0]", status="failed", failure=Failure(type="RuntimeError", reason=reason))
    (line,) = headline(failed, [], None)
    assert line == f"first failure: [1/0] failed: RuntimeError: {'x' * (CUT - 1)}…"
    assert [(a.kind, a.compile_id) for a in first_answers(failed, [], None)] == [("failure", "[1/0]")]


def test_a_failure_a_later_compile_of_its_id_got_past_is_still_the_first_failure() -> None:
    """After torch._dynamo.reset() an id can hold a failed compile and then a good one: the entry's
    status is the good one's and its failure the first's (corpus compile_failure's [0/0], whose
    backend failed once: with suppress_errors the frame ran in eager until then). The failure is
    still the run's first, said with what the later compile did; a run whose entries hold no
    failure says none."""
    recovered = _entry("[0/0]", status="graph_break", failure=Failure(type="BackendCompilerFailed", reason="boom"))
    failed = _entry("[1/0]", status="failed", failure=Failure(type="RuntimeError", reason="late"))
    found = FirstAnswers([recovered, failed]).answers([])
    assert [(a.kind, a.compile_id, a.text) for a in found] == [
        (
            "failure",
            "[0/0]",
            "first failure: [0/0] failed: BackendCompilerFailed: boom; a later compile numbered [0/0] "
            "ended with a graph break (ids are numbered again after torch._dynamo.reset())",
        )
    ]
    assert FirstAnswers([_entry("[0/0]"), _entry("[1/0]", status="failed")]).answers([]) == []


def test_a_failure_with_no_line_of_the_user_names_where_its_function_is() -> None:
    """A backend's failure (InductorError, BackendCompilerFailed) logs no user line: the line says
    where the failed function is defined, as the slowest compile's does; with a line, that line."""
    fn = SourceLocation(file="/p/train.py", line=4, name="step")
    failure = Failure(type="InductorError", reason="InvalidCxxCompiler: no compiler")
    failed = _entry("[0/0]", status="failed", function=fn, failure=failure)
    (line,) = headline(failed, [], None)
    assert line == "first failure: [0/0] step (train.py:4) failed: InductorError: InvalidCxxCompiler: no compiler"
    at = SourceLocation(file="/p/train.py", line=9, name="step", code="y = x.item()")
    failure = Failure(type="Unsupported", reason="boom", user_frame=at)
    (line,) = headline(_entry("[0/0]", status="failed", function=fn, failure=failure), [], None)
    assert line == "first failure: [0/0] step failed at train.py:9 (`y = x.item()`): Unsupported: boom"


def test_a_failure_at_the_recompile_limit_says_what_filled_it() -> None:
    """A frame that recompiled on every call (a module's int counter) fails at the recompile
    limit: the failure says how many times it compiled and why it recompiled, the causes ranked
    (the refused compile and restarted attempts are not compiles; other frames not counted)."""
    from tlscope.format.compiles import GuardFailure, RecommendedFailure

    def recompiled(cid: str, why: str) -> CompileEntry:
        failure = GuardFailure(cache_entry="[0/0]", guard="g", kind="value", explanation=why)
        recommended = RecommendedFailure(index=0, why="w")
        return _entry(cid, recompile=Recompile(guard_failures=[failure], recommended=recommended))

    fn = SourceLocation(file="/p/m.py", line=8, name="forward")
    limit = Failure(type="Unsupported", reason="Dynamo recompile limit exceeded")
    entries = [
        _entry("[0/0]", function=fn),
        *(recompiled(f"[0/{n}]", f"self.step changed: {n - 1} -> {n}") for n in range(1, 6)),
        recompiled("[0/6]", "x has 2 dimensions; the entry was compiled for 1"),
        recompiled("[0/7]", "dtype of x changed: Float -> Double"),
        _entry("[0/7_1]", frame_compile="[0/7]"),
        recompiled("[1/1]", "y changed: 1 -> 2"),
        _entry("[0/8]", status="failed", function=fn, failure=limit),
    ]
    (failure,) = [a for a in FirstAnswers(entries).answers([]) if a.kind == "failure"]
    assert failure.text == (
        "first failure: [0/8] forward (m.py:8) failed: Unsupported: Dynamo recompile limit exceeded; forward had "
        "compiled 8 times: 5 recompiles because self.step changed, 1 because x has 2 dimensions, 1 for other reasons"
    )
    # Another failure says nothing of the frame's recompiles.
    other = _entry("[0/8]", status="failed", function=fn, failure=Failure(type="E", reason="boom"))
    (failure,) = [a for a in FirstAnswers([*entries[:-1], other]).answers([]) if a.kind == "failure"]
    assert failure.text == "first failure: [0/8] forward (m.py:8) failed: E: boom"


def test_the_break_met_most_often_the_first_among_equals() -> None:
    at = SourceLocation(file="/p/train.py", line=9, name="step", code="  print(x)  ")
    breaks = [
        DistinctGraphBreak(reason="one", user_frame=at, count=2, compile_ids=["[0/0]", "[1/0]"]),
        DistinctGraphBreak(reason="two", user_frame=at, count=3, compile_ids=["[2/0]"]),
        DistinctGraphBreak(reason="three", user_frame=at, count=3, compile_ids=["[3/0]"]),
    ]
    assert headline(None, breaks, None) == [
        "most frequent graph break (3 times in 1 compile; 1 other as often): two at train.py:9 (`print(x)`)"
    ]
    # Alone at the top, or the only break, it is the most frequent: no equals to say.
    assert headline(None, breaks[:2], None)[0].startswith("most frequent graph break (3 times in 1 compile): two")
    assert headline(None, breaks[:1], None)[0].startswith("most frequent graph break (2 times in 2 compiles): one")
    # Every break met once: the line names the first, and how many others were met as often.
    once = [DistinctGraphBreak(reason=r, user_frame=at, count=1, compile_ids=["[0/0]"]) for r in ("a", "b", "c")]
    said = headline(None, once, None)[0]
    assert said.startswith("most frequent graph break (1 time in 1 compile; 2 others as often): a")
    # The compile to open: the first the break stopped; none for a break of no compile id.
    assert [(a.kind, a.compile_id) for a in first_answers(None, breaks, None)] == [("graph_break", "[2/0]")]
    breaks[1].compile_ids.clear()
    assert first_answers(None, breaks, None)[0].compile_id is None


def test_a_recompile_without_a_reason_or_a_place_for_its_fix() -> None:
    fix = Fix(kind="mark_dynamic", input="x", source="L['x']", dim=0, code="torch._dynamo.mark_dynamic(x, 0)", why="w")
    recompiled = _entry("[0/1]", function=SourceLocation(name="fn"), recompile=Recompile(fix=fix))
    assert headline(None, [], recompiled) == [
        "first recompile: [0/1] fn: no reason logged; fix: torch._dynamo.mark_dynamic(x, 0)"
    ]
    assert [(a.kind, a.compile_id) for a in first_answers(None, [], recompiled)] == [("recompile", "[0/1]")]
    assert headline(None, [], None) == []


def test_two_runs_first_answers_compared_a_line_a_kind() -> None:
    """A failure fixed, a break that moved, a recompile alike: the diff says the first two."""
    a = [
        FirstAnswer(kind="failure", compile_id="[0/0]", text="first failure: [0/0] f failed: Unsupported: x"),
        FirstAnswer(kind="graph_break", compile_id="[1/0]", text="most frequent graph break (2 times in 1 compile): y"),
        FirstAnswer(kind="recompile", compile_id="[0/1]", text="first recompile: [0/1] f: size changed"),
    ]
    b = [
        FirstAnswer(
            kind="graph_break", compile_id="[1/0]", text="most frequent graph break (3 times in 2 compiles): z"
        ),
        a[2],
    ]
    assert answer_changes(a, b) == [
        "first failure only in A: [0/0] f failed: Unsupported: x",
        "most frequent graph break differs: in A (2 times in 1 compile): y; in B (3 times in 2 compiles): z",
    ]
    assert answer_changes(b, a, ("rank 0", "rank 1")) == [
        "first failure only on rank 1: [0/0] f failed: Unsupported: x",
        "most frequent graph break differs: on rank 0 (3 times in 2 compiles): z; on rank 1 (2 times in 1 compile): y",
    ]
    assert answer_changes(a, a) == []


def test_the_diff_says_the_runs_first_answers_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """corpus failures against recompiles_dynamic: `tlscope diff` says first how their first
    answers differ (each side's compiles.json's), --json as `summary.first_answers`."""
    outs = []
    for name in ("failures", "recompiles_dynamic"):
        outs.append(tmp_path / name)
        assert main([str(REPO / "corpus" / "traces" / name), "-o", str(outs[-1]), "--no-browser"]) == 0
    said = [json.loads((out / "compiles.json").read_text())["first_answers"] for out in outs]
    capsys.readouterr()
    assert main(["diff", str(outs[0]), str(outs[1])]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "What differs:"
    failure = [a["text"].removeprefix("first failure") for a in (said[0][0], said[1][0])]
    assert lines[1] == f"  first failure differs: in A{failure[0]}; in B{failure[1]}"
    recompile = next(a["text"] for a in said[1] if a["kind"] == "recompile")
    assert lines[2] == f"  first recompile only in B{recompile.removeprefix('first recompile')}"
    # Both say a slowest compile, of other functions: the diff's compile times compare them, not
    # these lines (no two runs take the same time).
    assert all(any(a["kind"] == "slow_compile" for a in side) for side in said)
    assert not any("most compile time" in line for line in lines)
    assert main(["diff", str(outs[0]), str(outs[1]), "--json"]) == 1
    assert [f"  {x}" for x in json.loads(capsys.readouterr().out)["summary"]["first_answers"]] == lines[1:3]


def _timed(cid: str, seconds: float, *, backward: float = 0.0, **fields: object) -> CompileEntry:
    """A compile whose `dynamo` span took `seconds`, its backward `backward` more."""
    records = [MetricsRecord(kind="bwd_compilation_metrics", log_line=1, status="ok", time_s=backward)]
    fields.setdefault("function", SourceLocation(name="fn"))
    return _entry(
        cid,
        time=Timing(duration_s=seconds),
        metrics_records=records if backward else [],
        **fields,
    )


def test_the_slowest_compile_from_a_second_on_the_first_among_equals() -> None:
    """A compile is an answer from SLOW_S on; the first of two equally slow ones; the run's
    other compiles are what it is said against."""
    quick = FirstAnswers([_timed("[0/0]", SLOW_S - 0.01), _timed("[1/0]", 0.5)])
    assert quick.answers([]) == []
    runs = FirstAnswers([_timed("[0/0]", 0.5), _timed("[1/0]", 2.0), _timed("[2/0]", 2.0)])
    (answer,) = runs.answers([])
    assert (answer.kind, answer.compile_id) == ("slow_compile", "[1/0]")
    assert answer.text == "most compile time: [1/0] fn took 2.00 s of 4.50 s in 3 compiles (44 %)"
    (alone,) = FirstAnswers([_timed("[0/0]", 3.0)]).answers([])
    assert alone.text == "most compile time: [0/0] fn took 3.00 s, the run's only timed compile"


def test_the_slowest_compile_counts_its_backward_and_says_where_its_time_went() -> None:
    """The backward, compiled after the span, is the compile's time too; the phases' chain is
    named innermost in the pipeline's order though the backward made code_gen outgrow
    create_aot_dispatcher_function (which holds it in the forward); a cache that missed or
    was bypassed is said."""
    phases = {
        "dynamo": 10.0,
        "backend_compile": 9.8,
        "create_aot_dispatcher_function": 9.7,
        "inductor_compile": 12.0,
        "code_gen": 11.0,
        "compile_file": 4.0,
        "bytecode_tracing": 0.1,
    }
    cache = [
        CacheOutcome(cache="fx_graph", outcome="miss", event=_ref()),
        CacheOutcome(cache="aotautograd", outcome="bypass", reason="Won't cache\nsecond line", event=_ref()),
        CacheOutcome(cache="fx_graph", outcome="miss", event=_ref()),
    ]
    entry = _timed(
        "[0/0]",
        10.0,
        backward=2.5,
        phases=[Phase(name=n, seconds=s, count=1) for n, s in phases.items()],
        cache=cache,
    )
    (answer,) = FirstAnswers([entry, _timed("[1/0]", 1.5)]).answers([])
    assert answer.text == (
        "most compile time: [0/0] fn took 12.50 s (2.50 s of it its backward) of 14.00 s in 2 compiles (89 %), "
        "in code_gen (11.00 s of inductor_compile's 12.00 s), Inductor code generation; "
        "its fx_graph cache missed; its aotautograd cache was bypassed: Won't cache"
    )


def test_caches_that_missed_some_lookups_say_how_many() -> None:
    """A compile id numbered again after torch._dynamo.reset() holds both compiles' lookups: the
    first's misses, the second's hits (corpus-like: inductor's FX graph cache warm the second
    time). "its fx_graph cache missed" alone said the second compile missed too."""
    from tlscope.analyse.headline import _caches

    def lookups(*pairs: tuple[str, str]) -> CompileEntry:
        cache = [CacheOutcome(cache=c, outcome=o, event=_ref()) for c, o in pairs]
        return _timed("[0/0]", 4.0, cache=cache)

    reset = lookups(("aotautograd", "miss"), ("fx_graph", "miss"), ("aotautograd", "miss"), ("fx_graph", "hit"))
    assert _caches(reset) == "; its aotautograd cache missed; its fx_graph cache missed 1 of 2 lookups"
    both = lookups(("aotautograd", "miss"), ("fx_graph", "miss"), ("aotautograd", "hit"), ("fx_graph", "hit"))
    assert _caches(both) == "; its aotautograd and fx_graph caches missed 1 of 2 lookups each"
    assert _caches(lookups(("fx_graph", "hit"))) == ""
    # Every lookup missed, however many (a training compile's forward and backward graphs): together.
    cold = lookups(("aotautograd", "miss"), ("fx_graph", "miss"), ("fx_graph", "miss"))
    assert _caches(cold) == "; its aotautograd and fx_graph caches missed"


def test_a_diff_leaves_the_slowest_compiles_to_its_compile_times() -> None:
    """No two runs take the same time: two slowest compiles, alike or not, are no line of the
    first answers' comparison (the diff's Compile time section compares them compile by compile)."""
    a = [FirstAnswer(kind="slow_compile", compile_id="[0/0]", text="most compile time: [0/0] f took 2.00 s")]
    b = [FirstAnswer(kind="slow_compile", compile_id="[1/0]", text="most compile time: [1/0] g took 9.00 s")]
    assert answer_changes(a, b) == [] and answer_changes(a, []) == []


def test_the_slowest_compile_at_the_users_line() -> None:
    """Its function where the user's code defines it; a torch wrapper (another file than the
    user's line that reached it) said by that line instead: `called from`."""
    own = SourceLocation(name="step", file="/p/train.py", line=12)
    entry = _timed("[0/0]", 2.0, function=own, user_frame=SourceLocation(name="main", file="/p/train.py", line=30))
    (answer,) = FirstAnswers([entry]).answers([])
    assert answer.text.startswith("most compile time: [0/0] step (train.py:12) took 2.00 s")
    wrapper = SourceLocation(name="inner", file="/torch/_dynamo/external_utils.py", line=67)
    entry = _timed("[0/0]", 2.0, function=wrapper, user_frame=SourceLocation(name="main", file="/p/train.py", line=30))
    (answer,) = FirstAnswers([entry]).answers([])
    assert answer.text.startswith("most compile time: [0/0] inner (called from train.py:30) took 2.00 s")
    assert slow_label(answer) == "[0/0] inner (called from train.py:30)"


def test_a_log_that_ends_inside_a_compile_says_where() -> None:
    """Format 1.48, corpus killed: a backend that sends its own process SIGKILL (the out-of-memory
    killer) leaves the log ending inside the compile, with no metrics record. The compile keeps the
    phases begun and never ended, and the run's first answer says where the log ends and what that
    means (1.47 said only `1 without metrics`)."""
    import tlscope

    trace = tlscope.load(CORPUS / "killed")
    (entry,) = [c for c in trace.compiles if c.status != "outside"]
    assert entry.status == "metrics_missing" and entry.unfinished == ["dynamo", "compile_attempt", "backend_compile"]
    (answer,) = trace.first_answers
    assert (answer.kind, answer.compile_id) == ("unfinished", "[0/0]")
    assert answer.text.startswith("unfinished: the log ends inside [0/0] step (killed.py:")
    assert ", in backend_compile, the backend" in answer.text and "the log was cut" in answer.text


def test_a_log_cut_inside_inductor_says_the_pass_it_was_in(tmp_path: Path) -> None:
    """The corpus's simple log cut after its 300th line, inside Inductor's pre-grad passes: the
    compile the log ends inside is `unfinished` there; the same compile's full log says nothing of
    the kind (its spans all ended, its metrics were logged)."""
    import gzip

    import tlscope

    log = next((CORPUS / "simple").glob("*.log.gz"))
    lines = gzip.decompress(log.read_bytes()).decode().splitlines(keepends=True)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[:300]))
    answers = tlscope.load(cut).first_answers
    assert [a.kind for a in answers] == ["unfinished"]
    assert ", in _recursive_pre_grad_passes, Inductor pre-grad passes:" in answers[0].text
    whole = tlscope.load(log)
    assert all(not isinstance(c.unfinished, list) for c in whole.compiles)
    assert "unfinished" not in [a.kind for a in whole.first_answers]


def test_only_the_compile_the_log_ends_inside_is_said_unfinished() -> None:
    """A compile without metrics whose lines another compile's follow did not end the log: the
    answer is only for the compile whose lines are the log's last."""
    from tlscope.analyse.headline import FirstAnswers
    from tlscope.format.compiles import CompileEntry

    first = CompileEntry(id="[0/0]", dir="d", status="metrics_missing", frame_compile="[0/0]", log_lines=[1, 40])
    first.unfinished = ["dynamo"]
    later = CompileEntry(id="[1/0]", dir="e", status="ok", frame_compile="[1/0]", log_lines=[41, 90])
    assert [a.kind for a in FirstAnswers([first, later]).answers([])] == []
    assert [a.kind for a in FirstAnswers([later, first]).answers([])] == []  # compile order is not log order
    last = CompileEntry(id="[1/0]", dir="e", status="metrics_missing", frame_compile="[1/0]", log_lines=[41, 90])
    last.unfinished = ["dynamo", "compile_attempt"]
    (said,) = FirstAnswers([first, last]).answers([])
    assert (said.kind, said.compile_id) == ("unfinished", "[1/0]") and ", in compile_attempt, one attempt" in said.text


def test_a_huge_logged_time_says_its_share_without_overflow() -> None:
    """Fuzz seed 20251123 input 944 (a tlparse trace whose `entire_frame_compile_time_s` was made
    1e308): 100 times that is inf, which `round` refused (OverflowError); the share is a ratio first."""
    from tlscope.format.compiles import CompileEntry, Timing

    huge = CompileEntry(id="[0/0]", dir="a", status="ok", frame_compile="[0/0]", time=Timing(duration_s=1e308))
    small = CompileEntry(id="[1/0]", dir="b", status="ok", frame_compile="[1/0]", time=Timing(duration_s=0.5))
    (slow,) = [a for a in FirstAnswers([huge, small]).answers([]) if a.kind == "slow_compile"]
    assert slow.compile_id == "[0/0]" and "(100 %)" in slow.text


def test_a_failed_frame_s_callees_compiled_on_their_own_are_said() -> None:
    """Corpus loop_break (format 1.49): Block's forward loop breaks in a loop, so Dynamo skips the
    frame and falls back to eager; the Block.forward it calls then compiles as a frame of its own,
    which the failure's line says (before, the line read as if nothing compiled)."""
    import tlscope

    (failure,) = [a for a in tlscope.load(CORPUS / "loop_break").first_answers if a.kind == "failure"]
    assert failure.text.endswith(
        "as graph breaks in loops are not supported; the functions it calls then compiled as frames of their "
        "own: [1/0] Block.forward"
    )


def test_callees_are_those_whose_stack_passes_through_the_failed_function() -> None:
    """Each function once (its first compile), two named and more counted; a compile whose stack
    does not pass through the failed function, a failed one, or another attempt is none."""
    model = SourceLocation(file="/p/m.py", line=10, name="forward")
    call = SourceLocation(file="/p/m.py", line=12, name="forward")
    failed = _entry("[0/0]", status="failed", failure=Failure(type="Unsupported", reason="loop."), function=model)

    def callee(cid: str, name: str, through: bool = True, **fields: object) -> CompileEntry:
        own = SourceLocation(file="/p/m.py", line=3, name=name)
        stack = [SourceLocation(file="/p/t.py", line=1, name="<module>"), *([call] if through else []), own]
        return _entry(cid, function=own, stack=stack, **fields)

    entries = [
        failed,
        callee("[1/0]", "a"),
        callee("[1/1]", "a"),
        callee("[2/0]", "b", through=False),
        callee("[3/0]", "c", status="failed"),
        callee("[4/0]", "d"),
    ]
    (line,) = [a.text for a in FirstAnswers(entries).answers([])]
    assert line.endswith("loop; the functions it calls then compiled as frames of their own: [1/0] a, [4/0] d")
    entries.append(callee("[5/0]", "e"))
    (line,) = [a.text for a in FirstAnswers(entries).answers([])]
    assert line.endswith(": [1/0] a, [4/0] d and more")
    (line,) = [a.text for a in FirstAnswers([failed, callee("[2/0]", "b", through=False)]).answers([])]
    assert line == "first failure: [0/0] forward (m.py:10) failed: Unsupported: loop."
