"""ranks.json's `divergence.caches` (format 1.36): the compiles whose cache lookups answered
differently on different ranks, compared by function.

The corpus's ranks_same_4 has one: its four ranks (real torch, gloo, one machine, one cache folder)
compiled the same graphs, and rank 1's FX graph cache found two that another rank had just written.
tlparse's multi_rank_logs has none, though tlparse warns of one: its ranks 1 and 3 answered alike on
every compile they share, and only their numbers of compiles differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import parse_job
from markupsafe import escape

from tlscope.analyse.ranks.cache_divergence import KEYS_SAME, WHY, cache_keys, cache_text
from tlscope.analyse.ranks.divergence import Divergence, RankLine, RankOverview, divergence
from tlscope.analyse.ranks.words import NAMED
from tlscope.cli import main as cli
from tlscope.format.compiles import CacheOutcome, CompileEntry, PayloadRef

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"
SAME = CORPUS / "ranks_same_4"
SENTENCE = (
    "[4/0] Mlp.forward (_ranks.py:40): caches answered differently on different ranks: fx_graph (ranks 0, 2, 3: "
    f"6 misses; rank 1: 2 hits and 4 misses); {WHY}; the same keys on ranks 0, 2, 3 and rank 1: {KEYS_SAME}"
)


def _lookups_in_log(job: Path) -> dict[int, list[str]]:
    """Each rank's `fx_graph_cache_*` artifacts, read from its log: what the answer must agree with."""
    import gzip

    found: dict[int, list[str]] = {}
    for log in sorted(job.glob("*.log.gz")):
        rank = int(log.name.split("_rank_")[1].split("_")[0])
        with gzip.open(log, "rt") as f:
            envelopes = [line for line in f if line.startswith(("V", "I", "W", "E"))]
        words = ("fx_graph_cache_hit", "fx_graph_cache_miss")
        found[rank] = [w for line in envelopes for w in words if f'"name": "{w}"' in line]
    return found


def test_the_logs_have_one_rank_whose_fx_graph_cache_hit() -> None:
    logs = _lookups_in_log(SAME)
    assert {rank: lookups.count("fx_graph_cache_hit") for rank, lookups in logs.items()} == {0: 0, 1: 2, 2: 0, 3: 0}


def test_ranks_json_says_which_compile_and_which_cache(tmp_path: Path) -> None:
    found, stdout = parse_job(SAME, tmp_path / "out")
    (mismatch,) = found["divergence"]["caches"]
    assert mismatch["id"] == "[4/0]" and mismatch["caches"] == ["fx_graph"]
    assert [g["ranks"] for g in mismatch["groups"]] == [[0, 2, 3], [1]]
    assert mismatch["groups"][1]["lookups"] == {"aotautograd": {"bypass": 3}, "fx_graph": {"hit": 2, "miss": 4}}
    assert mismatch["sentence"] == SENTENCE and mismatch["same_keys"] is True
    assert f"Caches answered differently on different ranks:\n  {SENTENCE}" in stdout
    page = (tmp_path / "out" / "index.html").read_text()
    assert f'<ul id="rank-caches">\n<li>{escape(SENTENCE)}</li>' in page
    assert '<td>[4/0] <span class="caches-differ">caches differ</span></td>' in page
    # The lookups that decided it are not a fact of the page's machine-readable twin.
    summary = json.loads((tmp_path / "out" / "multi_rank_summary.json").read_text())
    assert all("caches" not in rank["overview"] for rank in summary)


def test_a_rank_whose_cache_was_cold_is_the_straggler_and_the_caches_say_why(tmp_path: Path) -> None:
    """ranks_cold_2: rank 0 compiled from a cache a run before filled, rank 1 from an empty one.
    Both looked up the same keys; rank 0's hit, rank 1's missed, and rank 1 is the straggler."""
    found, stdout = parse_job(CORPUS / "ranks_cold_2", tmp_path / "out")
    (mismatch,) = found["divergence"]["caches"]
    assert mismatch["id"] == "[0/0]" and mismatch["caches"] == ["aotautograd", "fx_graph"]
    assert [(g["ranks"], g["lookups"]) for g in mismatch["groups"]] == [
        ([0], {"aotautograd": {"hit": 1}, "fx_graph": {"hit": 2}}),
        ([1], {"aotautograd": {"miss": 1}, "fx_graph": {"miss": 2}}),
    ]
    assert mismatch["same_keys"] is True
    assert mismatch["sentence"] == (
        "[0/0] step (ranks_cold_2.py:21): caches answered differently on different ranks: aotautograd (rank 0: "
        f"1 hit; rank 1: 1 miss), fx_graph (rank 0: 2 hits; rank 1: 2 misses); {WHY}; the same keys on rank 0 and "
        f"rank 1: {KEYS_SAME}"
    )
    (straggler,) = found["stragglers"]["ranks"]
    assert straggler["rank"] == 1 and straggler["why"].endswith(
        "its aotautograd, fx_graph caches missed where rank 0's hit"
    )
    assert mismatch["sentence"] in stdout


