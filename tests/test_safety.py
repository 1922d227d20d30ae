"""Nothing a log says can make tlscope write outside OUT, and a failed run leaves OUT as it was.

The hostile logs are simple.log with real lines altered: names that are relative escapes
(`../../x`), absolute paths, `..`, backslashes and over-long names, in every field tlscope or
its report turns into a file name. The run happens with OUT and the working directory nested
inside a temporary root, so an escape lands inside the root where it is seen: the only new
files anywhere under the root must be inside OUT.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import require_shared
from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.cli import main
from tlscope.write.format import FormatWriter, PayloadStore
from tlscope.write.outdir import OutputDir, UnsafePath, check_relative, safe_component


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    return (require_shared() / "inputs" / "simple.log").read_bytes().split(b"\n")


def record_at(lines: list[bytes], needle: bytes) -> list[bytes]:
    """The envelope line containing `needle` and its payload lines."""
    i = next(k for k, line in enumerate(lines) if needle in line and not line.startswith(b"\t"))
    end = i + 1
    while end < len(lines) and lines[end].startswith(b"\t"):
        end += 1
    return lines[i:end]


ARTIFACT_META = b'{"artifact": {"name": "aot_forward_graph_fw_metadata", "encoding": "string"}, '


def hostile_names(root: Path) -> list[str]:
    return [
        "../../escape_rel",
        "../../../../escape_deep",
        f"{root}/escape_abs",
        "..",
        ".",
        "",
        "a/../../../escape_mid",
        "..\\..\\escape_backslash",
        "x" * 300,
        "nul\x00byte",
    ]


def hostile_log(lines: list[bytes], root: Path) -> bytes:
    """simple.log followed by real records whose names were replaced by hostile ones."""
    artifact = record_at(lines, b'"aot_forward_graph_fw_metadata"')
    output_code = record_at(lines, b'"inductor_output_code"')
    old_code_name = b"/tmp/tmprds_hch0/yj/cyjwx6x6efpuwt4dvr4ev42v4ghac5zo2uggvscht2otwnesito6.py"
    chromium = lines[0:12]
    plain = lines[110]  # describe_storage: no payload
    assert b'"describe_storage"' in plain and old_code_name in output_code[0]
    extra: list[bytes] = []
    for name in hostile_names(root):
        n = json.dumps(name)[1:-1].encode()  # as it appears inside a JSON string
        extra += [artifact[0].replace(b"aot_forward_graph_fw_metadata", n), *artifact[1:]]
        extra += [output_code[0].replace(old_code_name, n), *output_code[1:]]
        extra.append(chromium[0].replace(b"490a3a38ce10390374e403dd6e063c7f", n))  # has_payload
        extra += chromium[1:]
        for key in (b"dump_file", b"graph_dump", b"optimize_ddp_split_child"):
            meta = b'{"%s": {"name": "%s", "type": "%s", "filename": "%s"}, ' % (key, n, n, n)
            extra += [artifact[0].replace(ARTIFACT_META, meta), *artifact[1:]]
        link = b'"link": {"name": "%s", "url": "%s"}' % (n, n)
        extra.append(plain.replace(b'"describe_storage": {"id": 0, "describer_id": 0, "size": 20971520}', link))
        extra.append(plain.replace(b'"frame_id": 0', b'"frame_id": "%s"' % n))  # a compile id that is a path
    return b"\n".join([*lines, *extra])


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if not p.is_dir()}


def test_hostile_names_never_write_outside_out(
    lines: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    log = root / "in" / "hostile.log"
    log.parent.mkdir()
    log.write_bytes(hostile_log(lines, root))
    cwd = root / "c1" / "c2" / "cwd"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    out = root / "o1" / "o2" / "out"
    before = files_under(root)
    assert main(["--no-browser", str(log), "-o", str(out)]) == 0
    created = files_under(root) - before
    # Not vacuous: the hostile records were read and reached the writers.
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(hostile_names(root)) <= set(manifest["artifacts"])
    assert manifest["events"]["dump_file"]["count"] == len(hostile_names(root))
    outside = sorted(str(p) for p in created if not p.is_relative_to(out))
    assert outside == []
    assert not any("escape" in p.name for p in root.rglob("*") if not p.is_relative_to(out))
    # Inside OUT, no hostile name made a path component of its own.
    for p in out.rglob("*"):
        assert ".." not in p.relative_to(out).parts


def test_payload_files_are_named_by_computed_md5_only(lines: list[bytes], tmp_path: Path) -> None:
    log = tmp_path / "hostile.log"
    log.write_bytes(hostile_log(lines, tmp_path))
    out = tmp_path / "out"
    assert main(["--no-browser", str(log), "-o", str(out)]) == 0
    for p in (out / "payloads").iterdir():
        assert p.name == hashlib.md5(p.read_bytes()).hexdigest() + ".txt"


@pytest.mark.parametrize("rel", ["../x", "/etc/x", "a/../../x", "", "a\\b", "a\x00b", "payloads/../../x"])
def test_output_paths_that_could_escape_are_refused(rel: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafePath):
        check_relative(rel)
    with OutputDir(tmp_path / "out", overwrite=False) as out:
        with pytest.raises(UnsafePath):
            out.path(rel)
        with pytest.raises(UnsafePath):
            out.path_text(rel)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b.txt", "..", ".", "", "/", "\\", "\x00", "c d", ".x", "é"]), max_size=6))
def test_out_path_follows_check_relative(pieces: list[str]) -> None:
    # OutputDir.path tests the rules with string operations (it runs per file written): it must
    # refuse exactly what check_relative refuses and land where check_relative's parts say.
    rel = "/".join(pieces)
    with tempfile.TemporaryDirectory() as tmp, OutputDir(Path(tmp) / "out", overwrite=False) as out:
        try:
            parts = check_relative(rel).parts
        except UnsafePath:
            with pytest.raises(UnsafePath):
                out.path(rel)
            with pytest.raises(UnsafePath):
                out.path_text(rel)
            return
        if not parts:
            return  # "." alone: the folder itself, never asked for as a file
        first = out.path_text(rel)  # its folder not made yet: made here, as by `path`
        assert out.path(rel) == out.root.joinpath(*parts)
        # path_text is path's text, before its folder was made and after (made as text then)
        assert first == str(out.path(rel)) == out.path_text(rel)


def test_out_path_makes_each_folder_however_it_was_spelt(tmp_path: Path) -> None:
    # Made folders are remembered by the real parent, not by the text before the last "/":
    # `d/e/` names d/e as a file of d, so d/e itself must still be made for `d/e/f.txt`.
    with OutputDir(tmp_path / "out", overwrite=False) as out:
        for rel in ["d/e/", "d/e/f.txt", "g/./h.txt", "g//i/j.txt"]:
            assert out.path(rel).parent.is_dir(), rel
        out.path("d/e/f.txt").write_text("x")


@pytest.mark.parametrize("name", ["..", ".", "", "../../x", "/abs", "a\\b", "x" * 1000, "\x00", ".hidden"])
def test_safe_component_is_one_harmless_name(name: str) -> None:
    safe = safe_component(name)
    assert safe and "/" not in safe and "\\" not in safe and "\x00" not in safe
    assert safe not in (".", "..") and not safe.startswith(".") and len(safe) <= 150
    check_relative(safe)


def test_out_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("x")
    link = tmp_path / "out"
    link.symlink_to(elsewhere)
    log = require_shared() / "inputs" / "comp_metrics.log"
    assert main(["--no-browser", str(log), "-o", str(link), "--overwrite"]) == 1
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert link.is_symlink()


# -- a run that fails or is interrupted leaves OUT as it was -------------------------------------


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def existing_out(tmp_path: Path) -> Path:
    """An OUT from an earlier run, plus a file of the user's."""
    out = tmp_path / "parent" / "out"
    assert main(["--no-browser", str(require_shared() / "inputs" / "comp_metrics.log"), "-o", str(out)]) == 0
    (out / "notes.txt").write_text("mine")
    return out


