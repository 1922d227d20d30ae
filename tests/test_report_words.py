"""The report's index says its counts in words (issue 20, finding 9: "7 graph break")."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import CORPUS

from tlscope.cli import main


def test_statuses_line_reads_as_words(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(CORPUS / "graph_breaks_repeated"), "-o", str(out), "--no-browser"]) == 0
    index = (out / "index.html").read_text("utf-8")
    counts = re.findall(r'<span class="answer-(\w+)">(\d+) ([^<]+)</span>', index)
    words = {status: text for status, _, text in counts}
    assert words["graph_break"] == "with a graph break"
    assert words["restarted"] == "restarted" and words["ok"] == "ok"
    assert not re.search(r">\d+ graph break<", index)
