"""Why a straggler is slow (format 1.35): ranks.json's `stragglers.ranks[].why`, decided once in
Python (analyse/ranks/straggler_why.py) and said by `tlscope JOB`, `summary`, the landing page and
the explorer's Ranks view (tests/test_ranks_view_browser.py).

The job: corpus ranks_same_4 scaled to 8 ranks by corpus/scale.py with one straggler (its times
3x), checked against each rank's log read here with a small parser of its own."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from helpers import CORPUS

import tlscope
from tlscope.analyse.config_diff import ConfigChange
from tlscope.analyse.ranks.settings_divergence import SettingsMismatch
from tlscope.analyse.ranks.straggler_why import explain_stragglers, why_slower
from tlscope.analyse.ranks.stragglers import Straggler, Stragglers
from tlscope.cli import main as cli
from tlscope.format.compiles import CacheOutcome, CompileEntry, MetricsRecord, PayloadRef, Phase, SourceLocation

REPO = Path(__file__).resolve().parents[1]
_ENVELOPE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*)$")


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("stragglers")
    logs = root / "logs"
    scale = [str(REPO / "corpus" / "scale.py"), str(CORPUS / "ranks_same_4"), "--ranks", "8", "--stragglers", "1"]
    subprocess.run([sys.executable, *scale, "--seed", "5", "-o", str(logs)], check=True, capture_output=True)
    return logs, root / "out"


def _times(log: Path) -> dict[str, float]:
    """Compile id -> its forward compilation_metrics' entire_frame_compile_time_s, summed."""
    found: dict[str, float] = {}
    for line in log.read_text("utf-8").split("\n"):
        matched = _ENVELOPE.match(line)
        envelope = json.loads(matched[1]) if matched else {}
        metrics = envelope.get("compilation_metrics")
        if isinstance(metrics, dict) and envelope.get("frame_id") is not None:
            cid = f"[{envelope['frame_id']}/{envelope['frame_compile_id']}]"
            found[cid] = found.get(cid, 0.0) + float(metrics.get("entire_frame_compile_time_s") or 0.0)
    return found


