"""ranks.json's `divergence.settings` (format 1.30): the ranks whose first compile ran under other
settings than the most ranks', with the settings; and (format 1.38) the compiles run under other
settings on some of the ranks whose first compiles agree.

tlparse's public multi_rank_runtime has such a job: its ranks 5 and 6 logged other Inductor and
Dynamo configs (`graph_partition` on, keys the other ranks' torch does not have) and lack two
compiles the others have. The corpus's ranks_same_4 runs one program under one settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import parse_job

from tlscope.analyse.ranks.settings_divergence import (
    MIDRUN,
    CompileSettingsFold,
    RankSettingsFold,
    settings_changes,
    settings_digest,
)
from tlscope.analyse.ranks.words import NAMED
from tlscope.format.compiles import Setting, Settings, SettingsGroup

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"


def _job(source: Path, out: Path) -> dict[str, Any]:
    found, stdout = parse_job(source, out)
    assert ("Settings differ between ranks:" in stdout) == (
        source.name in ("multi_rank_runtime", "ranks_settings_2", "ranks_patched_2")
    )
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
    assert "settings-differ" not in page  # a first compile's settings mark no compile of the matrix
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


def test_a_compile_patched_on_one_rank_is_said_at_that_compile(tmp_path: Path) -> None:
    """ranks_patched_2 (real torch): both ranks' first compiles ran under one settings; rank 1
    compiled `step`, the second function, inside `torch._inductor.config.patch({"cpp.simdlen": 1})`.
    The first compile's settings agree, so only the compile's own comparison says it, beside the
    output code it changed; the compiles before and after it are alike."""
    out = tmp_path / "out"
    divergence = _job(CORPUS / "ranks_patched_2", out)["divergence"]
    (group,) = divergence["settings"]
    assert group["id"] == "[1/0]" and group["ranks"] == [1] and group["than"] == [0]
    assert group["changed"] == [{"section": "inductor", "key": "cpp.simdlen", "a": "None", "b": "1"}]
    assert group["sentence"] == (
        "[1/0] step (ranks_patched_2.py:24): rank 1 compiled it under other settings than rank 0: "
        f"inductor cpp.simdlen 1 (None on rank 0); {MIDRUN}"
    )
    assert [(g["id"], g["kind"]) for g in divergence["graphs"]] == [("[1/0]", "output_code")]
    page = (out / "index.html").read_text()
    # The landing page says it, and its matrix marks the compile's row (its first compile's is not).
    assert group["sentence"] in page
    assert '<td>[1/0] <span class="settings-differ">settings differ</span>' in page
    assert page.count('class="settings-differ"') == 1
    # Folded again from each rank's compiles.json (a folder without ranks.json), the same.
    import tlscope

    (out / "ranks.json").unlink()
    folded = tlscope.load(out).divergence
    assert folded is not None and [s.sentence for s in folded.settings] == [group["sentence"]]


def _changes(*groups: tuple[list[str], dict[str, tuple[str | None, str | None]]]) -> dict[str, str]:
    """`settings_changes` of a rank whose compiles `ids` ran with `inductor` settings key -> (value, first)."""
    made = [
        SettingsGroup(
            compile_ids=ids, settings=[Setting(section="inductor", key=k, value=v, first=f) for k, (v, f) in s.items()]
        )
        for ids, s in groups
    ]
    return settings_changes(Settings(first_compile="[0/0]", groups=made, sentence=""))


def _fold(
    changes: dict[int, dict[str, str]], having: dict[str, set[int]], reference: set[int] | None = None
) -> list[Any]:
    fold = CompileSettingsFold()
    for rank, found in changes.items():
        fold.add(rank, found, {cid: cid for cid in having})  # each id its own name
    return [m for _, m in fold.mismatches(reference, having.__getitem__, lambda name: (name, f"{name} f (x.py:1)"))]


def test_a_change_every_rank_made_is_no_difference() -> None:
    """`torch.compile(dynamic=False)` on every rank changes that function's settings alike."""
    same = _changes((["[1/0]"], {"x": ("False", "True")}))
    assert _fold({0: same, 1: same, 2: same}, {"[1/0]": {0, 1, 2}}) == []
    assert settings_changes(None) == {}


