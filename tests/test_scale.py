"""corpus/scale.py on real traces: size reached, compile ids multiplied, payload md5s valid.

The checks re-parse the output here, independently of the scaler's own code, so a scaler bug
cannot hide behind a shared helper.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import require_shared, stored_payloads_once

REPO = Path(__file__).resolve().parents[1]
SCALE = REPO / "corpus" / "scale.py"
PREFIX = re.compile(r"^.*?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] (\{.*)$")

sys.path.insert(0, str(REPO / "corpus"))
import scale as scale_module  # noqa: E402  (corpus/ is scripts, not a package)


def real_trace(name: str) -> Path:
    path = require_shared() / "inputs" / name
    if not path.is_file():
        pytest.skip(f"real trace {path} not available")
    return path


class Summary:
    """What a trace contains, as far as these tests care."""

    def __init__(self, path: Path) -> None:
        self.envelopes = 0
        self.string_table: list[Any] = []
        self.compile_ids: set[tuple[Any, ...]] = set()
        self.chromium_ids: Counter[str] = Counter()
        self.md5_ok = 0
        self.md5_bad = 0
        self._read(path)

    def _read(self, path: Path) -> None:
        record: dict[str, Any] | None = None
        payload: list[str] = []
        with path.open(encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("\t") and record is not None:
                    payload.append(line[1:].rstrip("\n"))
                    continue
                self._finish(record, payload)
                record, payload = self._envelope(line), []
        self._finish(record, payload)

    def _envelope(self, line: str) -> dict[str, Any] | None:
        match = PREFIX.match(line.rstrip("\n"))
        if match is None:
            return None
        try:
            value = json.loads(match.group(1))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _finish(self, record: dict[str, Any] | None, payload: list[str]) -> None:
        if record is None:
            return
        if "str" in record:
            self.string_table.append(record["str"])
            return
        self.envelopes += 1
        if record.get("frame_id") is not None:
            key = ("compiled_autograd_id", "frame_id", "frame_compile_id", "attempt")
            self.compile_ids.add(tuple(record.get(k) for k in key))
        if isinstance(record.get("has_payload"), str):
            text = "\n".join(payload)
            if hashlib.md5(text.encode()).hexdigest() == record["has_payload"]:
                self.md5_ok += 1
            else:
                self.md5_bad += 1
            if "chromium_event" in record:
                self._chromium(text)

    def _chromium(self, text: str) -> None:
        try:
            event = json.loads(text)
        except ValueError:
            return  # simple_corrupted_json.log corrupts one of these on purpose
        compile_id = event.get("args", {}).get("compile_id")
        if compile_id not in (None, "None"):
            self.chromium_ids[compile_id] += 1


def run_scale(src: Path, dst: Path, size: str) -> None:
    subprocess.run(
        [sys.executable, str(SCALE), str(src), "--size", size, "-o", str(dst)],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def scaled_simple(tmp_path_factory: pytest.TempPathFactory) -> tuple[Summary, Summary, Path]:
    src = real_trace("simple.log")
    dst = tmp_path_factory.mktemp("scale") / "simple_x.log"
    run_scale(src, dst, "3MB")
    return Summary(src), Summary(dst), dst


def copies_of(before: Summary, after: Summary) -> int:
    copies, rest = divmod(after.envelopes, before.envelopes)
    assert rest == 0, "output must hold whole copies of the input"
    return copies


def test_output_reaches_requested_size(scaled_simple: tuple[Summary, Summary, Path]) -> None:
    _, _, dst = scaled_simple
    assert dst.stat().st_size >= 3_000_000


def test_compile_ids_multiply(scaled_simple: tuple[Summary, Summary, Path]) -> None:
    before, after, _ = scaled_simple
    copies = copies_of(before, after)
    assert copies > 1
    assert before.compile_ids
    assert len(after.compile_ids) == copies * len(before.compile_ids)


def test_chromium_compile_ids_follow(scaled_simple: tuple[Summary, Summary, Path]) -> None:
    before, after, _ = scaled_simple
    copies = copies_of(before, after)
    assert before.chromium_ids, "simple.log has chromium events with compile ids"
    assert len(after.chromium_ids) == copies * len(before.chromium_ids)
    # Each shifted id occurs exactly as often as its original did.
    assert sorted(after.chromium_ids.values()) == sorted(list(before.chromium_ids.values()) * copies)


def test_every_payload_md5_checks(scaled_simple: tuple[Summary, Summary, Path]) -> None:
    before, after, _ = scaled_simple
    assert before.md5_bad == 0
    assert after.md5_bad == 0
    assert after.md5_ok == copies_of(before, after) * before.md5_ok


def test_string_table_written_once(scaled_simple: tuple[Summary, Summary, Path]) -> None:
    before, after, _ = scaled_simple
    assert before.string_table
    assert after.string_table == before.string_table


def test_gzipped_input_gives_same_output(tmp_path: Path) -> None:
    src = real_trace("simple.log")
    packed = tmp_path / "simple.log.gz"
    with src.open("rb") as raw, gzip.open(packed, "wb") as gz:
        shutil.copyfileobj(raw, gz)
    run_scale(src, tmp_path / "plain.out", "1MB")
    run_scale(packed, tmp_path / "gz.out", "1MB")
    assert (tmp_path / "plain.out").read_bytes() == (tmp_path / "gz.out").read_bytes()


def test_broken_input_stays_broken_but_scales(tmp_path: Path) -> None:
    # A bad md5 in the input must not be silently "fixed", and a corrupt line must not crash.
    src = real_trace("simple_corrupted_json.log")
    dst = tmp_path / "corrupt_x.log"
    run_scale(src, dst, "1MB")
    before, after = Summary(src), Summary(dst)
    copies = copies_of(before, after)
    assert before.md5_bad == 1
    assert after.md5_bad == copies * before.md5_bad
    assert len(after.compile_ids) == copies * len(before.compile_ids)


def test_compile_id_shift_keeps_autograd_and_attempt() -> None:
    assert scale_module.shift_compile_id_value("!2/3/1_1", 10) == "!2/13/1_1"
    assert scale_module.shift_compile_id_value("0/0", 5) == "5/0"
    assert scale_module.shift_compile_id_value("None", 5) == "None"
    text = b'"compile_id": "1/2", "x": "\\"compile_id\\": \\"1/2\\""'
    assert scale_module.shift_compile_id_text(text, 4) == (b'"compile_id": "5/2", "x": "\\"compile_id\\": \\"1/2\\""')


@pytest.mark.parametrize(
    ("text", "expected"),
    [("500MB", 500_000_000), ("64MiB", 64 * 2**20), ("1000", 1000), ("1.5 GB", 1_500_000_000)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert scale_module.parse_size(text) == expected


def test_parse_size_rejects_garbage() -> None:
    with pytest.raises(Exception, match="bad size"):
        scale_module.parse_size("lots")


# -- a generated job of 64 ranks (corpus/scale.py --ranks) ---------------------------------------


@pytest.fixture(scope="module")
def job64(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """64 ranks from the corpus's 4 real rank logs (frames 0-3 only, to stay small), parsed."""
    from tlscope.pipeline.parse import parse

    root = tmp_path_factory.mktemp("job64")
    logs = root / "logs"
    source = REPO / "corpus" / "traces" / "ranks_same_4"
    run = subprocess.run(
        [sys.executable, str(SCALE), str(source), "--ranks", "64", "--frames", "4", "--seed", "3", "-o", str(logs)],
        capture_output=True,
        check=True,
    )
    assert b"64 ranks" in run.stdout
    parse(logs, root / "out", all_ranks=True, jobs=2)
    return logs, root / "out", json.loads((logs / "job_plan.json").read_text())


