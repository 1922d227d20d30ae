"""Items 7-9: the patterns that took the square of their input, replaced by linear code.

Each replacement must give exactly what the original pattern gave (checked on many random
strings made of the characters that matter), and must finish on the inputs that made the
original run for minutes: those run in a subprocess with a time limit (a hang check, not a
speed target: the old code needs hours on them, the new one well under a second).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest
from helpers import REPO

from tlscope.analyse import naming
from tlscope.analyse.ranks import parity
from tlscope.read import glog

#: The original patterns (tlparse's, and tlscope's before issue 9).
SEED_NSPID = re.compile(r"[^/]+-seed-nspid[^/]+/")
LOOSE_PREFIX = re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]\n]*\] ")
TAGS = re.compile(r"<[^>]*>", re.DOTALL)
BLOCK_COMMENTS = re.compile(r"/\*.*?\*/", re.DOTALL)


def random_strings(atoms: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(atoms) for _ in range(rng.randrange(0, 14))) for _ in range(count)]


def test_seed_nspid_is_tlparses_rule() -> None:
    atoms = ["/", "a", "-seed-nspid", "-seed-nspi", "d", "x/", "-", "é"]
    for text in random_strings(atoms, 100_000, 1):
        match = SEED_NSPID.search(text)
        assert naming.simplify_filename(text) == (text if match is None else text[match.end() :]), text
    assert naming.simplify_filename("/buck/x-seed-nspid4026531836_cgpid1-ns-4026531840/torch/a.py") == "torch/a.py"


def test_loose_prefix_end_is_the_loose_regex() -> None:
    atoms = ["V1121 19:30:32.270000 1 ", "I0101 00:00:00.000000   12 ", "]", "] ", "x", "\n", ":", "a.py:3", " "]
    for text in random_strings(atoms, 100_000, 2):
        match = LOOSE_PREFIX.search(text)
        assert glog.loose_prefix_end(text) == (match.end() if match else None), text


@pytest.mark.parametrize("pattern, close", [(TAGS, ">"), (BLOCK_COMMENTS, "*/")])
def test_parity_stripping_is_the_original_substitution(pattern: re.Pattern[str], close: str) -> None:
    atoms = ["<", ">", "/*", "*/", "/", "*", "a", "\n", "<a", "*/*", "/*/"]
    for text in random_strings(atoms, 100_000, 3):
        assert parity._sub_before_last(pattern, text, close) == pattern.sub("", text), text


def test_parity_counts_are_unchanged_on_real_looking_code() -> None:
    code = (
        "# all_reduce in a comment\n/* torch.ops._c10d_functional.all_reduce.default( */\n"
        "<span>torch.ops._c10d_functional.all_reduce_.default(</span>(buf0)\n"
        "torch.ops._c10d_functional.wait_tensor.default(buf0)\n"
    )
    counts, waits = parity.code_counts(code)
    assert dict(counts) == {"all_reduce": 1} and waits == 1


_HANG_CASES: dict[str, str] = {
    "seed-nspid": "naming.simplify_filename('a' * 4_000_000 + '-seed-nspid' + 'b' * 4_000_000)",
    "loose prefix": "glog.loose_prefix_end('V1121 19:30:32.270000 1 ' * 200_000)",
    "block comments": "parity.code_counts('/*a' * 1_000_000)",
    "tags": "parity.code_counts('<a' * 1_000_000)",
}


@pytest.mark.parametrize("case", sorted(_HANG_CASES))
def test_no_hang_on_the_inputs_that_made_the_originals_quadratic(case: str) -> None:
    script = "from tlscope.analyse import naming\nfrom tlscope.analyse.ranks import parity\n"
    script += f"from tlscope.read import glog\n{_HANG_CASES[case]}\n"
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
