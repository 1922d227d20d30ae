"""One order and one set of titles for a divergence's lists (format 1.40, ranks.json's `said`):
decided by `said_lists`, written into ranks.json, and followed by every text view (`tlscope JOB`,
`summary JOB`, `diff --ranks`); the explorer's follow the file (tests/test_explorer_views_browser.py,
tests/test_ranks_view_browser.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.analyse.ranks.divergence import SAID, Divergence, RankGroup, SaidList, said_lists
from tlscope.cli import main as cli


def test_the_lists_that_say_something_in_one_order() -> None:
    group = RankGroup(ranks=[0], sentence="rank 0: …")
    quiet = Divergence(diverges=False, groups=[group, group])
    assert said_lists(quiet) == []  # groups are said only when the ranks diverge
    loud = Divergence(diverges=True, groups=[group, group])
    for name, _ in SAID[1:]:
        setattr(loud, name, [object()])
    assert said_lists(loud) == [SaidList(list=name, title=title) for name, title in SAID]
    assert [name for name, _ in SAID] == ["groups", "frames", "collectives", "settings", "graphs", "caches"]


@pytest.mark.parametrize("job", ["ranks_shifted_4", "ranks_patched_2", "ranks_desync_2"])
def test_every_text_view_says_the_lists_in_ranks_json_order(
    job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert cli([str(CORPUS / job), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    parsed = capsys.readouterr().out
    said = json.loads((tmp_path / "out" / "ranks.json").read_text())["divergence"]["said"]
    titles = [s["title"] for s in said]
    assert len(titles) >= 2
    assert cli(["summary", str(tmp_path / "out"), "--width", "250"]) == 0
    summary = capsys.readouterr().out
    assert cli(["diff", str(tmp_path / "out"), "--ranks", "0", "1"]) in (0, 1)
    diffed = capsys.readouterr().out.split("What differs:")[0]
    for text in (parsed, summary, diffed):
        # "Ranks diverge: 4 ranks in 2 groups…" in diff --ranks: the title starts its line there too.
        at = [text.index(f"\n{t}:") if f"\n{t}:" in text else text.index(f"{t}: ") for t in titles]
        assert at == sorted(at), (titles, text)


def test_a_text_view_follows_the_order_ranks_json_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job's folder whose ranks.json says its lists in another order (another writer's, or a
    later tlscope's) is said in that order by `summary`, as by the explorer: the file decides."""
    out = tmp_path / "out"
    assert cli([str(CORPUS / "ranks_shifted_4"), "-o", str(out), "--no-browser"]) == 0
    path = out / "ranks.json"
    data = json.loads(path.read_text())
    data["divergence"]["said"].reverse()
    titles = [s["title"] for s in data["divergence"]["said"]]
    assert titles == ["Graphs differ between ranks", "Ranks compiled other functions", "Ranks diverge"]
    path.write_text(json.dumps(data, indent=2) + "\n")
    capsys.readouterr()
    assert cli(["summary", str(out), "--width", "250"]) == 0
    text = capsys.readouterr().out
    at = [text.index(f"\n{t}:") for t in titles]
    assert at == sorted(at)