def test_summary_and_the_python_api_say_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["summary", str(SAME), "--width", "400"]) == 0
    out = capsys.readouterr().out
    assert f"Caches answered differently on different ranks:\n  {SENTENCE}" in out
    assert out.index("Caches answered") > out.index("Every rank compiled the same compile ids.")
    import tlscope

    folded = tlscope.load(SAME).divergence
    assert folded is not None and [m.sentence for m in folded.caches] == [SENTENCE]


def test_diff_of_two_ranks_marks_the_pair_the_caches_split(capsys: pytest.CaptureFixture[str]) -> None:
    cli(["diff", str(SAME), "--ranks", "0", "1"])
    lines = capsys.readouterr().out.split("\n")
    at = lines.index("Caches answered differently on different ranks:")
    assert lines[at + 1] == f"  {SENTENCE}   <- rank 0 and rank 1 differ here"
    cli(["diff", str(SAME), "--ranks", "0", "2"])
    assert f"  {SENTENCE}\n" in capsys.readouterr().out


def test_tlparse_warns_of_ranks_that_answered_alike(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse compares each rank's whole string of marks: ranks with more compiles "diverge"."""
    found, stdout = parse_job(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "out")
    assert "Diverging Cache hit/miss patterns detected" in (tmp_path / "out" / "index.html").read_text()
    assert found["divergence"]["caches"] == [] and "Caches answered" not in stdout


def _entry(cid: str, *lookups: str) -> CompileEntry:
    ref = PayloadRef(kind="artifact", log_line=1)
    cache = [CacheOutcome(cache=c, outcome=o, event=ref) for c, o in (x.split() for x in lookups)]
    return CompileEntry(id=cid, dir=cid, status="ok", frame_compile="0/0", cache=cache)


def test_a_compiles_lookups_are_counted_whatever_their_order() -> None:
    one = _entry("[0/0]", "fx_graph miss", "aotautograd miss", "fx_graph hit")
    other = _entry("[0/0]", "fx_graph hit", "aotautograd miss", "fx_graph miss")
    assert cache_text(one) == cache_text(other) == "aotautograd miss 1\nfx_graph hit 1\nfx_graph miss 1"
    assert cache_text(_entry("[0/0]")) == ""


def _rank(
    n: int, caches: dict[str, str], ids: list[str] | None = None, frames: dict[int, str] | None = None
) -> RankOverview:
    cids = ids if ids is not None else sorted(caches)
    return RankOverview(line=RankLine(rank=n), compile_ids=cids, caches=caches, frames=frames or {})


def test_ranks_that_looked_nothing_up_are_not_compared() -> None:
    """A rank that logged no lookup for a compile (it failed first, or ran with caches off) is not
    compared; one cache a rank did not look up is `no lookup` (an AOTAutograd hit looks up no FX graph)."""
    hit = "aotautograd hit 1"
    missed = "aotautograd miss 1\nfx_graph miss 1"
    assert divergence([_rank(0, {"[0/0]": hit}), _rank(1, {}, ["[0/0]"])]).caches == []
    (found,) = divergence([_rank(0, {"[0/0]": missed}), _rank(1, {"[0/0]": hit}), _rank(2, {"[0/0]": missed})]).caches
    assert found.caches == ["aotautograd", "fx_graph"]
    assert found.sentence == (
        "[0/0]: caches answered differently on different ranks: aotautograd (ranks 0, 2: 1 miss; rank 1: 1 hit), "
        f"fx_graph (ranks 0, 2: 1 miss; rank 1: no lookup); {WHY}"
    )


def test_a_bypass_is_no_miss() -> None:
    """Without a hit against a miss, the sentence does not say that a rank compiled what a hit loads."""
    ranks = [_rank(0, {"[0/0]": "fx_graph bypass 1"}), _rank(1, {"[0/0]": "fx_graph miss 1"})]
    (found,) = divergence(ranks).caches
    said = "fx_graph (rank 0: 1 bypass; rank 1: 1 miss)"
    assert found.sentence == f"[0/0]: caches answered differently on different ranks: {said}"


def test_compiles_are_compared_by_function_and_said_in_compile_order() -> None:
    """Rank 0 compiled `log_stats` first: its [2/0] is the others' [1/0], and matched by function."""
    frames = {0: "head (a.py:1)", 1: "body (a.py:5)"}
    shifted = {0: "head (a.py:1)", 1: "log_stats (a.py:9)", 2: "body (a.py:5)"}
    ranks = [
        _rank(0, {"[0/0]": "fx_graph miss 1", "[2/0]": "fx_graph miss 1"}, ["[0/0]", "[1/0]", "[2/0]"], shifted),
        _rank(1, {"[0/0]": "fx_graph hit 1", "[1/0]": "fx_graph hit 1"}, ["[0/0]", "[1/0]"], frames),
        _rank(2, {"[0/0]": "fx_graph hit 1", "[1/0]": "fx_graph hit 1"}, ["[0/0]", "[1/0]"], frames),
    ]
    found = divergence(ranks).caches
    assert [m.id for m in found] == ["[0/0]", "[1/0]"]
    assert found[1].sentence.startswith(
        "[1/0] body (a.py:5) ([2/0] on rank 0): caches answered differently on different ranks: "
        "fx_graph (ranks 1, 2: 1 hit; rank 0: 1 miss)"
    )


def test_a_thousand_ways_to_answer_name_the_first_groups() -> None:
    ranks = [_rank(n, {"[0/0]": f"fx_graph hit {n + 1}"}) for n in range(NAMED + 3)]
    (found,) = divergence(ranks).caches
    assert len(found.groups) == NAMED + 3
    assert found.sentence.endswith(f"rank {NAMED - 1}: {NAMED} hits; … (3 more groups))")


def test_a_ranks_json_written_before_1_36_reads_as_not_compared() -> None:
    import msgspec

    old: dict[str, Any] = {"diverges": False}
    assert msgspec.json.decode(json.dumps(old), type=Divergence).caches == []


def _keyed(n: int, text: str, keys: str) -> RankOverview:
    overview = _rank(n, {"[0/0]": text})
    overview.cache_keys = {"[0/0]": keys} if keys else {}
    return overview


def test_the_keys_say_whether_a_cache_was_cold_or_the_compiles_differ() -> None:
    """The same keys: the cache that missed lacked the entry. Other keys: what the key hashes
    (the graph, the settings) differs, which `diff --ranks` says part by part. No key logged: not said."""
    hit, miss = "fx_graph hit 1", "fx_graph miss 1"
    same = divergence([_keyed(0, miss, "fx_graph fk1"), _keyed(1, hit, "fx_graph fk1"), _keyed(2, miss, "")]).caches
    assert same[0].same_keys is True and same[0].sentence.endswith(
        f"the same keys on ranks 0, 2 and rank 1: {KEYS_SAME}"
    )
    other = divergence([_keyed(0, miss, "fx_graph fk1"), _keyed(1, hit, "fx_graph fk2")]).caches
    assert other[0].same_keys is False
    assert other[0].sentence.endswith(
        "; other keys on rank 0 and rank 1: tlscope diff JOB --ranks 0 1 says which parts differ"
    )
    unknown = divergence([_keyed(0, miss, ""), _keyed(1, hit, "fx_graph fk1")]).caches
    assert unknown[0].same_keys is None and unknown[0].sentence.endswith(WHY)
    # A cache one side did not look up is no other key: an AOTAutograd hit looks up no FX graph.
    cold = "aotautograd miss 1\nfx_graph miss 1"
    warm = divergence(
        [_keyed(0, "aotautograd hit 1", "aotautograd a1"), _keyed(1, cold, "aotautograd a1\nfx_graph f1")]
    )
    assert warm.caches[0].caches == ["aotautograd", "fx_graph"] and warm.caches[0].same_keys is True
    # Keys of a cache whose answers agree are not compared.
    both = "aotautograd hit 1\nfx_graph miss 1"
    keys = divergence([_keyed(0, both, "aotautograd a1\nfx_graph fk1"), _keyed(1, miss, "fx_graph fk1")]).caches
    assert keys[0].caches == ["aotautograd"] and keys[0].same_keys is None
    assert cache_keys(_entry("[0/0]", "fx_graph miss")) == ""
