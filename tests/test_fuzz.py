"""The fuzz harness (bench/mutate.py, bench/fuzzrun.py) and a bounded, seeded campaign.

The harness is shown able to fail first: stand-in commands that raise, hang, write outside
OUT, leave a temporary folder, a half-written OUT or a process behind are each caught. Then
the bounded campaign runs mutated real traces through tlscope itself (single-log parses in
every mode, multi-rank folders, split, redact) and must find nothing. Long campaigns:
`python bench/fuzz.py` (bench/README.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO, TLPARSE_TRACES, load_script

mutate = load_script("bench", "mutate")
fuzzrun = load_script("bench", "fuzzrun")

#: The bounded campaign: its seed and size (deterministic for a given set of traces).
SEED = 20251123
INPUTS = int(os.environ.get("TLSCOPE_FUZZ_INPUTS", "2000"))


@pytest.fixture(scope="module")
def pool() -> Any:
    return mutate.load_pool([CORPUS, TLPARSE_TRACES])


# -- the cases ---------------------------------------------------------------------------------


def test_cases_are_a_function_of_seed_and_index(pool: Any) -> None:
    for index in (0, 7, 123):
        a, b = mutate.make_case(pool, 5, index), mutate.make_case(pool, 5, index)
        assert (a.argv, a.files, a.kinds) == (b.argv, b.files, b.kinds)
    assert mutate.make_case(pool, 5, 1).files != mutate.make_case(pool, 6, 1).files


def test_every_mutation_kind_changes_a_real_trace(pool: Any) -> None:
    source = next(s for s in pool.singles if "recompiles" in s.name or "simple" in s.name)
    original = mutate.encode_log([r.copy() for r in source.records()])
    for kind, mutator in mutate.RECORD_MUTATIONS.items():
        changed = 0
        for seed in range(10):
            records = [r.copy() for r in source.records()]
            mutator(records, mutate.random.Random(seed), pool)
            changed += mutate.encode_log(records) != original
        assert changed >= 5, kind


def test_cases_cover_every_target_and_kind(pool: Any) -> None:
    seen: Counter[str] = Counter()
    for index in range(600):
        case = mutate.make_case(pool, 1, index)
        seen[case.target] += 1
        seen.update(case.kinds)
    wanted = {*mutate.TARGETS, *mutate.RECORD_MUTATIONS, "truncate", "non_log", "gzip_cut", "gzip_crc"}
    assert wanted <= set(seen), wanted - set(seen)


def test_gzip_damage_kinds_really_damage(pool: Any) -> None:
    rng = mutate.random.Random(3)
    data = pool.singles[0].files[0][1][:20000]
    kinds = set()
    for _ in range(200):
        packed, kind = mutate.compress(data, rng)
        kinds.add(kind)
        if kind in ("gzip_cut", "gzip_crc"):
            with pytest.raises((EOFError, OSError)):
                mutate.gzip.decompress(packed)
    assert {"gzip_cut", "gzip_crc", "gzip_damage", "gzip_trailing"} <= kinds


# -- the checks can fail -------------------------------------------------------------------------

_ENTRIES = """
import os, subprocess, sys, tempfile, time
from pathlib import Path

def good(argv):
    Path("out").mkdir()
    Path("out/manifest.json").write_text("{}")
    return 0

def crash(argv):
    raise ValueError("boom")

def hang(argv):
    time.sleep(600)

def outside(argv):
    good(argv)
    Path("stray.txt").write_text("x")
    return 0

def temp_left(argv):
    tempfile.mkdtemp(prefix="tlscope-split-")
    return good(argv)

def half_written(argv):
    Path("out").mkdir()
    print("Error: gave up", file=sys.stderr)
    return 1

def orphan(argv):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    return good(argv)

def status_3(argv):
    good(argv)
    return 3

def silent_failure(argv):
    return 1

def changes_input(argv):
    Path("in/trace.log").write_bytes(b"changed")
    return good(argv)

def rank_crash(argv):
    good(argv)
    print("  rank 3: parse failed: internal error (KeyError: 'x')", file=sys.stderr)
    return 0
