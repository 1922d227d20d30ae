"""raw.jsonl parity with tlparse 0.4.3, line by line, on every public trace.

tlscope's raw.jsonl has the same event lines as tlparse's, in the same order, with the same
event data. The only differences are the documented ones (docs/FORMAT.md, deviations), and the
comparison removes or normalises exactly those fields and nothing else:

- `process` is tlparse's `thread` (the glog process id);
- `pathname` has no leading space (tlparse's regex keeps the space before the path);
- `timestamp` is honest ISO-8601: year and UTC offset fitted from the log (tlparse: the
  current year and `Z`); the month, day and time of day are the same;
- `log_line` and `payload_size` are tlscope's additions;
- `payload_filename` is always `payloads/<md5 tlscope computed>.txt` (tlparse points at its
  parser's output file, or at `payloads/<has_payload>.txt`).

One more difference is tlparse's, not tlscope's: serde_json (without `float_roundtrip`) reads
some floats one or two ulps off (links.log: `1715885247.9018195` becomes `...9018197`). So
tlscope's line is first compared exactly with the log's own envelope, then with tlparse's
allowing floats to differ by at most two ulps.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import GLOG, all_traces, trace_path

from tlscope.cli import main

PAYLOAD_NAME = re.compile(r"payloads/([0-9a-f]{32})\.txt")


def run_both(log: Path, tlparse_bin: Path, tmp: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ours, theirs = tmp / "tlscope", tmp / "tlparse"
    assert main(["--no-browser", str(log), "-o", str(ours)]) == 0
    done = subprocess.run(
        [str(tlparse_bin), str(log), "--overwrite", "--no-browser", "-o", str(theirs)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return _jsonl(ours / "raw.jsonl"), _jsonl(theirs / "raw.jsonl")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def same_json(a: Any, b: Any, *, ulps: int = 0) -> bool:
    """Equal as JSON; floats may differ by `ulps` units in the last place (ints stay exact)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k], ulps=ulps) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y, ulps=ulps) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= ulps * math.ulp(max(abs(a), abs(b)))
    return type(a) is type(b) and a == b


def log_envelope(lines: list[bytes], number: int) -> dict[str, Any]:
    """The envelope on 1-based line `number` of the log, parsed independently of tlscope."""
    line = lines[number - 1].removesuffix(b"\r")
    match = GLOG.search(line)
    assert match is not None, number
    envelope: dict[str, Any] = json.loads(line[match.end() :])
    return envelope


def split_ours(line: dict[str, Any], out: Path) -> dict[str, Any]:
    """Remove tlscope's added fields, checking each one's promise on the way."""
    rest = dict(line)
    assert isinstance(rest.pop("log_line"), int)
    name, size = rest.pop("payload_filename", None), rest.pop("payload_size", None)
    if name is not None:
        match = PAYLOAD_NAME.fullmatch(name)
        assert match, name
        data = (out / name).read_bytes()
        assert hashlib.md5(data).hexdigest() == match.group(1)
        assert size == len(data)
    else:
        assert size is None
    return rest


def check_timestamp(ours: str, theirs: str, clock: dict[str, Any]) -> None:
    parsed = dt.datetime.fromisoformat(ours)
    # Same wall-clock month, day and time of day: only the year and zone are completed.
    assert ours[4:26] == theirs[4:26], (ours, theirs)
    assert theirs.endswith("Z") and ours[:4].isdigit()
    assert abs(parsed.year - clock["year"]) <= 1
    if clock["utc_offset_minutes"] is None:
        assert parsed.tzinfo is None
    else:
        assert parsed.utcoffset() == dt.timedelta(minutes=clock["utc_offset_minutes"])


@pytest.mark.parametrize("rel", all_traces())
def test_raw_jsonl_matches_tlparse(rel: str, tlparse_bin: Path, tmp_path: Path) -> None:
    log = trace_path(rel)
    ours, theirs = run_both(log, tlparse_bin, tmp_path)
    assert len(ours) == len(theirs)
    assert ours[0] == theirs[0]  # the string table line
    assert list(ours[0]) == ["string_table"]
    lines = log.read_bytes().split(b"\n")
    clock = json.loads((tmp_path / "tlscope" / "manifest.json").read_text())["clock"]
    for number, (mine, tl) in enumerate(zip(ours[1:], theirs[1:], strict=True), start=2):
        where = f"{rel} raw.jsonl line {number} (log line {mine['log_line']})"
        mine_env, tl_env = split_ours(mine, tmp_path / "tlscope"), dict(tl)
        if "payload_filename" in tl_env:
            assert "payload_filename" in mine, where
        tl_env.pop("payload_filename", None)
        assert mine_env.pop("process") == tl_env.pop("thread"), where
        assert " " + mine_env.pop("pathname") == tl_env.pop("pathname"), where
        check_timestamp(mine_env.pop("timestamp"), tl_env.pop("timestamp"), clock)
        assert mine_env.pop("lineno") == tl_env.pop("lineno"), where
        assert same_json(mine_env, log_envelope(lines, mine["log_line"])), where
        assert same_json(mine_env, tl_env, ulps=2), where


def test_float_comparison_is_not_loose() -> None:
    """The ulp allowance above cannot hide a real difference."""
    assert same_json({"a": [1.5]}, {"a": [1.5]})
    assert not same_json({"a": 1.5}, {"a": 1.5000001}, ulps=2)
    assert not same_json({"a": 1}, {"a": 1.0}, ulps=2)
    assert not same_json({"a": 1}, {"a": 1, "b": None})
    assert same_json(1715885247.9018195, 1715885247.9018197, ulps=2)
    assert not same_json(1715885247.9018195, 1715885247.9018197)
