"""A job's ranks share graphs/ and the report's pages (issue 22): a rank that meets a file another
rank is making at that moment (its claim, write/graph_store.py `claim`) takes it at its end, and
makes it then when it is still not there. Either way the job's output is the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, file_tree, forget_rank_memos

from tlscope.pipeline.parse import parse
from tlscope.write import graph_store
from tlscope.write.report import derived
from tlscope.write.run_options import ParseOptions

JOB = CORPUS / "ranks_same_4"


def test_a_claim_is_taken_once(tmp_path: Path) -> None:
    assert graph_store.claim(tmp_path, "graph-x") is True
    assert graph_store.claim(tmp_path, "graph-x") is False  # another rank's, from now on
    assert graph_store.claim(tmp_path / "missing", "graph-x") is True  # no claims there: made as before


def _normal(tmp_path: Path) -> dict[str, bytes]:
    forget_rank_memos()
    parse(JOB, tmp_path / "normal", ParseOptions(), all_ranks=True, jobs=1)
    return file_tree(tmp_path / "normal")


def test_files_claimed_by_a_rank_that_never_makes_them_are_made_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    normal = _normal(tmp_path)
    asked: list[str] = []

    def taken(folder: Path, name: str) -> bool:  # every shared file claimed by another rank
        asked.append(name)
        return False

    monkeypatch.setattr(graph_store, "claim", taken)
    monkeypatch.setattr(derived, "claim", taken)
    forget_rank_memos()
    parse(JOB, tmp_path / "claimed", ParseOptions(), all_ranks=True, jobs=1)
    claimed = file_tree(tmp_path / "claimed")
    assert any(n.startswith("graph-") for n in asked) and any(n.startswith(".claim-") for n in asked)
    assert claimed.keys() == normal.keys() and [k for k in normal if normal[k] != claimed[k]] == []


def test_files_another_rank_makes_meanwhile_are_taken_not_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other rank makes each claimed file while this one goes on (here: as it claims); this
    rank links or reads it at its end and makes none itself."""
    normal = _normal(tmp_path)
    made_here: list[str] = []
    real_write_graph, real_memo_write = graph_store.write_graph, derived._memo.write

    def other_rank(folder: Path, name: str) -> bool:
        job = folder.parent
        if name.startswith("graph-"):
            md5 = name.removeprefix("graph-")
            real_write_graph(md5, str(job / "payloads" / f"{md5}.txt"), str(job / "graphs" / f"{md5}.json"), True)
        else:
            kind, md5 = name.removeprefix(".claim-").split("-", 1)
            derived.make_page(kind, str(job / "payloads" / f"{md5}.txt"), str(folder / f"{kind}-{md5}"))
        return False

    def write_graph(*args: Any) -> Any:
        made_here.append(args[0])
        return real_write_graph(*args)

    def memo_write(*args: Any) -> None:
        made_here.append(str(args[3]))
        real_memo_write(*args)

    monkeypatch.setattr(graph_store, "claim", other_rank)
    monkeypatch.setattr(derived, "claim", other_rank)
    monkeypatch.setattr(graph_store, "write_graph", write_graph)
    monkeypatch.setattr(derived._memo, "write", memo_write)
    forget_rank_memos()
    parse(JOB, tmp_path / "taken", ParseOptions(), all_ranks=True, jobs=1)
    taken = file_tree(tmp_path / "taken")
    assert made_here == []
    assert taken.keys() == normal.keys() and [k for k in normal if normal[k] != taken[k]] == []