"""

_EXPECTED = {
    "good": [],
    "crash": ["traceback: ValueError at"],
    "hang": ["hang"],
    "outside": ["wrote outside OUT: stray.txt"],
    "temp_left": ["temporary files left"],
    "half_written": ["failed run left OUT behind"],
    "orphan": ["leftover processes: 1"],
    "status_3": ["exit status 3"],
    "silent_failure": ["exit 1 without a message"],
    "changes_input": ["input folder changed"],
    "rank_crash": ["rank internal error: (KeyError"],
}


@pytest.mark.parametrize("entry", sorted(_EXPECTED))
def test_the_harness_catches(entry: str, tmp_path: Path) -> None:
    module = tmp_path / "entries.py"
    module.write_text(textwrap.dedent(_ENTRIES))
    case = mutate.Case(0, "parse", ["in/trace.log", "-o", "out"], {"trace.log": b"x\n"}, ["none"], "test")
    with fuzzrun.Runner(tmp_path / "scratch", jobs=1, timeout=3, entry=f"{module}:{entry}") as runner:
        [outcome] = list(runner.run([case]))
    for expected in _EXPECTED[entry]:
        assert any(f.startswith(expected) for f in outcome.failures), outcome.failures
    assert bool(outcome.failures) == bool(_EXPECTED[entry])


def test_a_failed_run_must_leave_an_existing_out_as_it_was(tmp_path: Path) -> None:
    module = tmp_path / "entries.py"
    wipe = "def wipe(argv):\n    shutil.rmtree('out')\n    print('Error: x', file=sys.stderr)\n    return 1\n"
    module.write_text("import shutil, sys\n" + wipe)
    case = mutate.Case(4, "parse", ["in/t.log", "-o", "out"], {"t.log": b""}, [], "test", existing_out=True)
    with fuzzrun.Runner(tmp_path / "scratch", jobs=1, timeout=5, entry=f"{module}:wipe") as runner:
        [outcome] = list(runner.run([case]))
    assert outcome.failures == ["failed run changed the existing OUT"]


def test_traceback_signature_names_the_innermost_tlscope_frame() -> None:
    stderr = textwrap.dedent(
        """\
        Traceback (most recent call last):
          File "/x/tlscope/cli.py", line 3, in main
          File "/x/tlscope/read/reader.py", line 9, in _envelope
          File "/usr/lib/python3/json/decoder.py", line 1, in decode
        RecursionError: maximum recursion depth exceeded
        """
    )
    assert fuzzrun.traceback_signature(stderr) == "RecursionError at reader.py:_envelope"


# -- the bounded campaign ------------------------------------------------------------------------


def test_bounded_campaign_finds_nothing(pool: Any, tmp_path: Path) -> None:
    """INPUTS mutated real traces through tlscope: no traceback, hang, stray write, leftover."""
    cases = (mutate.make_case(pool, SEED, i) for i in range(INPUTS))
    failures: dict[str, list[int]] = {}
    kinds: Counter[str] = Counter()
    with fuzzrun.Runner(tmp_path / "scratch", jobs=2, timeout=20) as runner:
        for outcome in runner.run(cases):
            kinds.update({outcome.target, *outcome.kinds})
            for failure in outcome.failures:
                failures.setdefault(failure, []).append(outcome.index)
    assert not failures, {k: v[:5] for k, v in failures.items()}  # replay: bench/fuzz.py --replay N --seed SEED
    assert set(mutate.TARGETS) <= set(kinds) and set(mutate.RECORD_MUTATIONS) <= set(kinds)


# -- the coverage-guided harness ---------------------------------------------------------------


def test_atheris_harness_runs_clean(tmp_path: Path) -> None:
    """A short libFuzzer session on the reader (pip install -e ".[fuzz]"); longer ones by hand."""
    pytest.importorskip("atheris", reason='atheris is not installed (pip install -e ".[fuzz]")')
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "seed").write_bytes(b'V1121 19:30:32.270000 1 a.py:1] {"str": ["/a.py", 0]}\n')
    command = [sys.executable, str(REPO / "bench" / "atheris_reader.py"), "-runs=3000", "-seed=1", str(corpus)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done 3000 runs" in done.stderr