def test_a_generated_job_has_every_rank_with_its_rank_in_every_line(job64: tuple[Path, Path, dict[str, Any]]) -> None:
    logs, out, plan = job64
    names = sorted(p.name for p in logs.glob("*.log"))
    assert len(names) == 64 and (plan["ranks"], len(plan["stragglers"]), len(plan["diverging"])) == (64, 1, 1)
    for path in [logs / n for n in names[:8]]:
        rank = int(re.search(r"rank_(\d+)", path.name).group(1))  # type: ignore[union-attr]
        seen = Counter(
            json.loads(m.group(1)).get("rank") for line in path.read_text().splitlines() if (m := PREFIX.match(line))
        )
        assert set(seen) <= {rank, None} and seen[rank] > 50, (path.name, seen)
    manifests = [json.loads((out / f"rank_{r}" / "manifest.json").read_text()) for r in range(64)]
    assert all(m["ranks"] == [r] and m["problems"]["total"] == 0 for r, m in enumerate(manifests))


def test_the_generated_straggler_and_diverging_rank_are_found(job64: tuple[Path, Path, dict[str, Any]]) -> None:
    _, out, plan = job64
    ranks = json.loads((out / "ranks.json").read_text())
    assert [s["rank"] for s in ranks["stragglers"]["ranks"]] == plan["stragglers"]
    groups = ranks["divergence"]["groups"]
    assert ranks["divergence"]["diverges"] and [g["ranks"] for g in groups if g["missing"]] == [plan["diverging"]]
    odd = plan["stragglers"] + plan["diverging"]
    for source in range(4):  # rank r is a copy of real rank r % 4, which compiled in its own time
        times = [
            line["compile_time_s"] for line in ranks["ranks"] if line["rank"] % 4 == source and line["rank"] not in odd
        ]
        assert max(times) / min(times) < 1.07, "jitter: a factor of 0.97-1.03 per rank"
        assert max(times) > min(times), "jitter: no two copies alike"


