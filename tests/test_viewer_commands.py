"""`tlscope corpus`, the corpus companion package, and a template installed as a viewer package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import CORPUS, REPO

from tlscope.cli import main as tlscope_main


def test_corpus_list_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    # Run from the repository root, beside its `corpus` folder: the action still names the command.
    assert tlscope_main(["corpus", "list", "--json"]) == 0
    listed = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    logs = {p.parent.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.log.gz")}
    assert set(listed) == logs
    assert listed["ranks_same_2"]["logs"] == 2
    assert tlscope_main(["corpus", "path", "simple"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == CORPUS / "simple" and any(path.glob("*.log.gz"))
    assert tlscope_main(["corpus", "path", "no-such-trace"]) == 1
    assert "no corpus trace" in capsys.readouterr().err


def test_corpus_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "dedicated_log_torch_trace_x.log").write_text("")
    monkeypatch.setenv("TLSCOPE_CORPUS", str(tmp_path))
    assert tlscope_main(["corpus", "path", "mine"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "mine")


def wheel(source: Path, out: Path) -> zipfile.ZipFile:
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return zipfile.ZipFile(next(out.glob("*.whl")))


def test_corpus_companion_package_holds_every_trace(tmp_path: Path) -> None:
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources.
    source = shutil.copytree(
        REPO / "corpus", tmp_path / "corpus", ignore=shutil.ignore_patterns("big", "build", "*.egg-info")
    )
    built = wheel(source, tmp_path / "wheel")
    names = set(built.namelist())
    expected = {f"tlscope_corpus/traces/{p.relative_to(CORPUS).as_posix()}" for p in CORPUS.rglob("*.log.gz")}
    assert expected <= names
    assert "tlscope_corpus/__init__.py" in names


def test_a_template_is_a_viewer_package(tmp_path: Path) -> None:
    target = tmp_path / "my-view"
    assert tlscope_main(["viewer", "new", str(target), "--template", "vanilla"]) == 0
    built = wheel(target, tmp_path / "wheel")
    names = set(built.namelist())
    assert {"tlscope_viewer_my_view/index.html", "tlscope_viewer_my_view/app.js"} <= names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = built.read(entry_points).decode()
    assert "[tlscope.viewers]" in text and "my-view = tlscope_viewer_my_view:folder" in text
