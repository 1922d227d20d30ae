"""Which settings differ between two runs (analyse/config_diff.py, `tlscope diff`'s
`summary.config`): on corpus pairs read against the logs' own first metrics records parsed here
(cache_changed: one Inductor option; pgo: a job id and TORCH_COMPILE_DYNAMIC_SOURCES; caches: two
runs of one program, nothing), and on hostile configs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.analyse.config_diff import MAX_CHANGES, VALUE_WIDTH, config_diff, config_lines, configs_of
from tlscope.cli import main as cli

FIELDS = {"dynamo_config": "dynamo", "compiler_config": "compiler", "functorch_config": "functorch"}
FIELDS["inductor_config"] = "inductor"


def _log(folder: str) -> Path:
    return next((CORPUS / folder).glob("*.log.gz"))


def _first_configs(folder: str) -> dict[str, dict[str, Any]]:
    """The configs of the log's first compilation_metrics envelope, parsed here."""
    for line in gzip.decompress(_log(folder).read_bytes()).decode().splitlines():
        if '"compilation_metrics"' in line and not line.startswith("\t"):
            metrics = json.loads(line[line.index("{") :])["compilation_metrics"]
            return {FIELDS[k]: json.loads(v) for k, v in metrics.items() if k in FIELDS and isinstance(v, str)}
    raise AssertionError(f"{folder} logs no compilation_metrics")


def _expected(a: str, b: str) -> list[tuple[str, str, Any, Any]]:
    x, y = _first_configs(a), _first_configs(b)
    return [
        (section, key, x[section].get(key, "absent"), y[section].get(key, "absent"))
        for section in FIELDS.values()
        for key in sorted(x[section].keys() | y[section].keys())
        if x[section].get(key, "absent") != y[section].get(key, "absent")
    ]


@pytest.mark.parametrize(
    ("a", "b"), [("cache_changed/run1", "cache_changed/run2"), ("pgo/run1", "pgo/run3"), ("caches/run1", "caches/run2")]
)
def test_diff_names_every_setting_that_differs(a: str, b: str, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["diff", str(_log(a)), str(_log(b)), "--json"])
    found = json.loads(capsys.readouterr().out)["summary"]["config"]
    want = _expected(a, b)
    if not want:
        assert found is None  # two runs of one program log equal configs
        return
    assert [(c["section"], c["key"], c["a"], c["b"]) for c in found["changed"]] == [
        (s, k, repr(x), repr(y)) for s, k, x, y in want
    ]
    assert found["more"] == 0


def test_the_header_says_the_setting_first(capsys: pytest.CaptureFixture[str]) -> None:
    cli(["diff", str(_log("cache_changed/run1")), str(_log("cache_changed/run2"))])
    out = capsys.readouterr().out
    assert "  config differs: inductor fallback_random: False -> True" in out
    assert out.index("config differs") < out.index("Details:")


def test_values_missing_long_or_malformed() -> None:
    a = configs_of({"dynamo_config": '{"x": 1, "ops": ["a", "b"], "gone": true}', "inductor_config": "{not json"})
    b = configs_of({"dynamo_config": json.dumps({"x": 1, "ops": ["a"] * 200 + ["c"], "new": None})})
    assert set(a) == {"dynamo"} and set(b) == {"dynamo"}  # a malformed section is left out
    found = config_diff(a, b)
    assert found is not None
    by_key = {c.key: c for c in found.changed}
    assert list(by_key) == ["gone", "new", "ops"]  # `x` is equal
    assert by_key["gone"].b is None and by_key["new"].a is None
    assert by_key["ops"].b is not None and len(by_key["ops"].b) <= VALUE_WIDTH and by_key["ops"].b.endswith("…")
    assert config_lines(found)[0] == "dynamo gone: True -> (not in B's config)"
    assert config_diff(a, {}) is None and config_diff({}, b) is None  # a side without configs says nothing
    assert configs_of(None) == {} and configs_of({"dynamo_config": 5}) == {}
    many = config_diff({"dynamo": {str(i): i for i in range(50)}}, {"dynamo": {str(i): -i - 1 for i in range(50)}})
    assert many is not None and len(many.changed) == MAX_CHANGES and many.more == 50 - MAX_CHANGES
    assert config_lines(many)[-1] == f"… {50 - MAX_CHANGES} more settings differ"


def test_a_path_of_the_machine_is_no_setting_changed(capsys: pytest.CaptureFixture[str]) -> None:
    """Corpus edited: one script run from two folders. Inductor's `xpu.cutlass_dir` is the real
    path of an unset TORCHINDUCTOR_CUTLASS_DIR, the working directory: it differed, and said
    `config differs` of a run whose settings no one changed. torch leaves the cutlass paths out of
    its cache key as absolute paths; the diff leaves them out too, and says a real change beside."""
    cli(["diff", str(_log("edited/run1")), str(_log("edited/run2"))])
    assert "config differs" not in capsys.readouterr().out
    a = {"inductor": {"xpu.cutlass_dir": "/a", "cuda.cutlass_dir": "/t/a", "max_autotune": False}}
    b = {"inductor": {"xpu.cutlass_dir": "/b", "cuda.cutlass_dir": "/t/b", "max_autotune": True}}
    found = config_diff(a, b)
    assert found is not None and [c.key for c in found.changed] == ["max_autotune"]
