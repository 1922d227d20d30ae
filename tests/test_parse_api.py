"""The programmatic entry point, tlscope.pipeline.parse.parse (contract 1 between helpers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest
from helpers import CORPUS

from tlscope.format.errors import InputError, OutputError, StrictFailure
from tlscope.format.folder import OutputFolder
from tlscope.pipeline.parse import parse
from tlscope.write.run_options import ParseOptions


def _log(scenario: str) -> Path:
    return next((CORPUS / scenario).glob("*.log.gz"))


def test_a_log_gives_its_manifest_as_written(tmp_path: Path) -> None:
    parsed = parse(_log("simple"), tmp_path / "out")
    assert not parsed.multi_rank and parsed.ranks == [] and len(parsed.manifests) == 1
    written = json.loads((tmp_path / "out" / "manifest.json").read_bytes())
    assert msgspec.to_builtins(parsed.manifests[0]) == written
    assert (tmp_path / "out" / "index.html").is_file()  # the report comes with it


def test_a_folder_of_ranks_gives_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = parse(CORPUS / "ranks_same_2", tmp_path / "out", jobs=1)
    assert parsed.multi_rank and [r.rank for r in parsed.ranks] == [0, 1]

    def listed(_: OutputFolder) -> list[int]:
        raise AssertionError("a rank's manifest read multi_rank_summary.json (all of it, each time)")

    # The parse knows its ranks: each manifest is read from its rank_N folder alone (asked through
    # OutputFolder.rank, 1,000 ranks spent 72 s of CPU after the landing page decoding the summary).
    monkeypatch.setattr(OutputFolder, "ranks", listed)
    for rank, manifest in enumerate(parsed.manifests):
        written = json.loads((tmp_path / "out" / f"rank_{rank}" / "manifest.json").read_bytes())
        assert msgspec.to_builtins(manifest) == written
    assert (tmp_path / "out" / "index.html").is_file()


def test_a_folder_with_one_log_is_that_log(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(_log("simple"), folder)
    parsed = parse(folder, tmp_path / "out")
    assert not parsed.multi_rank and parsed.manifests[0].inputs[0].path.startswith(str(folder))


def test_unusable_input_or_out_raises_before_writing(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        parse(tmp_path / "missing.log", tmp_path / "out")
    with pytest.raises(InputError, match="--latest"):
        parse(CORPUS / "ranks_same_2", tmp_path / "out", all_ranks=True, latest=True)
    (tmp_path / "out").mkdir()
    with pytest.raises(OutputError):
        parse(_log("simple"), tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_strict_failure_leaves_out_as_it_was(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"not a glog line\n")
    out = tmp_path / "out"
    with pytest.raises(StrictFailure):
        parse(bad, out, ParseOptions(strict=True))
    assert not out.exists()
    assert parse(bad, out).manifests[0].problems.total == 1
