"""ranks.json's `divergence.settings` (format 1.30): the ranks whose first compile ran under other
settings than the most ranks', with the settings.

tlparse's public multi_rank_runtime has such a job: its ranks 5 and 6 logged other Inductor and
Dynamo configs (`graph_partition` on, keys the other ranks' torch does not have) and lack two
compiles the others have. The corpus's ranks_same_4 runs one program under one settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import parse_job

from tlscope.analyse.ranks.settings_divergence import RankSettingsFold, settings_digest
from tlscope.analyse.ranks.words import NAMED

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"


def _job(source: Path, out: Path) -> dict[str, Any]:
    found, stdout = parse_job(source, out)
    assert ("Settings differ between ranks:" in stdout) == (source.name in ("multi_rank_runtime", "ranks_settings_2"))
    return found


def test_ranks_under_other_settings_are_said_with_the_settings(tlparse_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (group,) = _job(tlparse_traces / "inputs" / "multi_rank_runtime", out)["divergence"]["settings"]
    assert group["ranks"] == [5, 6] and group["than"] == [0, 1, 2, 3, 4]
    changed = {(c["section"], c["key"]): (c["a"], c["b"]) for c in group["changed"]}
    assert changed[("inductor", "graph_partition")] == ("False", "True")
    assert changed[("dynamo", "assume_dunder_attributes_remain_unchanged")] == (None, "True")
    # Values first, then the keys one side lacks.
    kinds = [c["a"] is None or c["b"] is None for c in group["changed"]]
    assert kinds == sorted(kinds) and group["more"] == 0
    assert group["sentence"] == (
        "ranks 5, 6 compiled under other settings than ranks 0-4: inductor aot_inductor.embed_kernel_binary "
        "None (False on ranks 0-4), inductor aot_inductor.emit_multi_arch_kernel None (False), inductor "
        "graph_partition True (False), 7 settings only one side logs (another torch version?)"
    )
    page = (out / "index.html").read_text()
    assert 'id="rank-settings"' in page and "inductor graph_partition True (False)" in page
    # A folder without ranks.json folds the same from each rank's raw.jsonl (tlscope.load).
    import tlscope

    (out / "ranks.json").unlink()
    folded = tlscope.load(out).divergence
    assert folded is not None and [s.sentence for s in folded.settings] == [group["sentence"]]


def test_one_program_under_one_settings_says_nothing(tmp_path: Path) -> None:
    assert _job(CORPUS / "ranks_same_4", tmp_path / "out")["divergence"]["settings"] == []


def test_the_fold_compares_the_first_groups_and_names_the_rest() -> None:
    """Ranks without a config are not compared; at most NAMED groups read a rank's configs."""
    fold = RankSettingsFold()
    for rank in range(20):
        fold.add(rank, "base" if rank < 10 else f"other{rank}")
    fold.add(99, "")
    fold.add(98, None)
    reads: list[int] = []

    def read(rank: int) -> dict[str, dict[str, Any]]:
        reads.append(rank)
        return {"inductor": {"graph_partition": rank >= 10}}

    found = fold.mismatches(read)
    assert [g.ranks for g in found] == [[n] for n in range(10, 20)]
    assert all(g.than == list(range(10)) for g in found)
    assert reads == [0, *range(10, 10 + NAMED)]
    assert found[0].sentence == (
        "rank 10 compiled under other settings than ranks 0-9: inductor graph_partition True (False on ranks 0-9)"
    )
    assert found[-1].sentence == "rank 19 compiled under other settings than ranks 0-9" and found[-1].changed == []
    assert settings_digest({}) == "" and settings_digest({"dynamo": {"a": 1}}) == settings_digest({"dynamo": {"a": 1}})


def test_a_setting_changed_on_one_rank_is_said_with_the_graphs_it_changed(tmp_path: Path) -> None:
    """ranks_settings_2 (real torch): rank 1 sets automatic_dynamic_shapes = False; both ranks see
    batches of 8 then 10. The same compile ids, but [0/1] is dynamic on rank 0 and static on rank
    1: the setting is said, and the graphs it made."""
    divergence = _job(CORPUS / "ranks_settings_2", tmp_path / "out")["divergence"]
    assert divergence["diverges"] is False
    (group,) = divergence["settings"]
    assert group["ranks"] == [1] and group["than"] == [0]
    assert group["changed"] == [{"section": "dynamo", "key": "automatic_dynamic_shapes", "a": "True", "b": "False"}]
    assert group["sentence"] == (
        "rank 1 compiled under other settings than rank 0: dynamo automatic_dynamic_shapes False (True on rank 0)"
    )
    (graphs,) = divergence["graphs"]
    assert graphs["id"] == "[0/1]" and graphs["sentence"].startswith(
        "[0/1] step (ranks_settings_2.py:18): ranks traced different graphs: input L_x_ is f32[s77, 16] on rank 0, "
        "f32[10, 16] on rank 1; rank 0 made it dynamic by recompiling ([0/1] dim 0: 8 -> 10); "
    )