def test_a_rank_that_changed_nothing_is_a_group_and_values_come_from_the_first_compile() -> None:
    """Ranks 0, 1 changed x for [1/0], rank 2 changed nothing, rank 3 changed y: rank 2 and rank 3
    are each said against ranks 0, 1, a setting only one side changed read as its first value."""
    found = _fold(
        {
            0: _changes((["[1/0]"], {"x": ("1", "None")})),
            1: _changes((["[1/0]"], {"x": ("1", "None")})),
            3: _changes((["[1/0]"], {"y": ("2", "4")})),
        },
        {"[1/0]": {0, 1, 2, 3}},
    )
    assert [(m.id, m.ranks, m.than) for m in found] == [("[1/0]", [2], [0, 1]), ("[1/0]", [3], [0, 1])]
    assert [(c.key, c.a, c.b) for c in found[0].changed] == [("x", "1", "None")]
    assert [(c.key, c.a, c.b) for c in found[1].changed] == [("x", "1", "None"), ("y", "4", "2")]
    assert (
        found[0].sentence == "[1/0] f (x.py:1): rank 2 compiled it under other settings than ranks 0, 1: "
        f"inductor x None (1 on ranks 0, 1); {MIDRUN}"
    )


def test_ranks_whose_first_compile_differs_are_not_compared_again() -> None:
    """A rank outside the largest group of first settings differs at every compile; said once, by
    the first compile's group, not at each compile."""
    odd = _changes((["[1/0]"], {"x": ("1", "None")}))
    assert _fold({3: odd}, {"[1/0]": {0, 1, 2, 3}}, reference={0, 1, 2}) == []
    (found,) = _fold({3: odd}, {"[1/0]": {0, 1, 2, 3}}, reference={0, 1, 2, 3})
    assert found.ranks == [3] and found.than == [0, 1, 2]
    fold = RankSettingsFold()
    for rank, digest in ((0, "a"), (1, "b"), (2, "b"), (3, "")):
        fold.add(rank, digest)
    assert fold.reference() == {1, 2} and RankSettingsFold().reference() is None


def test_a_settings_group_naming_no_compile_of_the_rank_is_not_compared() -> None:
    """compiles.json's settings group naming an id the rank's compile list lacks (a log someone
    else wrote): nothing to compare it with, and no name to say it under."""
    odd = _changes((["[9/0]"], {"x": ("1", "None")}))
    assert _fold({1: odd}, {"[1/0]": {0, 1}}) == []


def test_a_set_logged_in_another_order_is_one_setting(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse's multi_rank_logs: ranks 0 and 2 (an older torch) logged Dynamo's set
    `allowed_functions_module_string_ignorelist` in their hash order, ranks 1 and 3 sorted: one
    set, so not a setting that differs (its other differences, another torch's, still are). A
    list that is not a set differs by its order; a set that differs by a member differs."""
    from tlscope.analyse.config_diff import config_diff

    found, _ = parse_job(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "out")
    (group,) = found["divergence"]["settings"]
    assert group["ranks"] == [1, 3] and group["changed"]
    assert "allowed_functions_module_string_ignorelist" not in group["sentence"]
    # Three values differ and 33 keys only one side logs: the sentence counts each kind over all
    # of them (it said "16 more, 18 settings only one side logs" from the first 20, in key order).
    assert group["sentence"].endswith(
        "dynamo automatic_dynamic_local_pgo True (False on ranks 0, 2), dynamo automatic_dynamic_shapes False "
        "(True), dynamo suppress_errors False (True), 33 settings only one side logs (another torch version?)"
    )
    assert len(group["changed"]) == 20 and group["more"] == 16
    assert [c["a"] is None or c["b"] is None for c in group["changed"]] == [False] * 3 + [True] * 17
    assert all(c["key"] != "allowed_functions_module_string_ignorelist" for c in group["changed"])
    key = "allowed_functions_module_string_ignorelist"
    a = {"dynamo": {key: ["torch._prims", "torch.testing", "torch._refs"], "passes": ["x", "y"]}}
    b = {"dynamo": {key: ["torch._prims", "torch._refs", "torch.testing"], "passes": ["x", "y"]}}
    assert config_diff(a, b) is None and settings_digest(a) == settings_digest(b)
    c = {"dynamo": {key: ["torch._prims", "torch._refs"], "passes": ["x", "y"]}}
    changed = config_diff(a, c)
    assert changed is not None and [x.key for x in changed.changed] == [key]
    d = {"dynamo": {key: ["torch._prims", "torch._refs", "torch.testing"], "passes": ["y", "x"]}}
    changed = config_diff(a, d)
    assert changed is not None and [x.key for x in changed.changed] == ["passes"]
    assert settings_digest(a) != settings_digest(d)