def test_the_straggler_is_said_with_where_its_time_went(
    job: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, out = job
    assert cli([str(logs), "-o", str(out), "--no-browser"]) == 0
    stdout = capsys.readouterr().out
    slow = json.loads((out / "ranks.json").read_text())["stragglers"]
    (straggler,) = slow["ranks"]
    rank, median = straggler["rank"], slow["median_rank"]
    by_rank = {int(re.search(r"rank_(\d+)", p.name)[1]): p for p in logs.glob("*.log")}  # type: ignore[index]
    mine, theirs = _times(by_rank[rank]), _times(by_rank[median])
    cid = max(mine, key=lambda c: mine[c] - theirs.get(c, 0.0))
    why = straggler["why"]
    assert why.startswith(f"most in {cid} ")
    assert f": {mine[cid]:.2f} s against rank {median}'s {theirs[cid]:.2f} s" in why
    figures = f"{straggler['compile_time_s']:.2f} s, {straggler['over_median_s']:.2f} s over the median"
    line = f"  rank {rank}: {figures}; {why}"
    assert "Stragglers (compile time above 1.25 times the median rank's" in stdout and f"\n{line}\n" in stdout
    page = (out / "index.html").read_text()
    escaped = html.escape(line.strip(), quote=False).replace("'", "&#39;")  # as Jinja escapes
    assert f"<li>{escaped}</li>" in page.split('<ul id="rank-stragglers">', 1)[1]
    capsys.readouterr()
    assert cli(["summary", str(out), "--width", "1000"]) == 0
    assert line in capsys.readouterr().out
    # Folded from the rank logs, without ranks.json: the same sentence.
    found = tlscope.load(logs).job_view().stragglers
    assert found is not None and [s.why for s in found.ranks] == [why]


def _entry(cid: str, seconds: float, phases: dict[str, float], caches: dict[str, str]) -> CompileEntry:
    ref = PayloadRef(kind="artifact", log_line=1)
    return CompileEntry(
        id=cid,
        dir="-_0_0_0",
        status="ok",
        frame_compile=cid,
        function=SourceLocation(file="/w/train.py", line=3, name="step"),
        phases=[Phase(name=name, seconds=s, count=1) for name, s in phases.items()],
        cache=[CacheOutcome(cache=c, outcome=o, event=ref) for c, o in caches.items()],
        metrics_records=[MetricsRecord(kind="compilation_metrics", log_line=1, status="ok", time_s=seconds)],
    )


def test_the_sentence_names_the_phases_that_grew_and_the_caches_it_missed() -> None:
    mine = [_entry("[0/0]", 9.0, {"dynamo": 9.0, "inductor_compile": 7.5, "build_guards": 0.1}, {"fx_graph": "miss"})]
    theirs = [_entry("[0/0]", 2.0, {"dynamo": 2.0, "inductor_compile": 0.5, "build_guards": 0.1}, {"fx_graph": "hit"})]
    assert why_slower(mine, 4, theirs) == (
        "most in [0/0] step (train.py:3): 9.00 s against rank 4's 2.00 s, in inductor_compile (+7.00 s); "
        "its fx_graph cache missed where rank 4's hit"
    )
    assert (
        why_slower(mine, 4, [])
        == "most in [0/0] step (train.py:3): 9.00 s against none on rank 4, which did not compile it"
    )
    assert why_slower(theirs, 4, mine) is None  # nothing took it longer


def test_nested_phases_are_said_once_at_the_innermost_that_carries_the_excess() -> None:
    """backend_compile holds inductor_compile, which holds code_gen: three names of one excess.
    The sentence names code_gen, with the outermost's excess around it, then a phase elsewhere."""
    nested = {"backend_compile": 8.0, "inductor_compile": 7.6, "code_gen": 6.0, "aot_trace_joint_graph": 1.0}
    base = {"backend_compile": 2.0, "inductor_compile": 1.8, "code_gen": 0.5, "aot_trace_joint_graph": 0.2}
    mine, theirs = [_entry("[0/0]", 9.0, nested, {})], [_entry("[0/0]", 2.5, base, {})]
    assert why_slower(mine, 4, theirs) == (
        "most in [0/0] step (train.py:3): 9.00 s against rank 4's 2.50 s, in code_gen (+5.50 s of "
        "backend_compile's +6.00 s), aot_trace_joint_graph (+0.80 s)"
    )


def test_a_compile_run_under_other_settings_on_the_straggler_says_them() -> None:
    """Rank 3 compiled [0/0] with max_autotune patched on (the job's settings mismatch of that
    compile, format 1.38): its why names the setting; a mismatch the median rank shares, or of
    another compile, is not said."""
    mine = [_entry("[0/0]", 60.0, {"dynamo": 60.0, "autotune": 55.0}, {})]
    theirs = [_entry("[0/0]", 4.0, {"dynamo": 4.0, "autotune": 0.0}, {})]
    change = ConfigChange(section="inductor", key="max_autotune", a="False", b="True")
    mismatch = SettingsMismatch(id="[0/0]", ranks=[3], than=[0, 1, 2], changed=[change], sentence="…")
    found = Stragglers(rule="", factor=1.25, margin_s=1.0, median_compile_time_s=4.0, median_rank=1)
    found.ranks = [Straggler(rank=3, compile_time_s=60.0, over_median_s=56.0, ratio=15.0)]
    lookup = {3: mine, 1: theirs}
    explain_stragglers(found, lookup.get, [mismatch])
    assert found.ranks[0].why == (
        "most in [0/0] step (train.py:3): 60.00 s against rank 1's 4.00 s, in autotune (+55.00 s); "
        "it ran under other settings: inductor max_autotune True (False)"
    )
    # The median rank on the straggler's side, in a third group (its values are not `a`), or another compile.
    shared, elsewhere = msgspec.structs.replace(mismatch, ranks=[1, 3]), msgspec.structs.replace(mismatch, than=[0, 2])
    for other in (shared, elsewhere, msgspec.structs.replace(mismatch, id="[1/0]")):
        explain_stragglers(found, lookup.get, [other])
        assert "other settings" not in (found.ranks[0].why or "")
    # A first compile's settings group (no id) is said by the job's settings list, not here.
    explain_stragglers(found, lookup.get, [msgspec.structs.replace(mismatch, id=msgspec.UNSET)])
    assert "other settings" not in (found.ranks[0].why or "")


def test_a_text_lists_ten_stragglers_and_counts_the_rest() -> None:
    from tlscope.analyse.ranks.stragglers import LISTED, find_stragglers, straggler_lines

    found = find_stragglers([(r, 10.0 if r < 25 else 1.0) for r in range(100)])
    lines = straggler_lines(found)
    assert len(found.ranks) == 25 and len(lines) == LISTED + 1
    assert lines[0] == "rank 0: 10.00 s, 9.00 s over the median" and lines[-1].startswith("… and 15 more")
