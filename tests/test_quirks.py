"""Known torch quirks are notes, not problems (issue 20, finding 5).

torch writes a `recompile_reasons` artifact declared `encoding: json` with its one reason as bare
text. tlscope recognises exactly that (a compile id, a colon, the reason), lists it under
manifest.json `notes` and `-v`, and `--strict` passes on every normal torch log of the corpus.

Which traces are "normal": all of them. A compile that fails (compile_failure, failures) is
what the user's program did, written by torch as designed; it is an answer (compiles.json's
status), not a problem of the log. A problem is something wrong with the log itself (a cut-off
line, a payload whose MD5 differs, JSON that is not JSON): none of the corpus's logs has one.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from tlscope.model.problems import NOTE_DOCS, NoteKind
from tlscope.pipeline.parse import parse
from tlscope.write.run_options import ParseOptions

TRACES = REPO / "corpus" / "traces"


#: The corpus traces a user passes as a folder: the ranks of a job, and a folder holding one muxed
#: log (each log alone: tests/test_corpus.py test_tlscope_reads_strict).
FOLDERS = sorted(p for p in TRACES.iterdir() if p.name.startswith("ranks_") or p.name == "muxed")


@pytest.mark.parametrize("path", FOLDERS, ids=lambda p: p.name)
def test_strict_passes_on_every_normal_corpus_folder(path: Path, tmp_path: Path) -> None:
    parsed = parse(path, tmp_path / "out", ParseOptions(strict=True), jobs=1)
    assert parsed.multi_rank
    assert len(parsed.manifests) >= 2
    assert all(m.problems.total == 0 for m in parsed.manifests)


@pytest.mark.parametrize("name", ["recompiles", "recompiles_dynamic", "graph_breaks_repeated"])
def test_bare_recompile_reason_is_a_note(name: str, tmp_path: Path) -> None:
    log = next((TRACES / name).glob("*.log.gz"))
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "tlscope", str(log), "-o", str(out), "--no-browser", "-v"],
        capture_output=True,
        text=True,
        check=True,
    )
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["format_minor"] >= 4
    assert manifest["problems"]["total"] == 0
    notes = manifest["notes"]
    assert notes["total"] >= 1
    assert set(notes["counts"]) == {NoteKind.RECOMPILE_REASONS_TEXT.value}
    # Each note points at a real recompile_reasons line whose payload is bare text.
    lines = gzip.decompress(log.read_bytes()).decode("utf-8").split("\n")
    for note in notes["first"]:
        assert '"name": "recompile_reasons"' in lines[note["line"] - 1]
        assert not lines[note["line"]].lstrip("\t").startswith(("[", '"'))
    # The one-line summary does not lead with it: "no problems" first, the note after.
    assert "no problems" in run.stdout
    assert run.stdout.index("no problems") < run.stdout.index("known torch quirk")
    assert "note recompile_reasons_text" in run.stderr  # -v lists it
    # The recompile is still explained from it.
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))["compiles"]
    assert any(c["recompile"] and c["recompile"]["guard_failures"] for c in compiles)


def test_a_broken_recompile_reasons_payload_is_still_a_problem() -> None:
    from tlscope.analyse.fold.guards import is_torch_bare_reason

    assert is_torch_bare_reason(b"0/0: tensor 'x' size mismatch at index 0. expected 4, actual 5")
    assert is_torch_bare_reason(b"12/3_1: G['SCALE_UP'] == False")
    assert not is_torch_bare_reason(b'["0/0: unclosed')
    assert not is_torch_bare_reason(b"garbage")
    assert NOTE_DOCS[NoteKind.RECOMPILE_REASONS_TEXT]
