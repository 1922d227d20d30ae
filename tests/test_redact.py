"""`tlscope redact` on real traces: mapped prefixes are gone everywhere, every payload MD5 still
checks, and the events are otherwise unchanged."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import require_shared
from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.commands import redact_command
from tlscope.read import redact

# Real tlparse test traces, made on Meta developer machines: they name /data/users/<user>/... and
# /home/<user>/... paths, which is exactly what redact is for.
SHARED_NAMES = [
    "inputs/simple.log",
    "inputs/cache_hit_miss.log",
    "inputs/comp_failure.log",
    "inputs/export.log",
    "inputs/export_guard_added.log",
    "inputs/simple_corrupted_json.log",
    "inputs/multi_rank_logs/dedicated_log_torch_trace_rank_0.log",
    "graph_exec_order_tests/dedicated_log_torch_trace_rank_0_a74od7a1.log",
]
MAPS = {"/data/users": "/REDACTED/users", "/home": "/REDACTED/home"}
GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]]*\] ")


def shared_trace(name: str, tmp_path: Path) -> Path:
    src = require_shared() / name
    if not src.is_file():
        pytest.skip(f"shared trace {src} not found")
    dst = tmp_path / Path(name).name
    shutil.copyfile(src, dst)  # never touch the read-only originals
    return dst


def read_text(path: Path) -> str:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        text: str = f.read()
        return text


def records(text: str) -> Iterator[tuple[str, list[str]]]:
    """(envelope or other line, payload lines without their tab), independently of redact.py."""
    head: str | None = None
    payload: list[str] = []
    for line in text.split("\n"):
        if line.startswith("\t") and head is not None:
            payload.append(line[1:])
            continue
        if head is not None:
            yield head, payload
        head, payload = line, []
    if head is not None:
        yield head, payload


def envelope(line: str) -> dict[str, Any] | None:
    match = GLOG.match(line)
    if match is None:
        return None
    try:
        value = json.loads(line[match.end() :])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8", "surrogateescape")).hexdigest()


# A prefix is replaced only where it is not glued to a longer name: /data/usersX stays.
NAME = r"[A-Za-z0-9_\-\u0080-\U0010ffff]"


def oracle(text: str) -> str:
    """The expected mapping of one decoded string: each prefix replaced where it starts a path."""
    for old in sorted(MAPS, key=len, reverse=True):
        text = re.sub(rf"(?<!{NAME}){re.escape(old)}(?!{NAME})", lambda _m, o=old: MAPS[o], text)
    return text


def mapped(value: Any) -> Any:
    if isinstance(value, str):
        return oracle(value)
    if isinstance(value, list):
        return [mapped(v) for v in value]
    if isinstance(value, dict):
        return {oracle(k): mapped(v) for k, v in value.items()}
    return value


def run_redact(args: list[str]) -> int:
    return redact_command.main(["-q", *args])


def map_args() -> list[str]:
    return [a for old, new in MAPS.items() for a in ("--map", f"{old}={new}")]


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_redact_real_trace(name: str, tmp_path: Path) -> None:
    src = shared_trace(name, tmp_path)
    out = tmp_path / "out.log"
    assert run_redact([str(src), "-o", str(out), *map_args()]) == 0
    before, after = read_text(src), read_text(out)
    assert any(old in before for old in MAPS), "test trace should contain a mapped prefix"
    for old in MAPS:
        assert not re.search(rf"(?<!{NAME}){re.escape(old)}(?!{NAME})", after), old

    old_records, new_records = list(records(before)), list(records(after))
    assert len(old_records) == len(new_records)
    for (old_head, old_payload), (new_head, new_payload) in zip(old_records, new_records, strict=True):
        assert new_payload == [oracle(p) for p in old_payload]
        old_meta, new_meta = envelope(old_head), envelope(new_head)
        if old_meta is None:
            # Not an envelope (e.g. the deliberately corrupted JSON): mapped as plain text.
            assert new_head == oracle(old_head)
            continue
        assert new_meta is not None
        assert GLOG.match(new_head).group(0) == oracle(GLOG.match(old_head).group(0))  # type: ignore[union-attr]
        assert list(new_meta) == list(old_meta)
        old_md5 = old_meta.pop("has_payload", None)
        new_md5 = new_meta.pop("has_payload", None)
        assert new_meta == mapped(old_meta)
        if old_md5 is None:
            assert new_md5 is None
        elif old_md5 == md5("\n".join(old_payload)):
            assert new_md5 == md5("\n".join(new_payload))
        else:
            # A payload that was already corrupt stays visibly corrupt.
            assert new_md5 == old_md5


def test_gz_in_gz_out_matches_plain(tmp_path: Path) -> None:
    src = shared_trace("inputs/cache_hit_miss.log", tmp_path)
    gz_src = tmp_path / "in.log.gz"
    with src.open("rb") as fin, gzip.open(gz_src, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    plain, gz_out = tmp_path / "plain.log", tmp_path / "out.log.gz"
    assert run_redact([str(src), "-o", str(plain), *map_args()]) == 0
    assert run_redact([str(gz_src), "-o", str(gz_out), *map_args()]) == 0
    assert gz_out.read_bytes()[:2] == b"\x1f\x8b"
    assert read_text(gz_out) == plain.read_text(encoding="utf-8")
    # Reproducible bytes: no timestamp or file name in the gzip header.
    again = tmp_path / "again.log.gz"
    assert run_redact([str(gz_src), "-o", str(again), *map_args()]) == 0
    assert again.read_bytes() == gz_out.read_bytes()


def test_never_overwrites_input_unless_asked(tmp_path: Path) -> None:
    src = shared_trace("inputs/comp_failure.log", tmp_path)
    original = src.read_bytes()
    assert run_redact([str(src), "-o", str(src), *map_args()]) == 2
    assert src.read_bytes() == original
    assert run_redact([str(src), "--in-place", *map_args()]) == 0
    assert "/data/users" not in src.read_text(encoding="utf-8")
    assert len(list(tmp_path.iterdir())) == 1, "no temporary file left behind"


def test_no_mapping_is_an_error(tmp_path: Path) -> None:
    src = shared_trace("inputs/simple.log", tmp_path)
    assert run_redact([str(src), "-o", str(tmp_path / "x.log")]) == 2


def test_user_name_only_in_paths(tmp_path: Path) -> None:
    src = shared_trace("inputs/cache_hit_miss.log", tmp_path)
    out = tmp_path / "out.log"
    assert run_redact([str(src), "-o", str(out), "--user", "xmfan=USER"]) == 0
    before, after = src.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    assert "/data/users/xmfan/" in before
    assert "/xmfan" not in after
    assert after.count("/data/users/USER/") == before.count("/data/users/xmfan/")
    for head, payload in records(after):
        meta = envelope(head)
        if meta and "has_payload" in meta:
            assert meta["has_payload"] == md5("\n".join(payload))


def test_auto_maps_this_machine(tmp_path: Path) -> None:
    """Make a real trace look as if this machine wrote it, then check --auto removes it all."""
    src = shared_trace("inputs/simple.log", tmp_path)
    local = tmp_path / "local.log"
    here = {
        "/data/users/xmfan/a/pytorch": sys.prefix,
        "/home/xmfan": str(Path.home()),
    }
    args = [a for old, new in here.items() for a in ("--map", f"{old}={new}")]
    assert run_redact([str(src), "-o", str(local), *args]) == 0
    assert sys.prefix in local.read_text(encoding="utf-8")
    out = tmp_path / "auto.log"
    assert run_redact([str(local), "-o", str(out), "--auto"]) == 0
    text = out.read_text(encoding="utf-8")
    assert sys.prefix not in text
    assert re.search(rf"{re.escape(str(Path.home()))}(?![\w-])", text) is None
    # The interpreter's prefix becomes $PREFIX, or $VENV when it is a virtual environment (CI).
    assert "$PREFIX" in text or "$VENV" in text


def test_json_escaped_windows_paths() -> None:
    # No public trace was made on Windows, so this record is built here: a path inside a JSON
    # string (escaped once in the envelope, twice when JSON is nested in a JSON string) and raw
    # in the payload.
    old = "C:\\Users\\alice\\proj"
    payload = f'File "{old}\\model.py", line 3\n{{"cfg": {json.dumps(json.dumps(old))}}}'
    meta = {"artifact": {"name": "x", "co_filename": old + "\\m.py"}, "has_payload": md5(payload)}
    head = "V1121 19:47:56.796000 3173 torch/_dynamo/utils.py:1] " + json.dumps(meta)
    lines = [head, *("\t" + p for p in payload.split("\n"))]
    red = redact.Redactor([redact.Mapping(old, "$HOME")])
    out = list(redact.redact_lines(lines, red, redact.Stats()))
    text = "\n".join(out)
    assert "alice" not in text
    new_meta = envelope(out[0])
    assert new_meta is not None
    assert new_meta["artifact"]["co_filename"] == "$HOME\\m.py"
    new_payload = "\n".join(line[1:] for line in out[1:])
    assert new_meta["has_payload"] == md5(new_payload)
    assert json.loads(json.loads(new_payload.split("\n")[1])["cfg"]) == "$HOME"


def test_streams_one_record_at_a_time() -> None:
    """redact_lines must yield a record before reading past it: an endless log still flows."""
    payload = "/home/u/x.py"
    head = "V1121 19:47:56.796000 1 a.py:1] " + json.dumps({"artifact": {"name": "a"}, "has_payload": md5(payload)})

    def endless() -> Iterator[str]:
        while True:
            yield head
            yield "\t" + payload

    out = redact.redact_lines(endless(), redact.Redactor([redact.Mapping("/home", "/H")]), redact.Stats())
    first = [next(out) for _ in range(4)]
    assert first[1] == "\t/H/u/x.py"
    assert envelope(first[2])["has_payload"] == md5("/H/u/x.py")  # type: ignore[index]


def test_cli_subcommand(tmp_path: Path) -> None:
    src = shared_trace("inputs/comp_failure.log", tmp_path)
    out = tmp_path / "out.log.gz"
    proc = subprocess.run(
        [sys.executable, "-m", "tlscope", "redact", str(src), "-o", str(out), *map_args()],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "payload MD5s recomputed" in proc.stderr
    assert "/data/users" not in read_text(out)


_path_chars = st.sampled_from(
    ["/data/users", "/data/usersX", "/home", "x", "/", "\\", '"', "é", "\r", " ", "\t", "a/home/b", "\\/home"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_path_chars, max_size=8).map("".join), min_size=0, max_size=5))
def test_payload_md5_always_checks(payload_lines: list[str]) -> None:
    payload = "\n".join(payload_lines)
    meta = {"artifact": {"name": "p", "path": payload}, "has_payload": md5(payload)}
    lines = (
        ["V1121 19:47:56.796000 1 a.py:1] " + json.dumps(meta), *("\t" + p for p in payload.split("\n"))]
        if payload_lines
        else ["V1121 19:47:56.796000 1 a.py:1] " + json.dumps({"artifact": {"name": "p"}})]
    )
    red = redact.Redactor([redact.Mapping(k, v) for k, v in MAPS.items()])
    out = list(redact.redact_lines(lines, red, redact.Stats()))
    new_records = list(records("\n".join(out)))
    assert len(new_records) == 1
    head, new_payload = new_records[0]
    new_meta = envelope(head)
    assert new_meta is not None
    if payload_lines:
        assert new_meta["has_payload"] == md5("\n".join(new_payload))
        assert "\n".join(new_payload) == oracle(payload)
        assert new_meta["artifact"]["path"] == oracle(payload)
