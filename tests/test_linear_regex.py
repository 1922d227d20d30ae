"""Items 7-9: the patterns that took the square of their input, replaced by linear code
(and the same for the analysis patterns of compiles.json, analyse/fold/linear.py).

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

from tlscope.analyse.fold import graphbreaks, graphs, guards, linear
from tlscope.analyse.ranks import parity
from tlscope.analyse.tlparse import naming
from tlscope.read import glog

#: The original patterns (tlparse's, and tlscope's before issue 9).
SEED_NSPID = re.compile(r"[^/]+-seed-nspid[^/]+/")
LOOSE_PREFIX = re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]\n]*\] ")
TAGS = re.compile(r"<[^>]*>", re.DOTALL)
BLOCK_COMMENTS = re.compile(r"/\*.*?\*/", re.DOTALL)
#: The analysis patterns as compiles.json's first version searched them (issue 12).
SIGNATURE = re.compile(r"def forward\((?P<args>.*?)\)\s*(?:->[^:]*)?:", re.DOTALL)
ARG = re.compile(r'(?P<name>[A-Za-z_]\w*)\s*(?::\s*"(?P<type>[^"]*)")?\s*(?:,|$)')
FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<name>.+?)\s*$')
COMMENT = re.compile(r"\s{2,}#|\s+#\s")
OBJ_ID = re.compile(r"___check_obj_id\((?P<s>[^,]+),")
SIZE_OR_SYMBOL = re.compile(r"(?P<s>[\w\[\]'.()]*\.(?:size|stride)\(\)\[\d+\]|\bs\d+\b)")
#: Whitespace of every kind Python's \s knows, and characters near it that are not.
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\u200b"]


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


def same(a: re.Match[str] | None, b: re.Match[str] | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and a.span() == b.span() and a.groupdict() == b.groupdict()
    )


def test_forward_signature_is_the_original_search() -> None:
    atoms = ["def forward(", "def forward", ")", "):", ") ->", "->", ":", " ", "\n", "a", "(", '"Sym(s0)"']
    for text in random_strings(atoms, 100_000, 4):
        assert same(linear.forward_signature(graphs._SIGNATURE, text), SIGNATURE.search(text)), text


def test_word_led_matches_are_the_original_finditer() -> None:
    atoms = ["a", "b1", "_", "1", "é", "数", ",", ":", '"', ' "f32[3]"', " ", "!", "\n", "x: ", "self"]
    for text in random_strings(atoms, 100_000, 5):
        found = [(*m.span(), m["name"], m["type"]) for m in linear.word_led_matches(graphs._ARG, text)]
        assert found == [(*m.span(), m["name"], m["type"]) for m in ARG.finditer(text)], text


@pytest.mark.parametrize("pattern", [graphbreaks._FRAME, guards.patterns().user_frame])
def test_frame_lines_are_the_original_pattern(pattern: re.Pattern[str]) -> None:
    atoms = ['  File "a.py", line 3, in ', "f", "é", *SPACES, "<module>", "x y", '"', "\n"]
    for text in random_strings(atoms, 100_000, 6):
        assert same(pattern.match(text), FRAME.match(text)), text


def test_comment_start_is_the_original_search() -> None:
    atoms = ["#", "a", "'#'", *SPACES]
    for text in random_strings(atoms, 100_000, 7):
        match = COMMENT.search(text)
        assert linear.comment_start(text) == (None if match is None else match.start()), text


def test_comma_ended_search_is_the_original_search() -> None:
    atoms = ["___check_obj_id(", "___check_obj_id", ",", "(", "a", "x)", " "]
    for text in random_strings(atoms, 100_000, 8):
        assert same(linear.search_ending_by(guards.patterns().comma_ended[0], text, ","), OBJ_ID.search(text)), text


def test_size_or_symbol_is_the_original_search() -> None:
    atoms = [".size()[", ".stride()[", "1", "]", "s", "s1", "a", "L['x']", " ", ".", "(", ")", "()", "é", "-", "["]
    for text in random_strings(atoms, 200_000, 9):
        assert same(linear.size_or_symbol(guards.patterns().size_or_symbol, text), SIZE_OR_SYMBOL.search(text)), text


def test_device_and_dispatch_rules_are_the_original_search() -> None:
    leads = ["tensor 'x' device mismatch. expected ", "tensor 'x' dispatch key set mismatch. expected "]
    atoms = [*leads, "tensor '", "'", " actual ", ", actual ", "actual", ",", "a", "cpu", " ", "é"]
    rules = [p for p, _ in guards.patterns().rules if p.pattern.endswith(" actual (?P<act>.+)$")]
    assert len(rules) == 2
    for pattern in rules:
        for text in random_strings(atoms, 100_000, 11):
            assert same(guards._search(guards.patterns(), pattern, text), pattern.search(text)), text


def test_anchored_rules_match_as_they_searched() -> None:
    atoms = ["len(", ")", " == ", "1", "a", "=", "<", " ", "\n", "x"]
    for pattern in [p for p, _ in guards.patterns().rules if p.pattern.startswith("^")]:
        for text in random_strings(atoms, 20_000, 10):
            assert same(guards._search(guards.patterns(), pattern, text), pattern.search(text)), text


_HANG_CASES: dict[str, str] = {
    "seed-nspid": "naming.simplify_filename('a' * 4_000_000 + '-seed-nspid' + 'b' * 4_000_000)",
    "loose prefix": "glog.loose_prefix_end('V1121 19:30:32.270000 1 ' * 200_000)",
    "block comments": "parity.code_counts('/*a' * 1_000_000)",
    "tags": "parity.code_counts('<a' * 1_000_000)",
    "forward signature": "graphs.graph_shape('def forward(' * 400_000)",
    "forward arguments": "graphs.graph_shape('def forward(' + 'a' * 1_000_000 + '!):')",
    "frame line": "graphbreaks._user_traceback(['User code traceback:', "
    "'  File \"a\", line 1, in f' + ' ' * 1_000_000 + 'x'])",
    "guard comment": "guards.guard_failure('0/0: a' + ' ' * 1_000_000 + 'b')",
    "guard subject": "guards.guard_failure('0/0: ' + 'a' * 1_000_000)",
    "guard identity": "guards.guard_failure('0/0: ' + '___check_obj_id(' * 100_000)",
    "guard value": "guards.guard_failure('0/0: ' + 'a' * 1_000_000 + ' == b')",
    "guard device": "guards.guard_failure('0/0: ' + \"tensor 'x' device mismatch. expected \" * 100_000)",
    "guard tensor name": "guards.guard_failure('0/0: ' + \"tensor 'G['a']'\" * 100_000 + ' dtype mismatch.')",
    "guard empty": "guards.guard_failure('0/0: not ' + '(' * 1_000_000)",
    "guard dict key": "guards.guard_failure('0/0: ___dict_contains(' + 'a, ' * 300_000 + 'b)x')",
    "guard hasattr": "guards.guard_failure('0/0: hasattr(' + 'a, ' * 300_000 + 'b)x')",
    "guard none": "guards.guard_failure('0/0: ' + 'a' * 1_000_000 + ' is  None')",
    "guard tensor type": "guards.guard_failure(\"0/0: expected type of '\" + 'a' * 1_000_000)",
    "guard aliasing": "guards.guard_failure('0/0: Duplicate tensors found: ' + '\"a' * 500_000)",
    "skipped function": "graphbreaks.parse_graph_break('Graph Break Reason: Encountered graph break when attempting "
    "to trace x\\nAttempted to call function marked as skipped\\n' + ', qualname: ' + "
    "'Developer debug context: module: ' * 200_000)",
    "guard backend": "guards.guard_failure('0/0: BACKEND_MATCH failure: ' + 'Cached backend:  (id=' * 200_000)",
    # Format 1.46: a wrapped module's class, a view's storage offset, a resume function's name.
    "wrapped module": "callvalues.wrapped_module((\"source=L['fn']._modules source=L['fn'], \" + "
    '"type=<class \'a" * 200_000).encode())',
    "storage offset": "guards.guard_failure('0/0: 2 <= ' + 'a.' * 500_000 + 'storage_offset()x')",
    "resume name": "resume.resumed('torch_dynamo_resume_in_' + '_at_1' * 200_000 + 'x')",
    "second break": "compileacc.failure_headline(['Unsupported'] + ['*** While handling this graph break, "
    "another graph break occurred: ***'] * 200_000)",
    # Format 1.47: a method's class, a data-dependent operator named by its debug context.
    "method class": 'callvalues.method_class(("source=L[\'self\'], " + "type=<class \'a" * 200_000).encode())',
    "operator context": "graphbreaks.parse_graph_break('Graph Break Reason: Encountered graph break when attempting "
    "to trace x\\nDynamic shape operator\\n' + 'Developer debug context: ' * 200_000 + 'a' * 1_000_000)",
    # diff's source locations, each matched from a token's start only.
    "diff location": "diff.normalised('a' * 2_000_000 + ' ' + '/a.py' * 400_000)",
    # A ranks' graph print (format 1.30): names then blanks that never reach `=`, blank lines.
    "graph print names": "graph_divergence.structure_digest("
    "'def forward(self, x):\\n        a,' + ' ' * 1_000_000 + '\\n' + '\\n' * 1_000_000)",
    "graph print literal": "graph_divergence.structure_digest("
    "'def forward(self, x):\\n        a = f(' + '1' * 1_000_000 + 'x)\\n')",
    # Format 1.49: a big graph's comments, each a hostile line of places and functions.
    "graph comment": "graphs.busiest_line('    # File: ' + 'a:1 in f, code ' * 300_000 + '\\n' + "
    "'    a = f(x)\\n' * 600, 600)",
    "blocks": "blocks.repeated_blocks(\"source=L['self']._modules['a'], accessed_by=x \" * 200_000)",
    # Format 1.50: a graph break's fix, read from its hints, its debug context and the user's line.
    "logging receiver": "break_fixes._receiver('a' * 2_000_000 + '.info(', 'info')",
    "logging context": "break_fixes.break_fix('logging.Logger method not supported', graphbreaks.SourceLocation(), "
    "None, ['`torch._dynamo.config.a`'], ['method: <Logger ' * 200_000])",
    "print types": "break_fixes._printable(['Avoid calling builtin `print` with argument types [' + "
    "\"'a', \" * 500_000])",
    "hint setting": "break_fixes._setting(['`torch._dynamo.config.' * 300_000, 'torch._dynamo.config.a' * 300_000])",
}


@pytest.mark.parametrize("case", sorted(_HANG_CASES))
def test_no_hang_on_the_inputs_that_made_the_originals_quadratic(case: str) -> None:
    script = "import re\nfrom tlscope.analyse.fold import callvalues, compileacc, fixes, graphbreaks, graphs, guards\n"
    script += "from tlscope.analyse.fold import blocks, break_fixes\n"
    script += "from tlscope.analyse.fold import resume\n"
    script += "from tlscope.analyse import diff\n"
    script += "from tlscope.analyse.tlparse import naming\n"
    script += "from tlscope.analyse.ranks import graph_divergence, parity\n"
    script += f"from tlscope.read import glog\n{_HANG_CASES[case]}\n"
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