def _fail_on_nth(n: int, exc: BaseException, original: object) -> object:
    calls = {"n": 0}

    def wrapper(self: object, *args: object) -> object:
        calls["n"] += 1
        if calls["n"] == n:
            raise exc
        return original(self, *args)  # type: ignore[operator]

    return wrapper


@pytest.mark.parametrize(
    ("target", "method", "nth"),
    [(FormatWriter, "feed", 40), (PayloadStore, "put", 3), (FormatWriter, "finish", 1)],
    ids=["mid-stream", "writing-a-payload", "at-the-end"],
)
def test_a_failing_run_leaves_out_as_it_was(
    target: type, method: str, nth: int, existing_out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = snapshot(existing_out)
    siblings = sorted(p.name for p in existing_out.parent.iterdir())
    monkeypatch.setattr(target, method, _fail_on_nth(nth, RuntimeError("disk on fire"), getattr(target, method)))
    log = require_shared() / "inputs" / "simple.log"
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["--no-browser", str(log), "-o", str(existing_out), "--overwrite"])
    assert snapshot(existing_out) == kept
    assert sorted(p.name for p in existing_out.parent.iterdir()) == siblings  # no temporary folder left


def test_an_interrupted_run_leaves_out_as_it_was(
    existing_out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = snapshot(existing_out)
    siblings = sorted(p.name for p in existing_out.parent.iterdir())
    monkeypatch.setattr(FormatWriter, "feed", _fail_on_nth(30, KeyboardInterrupt(), FormatWriter.feed))
    log = require_shared() / "inputs" / "simple.log"
    assert main(["--no-browser", str(log), "-o", str(existing_out), "--overwrite"]) == 130
    assert "left as it was" in capsys.readouterr().err
    assert snapshot(existing_out) == kept
    assert sorted(p.name for p in existing_out.parent.iterdir()) == siblings


def test_an_interrupted_first_run_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FormatWriter, "feed", _fail_on_nth(30, KeyboardInterrupt(), FormatWriter.feed))
    assert main(["--no-browser", str(require_shared() / "inputs" / "simple.log"), "-o", str(tmp_path / "out")]) == 130
    assert list(tmp_path.iterdir()) == []