def test_a_generated_jobs_sentences_say_its_ranks_as_ranges(job64: tuple[Path, Path, dict[str, Any]]) -> None:
    """63 ranks in one group: said as the ranges around the diverging rank and the count, not 63
    numbers (a 1,000-rank job's sentence held 990). The ranges are checked against the plan."""
    _, out, plan = job64
    (diverging,) = plan["diverging"]
    groups = json.loads((out / "ranks.json").read_text())["divergence"]["groups"]
    big = next(g for g in groups if len(g["ranks"]) == 63)
    below = f"0-{diverging - 1}" if diverging >= 4 else ", ".join(map(str, range(diverging)))
    above = f"{diverging + 1}-63" if 63 - diverging >= 4 else ", ".join(map(str, range(diverging + 1, 64)))
    said = ", ".join(part for part in (below, above) if part)
    assert big["sentence"].startswith(f"ranks {said} (63 ranks): ")
    assert next(g for g in groups if g["ranks"] == [diverging])["sentence"].startswith(f"rank {diverging}: lacks ")


def test_a_generated_jobs_timeline_has_every_rank_at_its_own_times(job64: tuple[Path, Path, dict[str, Any]]) -> None:
    from tlscope import timeline

    _, out, plan = job64
    events = timeline.read(out)
    assert sorted({e.rank for e in events}) == list(range(64))
    first = {}
    for e in events:
        first.setdefault(e.rank, e.start_us)
    assert len(set(first.values())) == 64, "each rank starts at its own offset"
    slow = plan["stragglers"][0]
    spans = {r: sum(e.dur_us for e in events if e.rank == r and e.name == "dynamo") for r in (slow, (slow + 4) % 64)}
    assert spans[slow] > 2.5 * spans[(slow + 4) % 64], "the straggler's compiles last 3x (same source log)"


def test_a_generated_jobs_payloads_are_stored_once(job64: tuple[Path, Path, dict[str, Any]]) -> None:
    logs, out, _ = job64
    files, linked = stored_payloads_once(out)
    per_rank = json.loads((out / "rank_0" / "manifest.json").read_text())["payloads"]["files"]
    assert files < 4 * per_rank + 10, "64 ranks copied from 4 real ones: about 4 ranks' payloads"
    assert linked >= 64 * per_rank // 2
    size = sum(p.stat().st_size for p in logs.glob("*.log"))
    stored = sum(p.stat().st_size for p in {f.stat().st_ino: f for f in out.rglob("*") if f.is_file()}.values())
    assert stored < 2.5 * size, (stored, size)