def test_overwrite_replaces_out_completely(existing_out: Path) -> None:
    """The other half of all-or-nothing: a successful run leaves nothing of the old OUT."""
    simple = require_shared() / "inputs" / "simple.log"
    assert main(["--no-browser", str(simple), "-o", str(existing_out), "--overwrite"]) == 0
    assert not (existing_out / "notes.txt").exists()
    assert sorted(p.name for p in existing_out.parent.iterdir()) == ["out"]


def test_a_command_leaves_the_old_out_to_its_guard(existing_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that ends with its command, the commit does not remove the old OUT itself:
    the run's guard does, once the run lets it go; the new OUT is complete at once, and nothing
    of the old one is left a moment later."""
    from tlscope import lifetime
    from tlscope.write import outdir

    removed: list[Path] = []
    rmtree = outdir.shutil.rmtree

    def noted(path: Path, **kwargs: Any) -> None:
        removed.append(Path(path))
        rmtree(path, **kwargs)

    monkeypatch.setattr(lifetime, "_ENDS_WITH_COMMAND", [True])
    monkeypatch.setattr(outdir.shutil, "rmtree", noted)
    simple = require_shared() / "inputs" / "simple.log"
    assert main(["--no-browser", str(simple), "-o", str(existing_out), "--overwrite"]) == 0
    assert [p for p in removed if p.parent == existing_out.parent] == []  # not by this process
    assert not (existing_out / "notes.txt").exists()
    assert (existing_out / "manifest.json").is_file()
    deadline = time.monotonic() + 10
    while len(list(existing_out.parent.iterdir())) > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(p.name for p in existing_out.parent.iterdir()) == ["out"]


def test_the_console_command_replaces_out_and_the_old_one_goes(existing_out: Path) -> None:
    """The console script (which ends with its command) over an existing OUT: the new OUT when it
    exits, the old one removed by the guard right after, nothing else left."""
    simple = require_shared() / "inputs" / "simple.log"
    done = subprocess.run(
        [sys.executable, "-m", "tlscope", str(simple), "-o", str(existing_out), "--overwrite", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not (existing_out / "notes.txt").exists() and (existing_out / "manifest.json").is_file()
    deadline = time.monotonic() + 10
    while len(list(existing_out.parent.iterdir())) > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(p.name for p in existing_out.parent.iterdir()) == ["out"]


@pytest.mark.parametrize("out_is", ["the log's folder", "a parent of it"])
def test_out_holding_the_input_is_refused(out_is: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tlscope logs/ -o logs --overwrite` must not replace (delete) the folder holding the log."""
    logs = tmp_path / "runs" / "logs"
    logs.mkdir(parents=True)
    log = logs / "comp_metrics.log"
    log.write_bytes((require_shared() / "inputs" / "comp_metrics.log").read_bytes())
    kept = snapshot(tmp_path)
    out = logs if out_is == "the log's folder" else logs.parent
    assert main(["--no-browser", str(logs), "-o", str(out), "--overwrite"]) == 1
    assert "holds the input" in capsys.readouterr().err
    assert snapshot(tmp_path) == kept and sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
