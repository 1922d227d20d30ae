"""ranks.json's graph mismatches of kind `output_code` (format 1.37): compile ids whose ranks traced
the same Dynamo and post-grad graphs but whose Inductor output code differs.

Real jobs: the corpus's ranks_codegen_2 (real torch, fake process group: rank 1 turned C++
vectorisation off, so its kernels are scalar loops), tlparse's multi_rank_runtime (GPU ranks:
rank 0 on `cuda:0`, ranks 1-4 on `cuda:1`, whose code differs only by the device; ranks 5 and 6
ran Inductor with `graph_partition` on) and graph_exec_order_tests (two GPU ranks, one code).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import parse_job

from tlscope.analyse.ranks.divergence import RankLine, RankOverview, divergence
from tlscope.analyse.ranks.graph_divergence import CODE, GraphPrint, code_digest, code_lines
from tlscope.cli import main as cli

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"
CODEGEN = CORPUS / "ranks_codegen_2"
SENTENCE = (
    "[0/0] step (ranks_codegen_2.py:19): ranks traced one graph, but Inductor generated different code for it: "
    'output code 1, line 41 reads "…+=static_cast<int64_t>(16L))" on rank 0, line 42 "…+=static_cast<int64_t>(1L))" '
    'on rank 1, after 1 line only rank 1 has ("#pragma GCC ivdep"); tlscope diff JOB --ranks 0 1 shows the rest'
)


def _output_code(out: Path, rank: int, cid: str) -> list[str]:
    compiles = json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
    (entry,) = [e for e in compiles if e["id"] == cid]
    return [c["payload_filename"] for c in entry["code"] if c["kind"] == CODE]


def test_a_codegen_setting_on_one_rank_is_said_with_its_first_changed_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    found, stdout = parse_job(CODEGEN, out)
    div = found["divergence"]
    assert [s["sentence"] for s in div["settings"]] == [
        "rank 1 compiled under other settings than rank 0: inductor cpp.simdlen 1 (None on rank 0)"
    ]
    (mismatch,) = div["graphs"]
    assert (mismatch["id"], mismatch["kind"]) == ("[0/0]", "output_code")
    assert mismatch["sentence"] == SENTENCE
    assert SENTENCE.replace("tlscope diff JOB", f"tlscope diff {out}") in stdout
    # Each group's payload is its lowest rank's output code, the one the sentence read.
    for group in mismatch["groups"]:
        assert [group["payload"]] == _output_code(out, group["ranks"][0], "[0/0]")
    page = (out / "index.html").read_text()
    assert f'<a href="{mismatch["groups"][1]["payload"]}">code on rank 1</a>' in page
    assert '<span class="graphs-differ">graphs differ</span>' in page
    # What the sentence quotes is in the payloads, at those lines: the vector width, 16 against 1.
    texts = [(out / g["payload"]).read_text().split("\n") for g in mismatch["groups"]]
    assert texts[0][40].strip().endswith("x0+=static_cast<int64_t>(16L))")
    assert texts[1][40].strip() == "#pragma GCC ivdep" and texts[1][41].strip().endswith(
        "x0+=static_cast<int64_t>(1L))"
    )


def test_diff_of_the_two_ranks_shows_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    cli(["diff", str(CODEGEN), "--ranks", "0", "1"])
    out = capsys.readouterr().out
    assert "code inductor_output_code #1" in out and "+        #pragma GCC ivdep" in out


def test_the_python_api_folds_the_same_from_a_folder_without_ranks_json(tmp_path: Path) -> None:
    import tlscope

    out = tmp_path / "out"
    found, _ = parse_job(CODEGEN, out)
    (out / "ranks.json").unlink()
    folded = tlscope.load(out).divergence
    assert folded is not None
    assert [(g.kind, g.sentence) for g in folded.graphs] == [
        (g["kind"], g["sentence"]) for g in found["divergence"]["graphs"]
    ]


def test_ranks_on_their_own_gpus_generate_one_code(tlparse_traces: Path, tmp_path: Path) -> None:
    """multi_rank_runtime: rank 0's code says `cuda:0`, `index=0`, `stream0`, ranks 1-4's `1`: one
    code once each rank's device is masked; ranks 5 and 6 (graph_partition on) generated another."""
    out = tmp_path / "out"
    div = parse_job(tlparse_traces / "inputs" / "multi_rank_runtime", out)[0]["divergence"]
    codes = [g for g in div["graphs"] if g["kind"] == "output_code"]
    assert [g["id"] for g in codes] == ["[0/0]", "[0/1]"]
    assert all([g["ranks"] for g in m["groups"]] == [[0, 1, 2, 3, 4], [5, 6]] for m in codes)
    assert _output_code(out, 0, "[0/0]") != _output_code(out, 1, "[0/0]")  # other bytes, one code
    assert 'output code 1, ranks 5, 6 have 1 more line at line 28: "empty_strided_cpu_pinned = ' in codes[0]["sentence"]
    order = parse_job(tlparse_traces / "graph_exec_order_tests", tmp_path / "order")[0]["divergence"]
    assert order["graphs"] == []


def _gpu_code(device: int, cache: str) -> str:
    return (
        f"# kernel path: /tmp/torchinductor_{cache}.py\n"
        f"    with torch.cuda._DeviceGuard({device}):\n"
        f"        torch.cuda.set_device({device})\n"
        f"        stream{device} = get_raw_stream({device})\n"
        f"        buf0 = empty_strided_cuda((8, ), (1, ), torch.float32)  # cuda:{device}\n"
        f"    triton_meta={{'device': DeviceProperties(type='cuda', index={device}, cc=80)}}, XBLOCK=1024\n"
    )


def test_the_masked_code_keeps_lines_and_what_the_kernels_compute() -> None:
    code = _gpu_code(3, "me/ab/cabc")
    masked = code_lines(code)
    assert len(masked) == len(code.split("\n"))
    assert masked[0] == "# kernel path: …" and masked[3] == "        stream… = get_raw_stream(…)"
    other = _gpu_code(5, "you/xy/cxyz")
    assert code_digest(code) == code_digest(other)
    assert code_digest(code) != code_digest(code.replace("XBLOCK=1024", "XBLOCK=512"))


def _rank(n: int, payloads: str, post: str = "p", digest: str = "g") -> RankOverview:
    found = GraphPrint(function="f (a.py:1)", digest=digest, post_grad=post, code_payloads=payloads)
    return RankOverview(line=RankLine(rank=n), compile_ids=["[0/0]"], graphs={"[0/0]": found})


TEXTS = {
    "payloads/a.txt": "def call(args):\n    XBLOCK = 1024\n",
    "payloads/b.txt": "def call(args):\n    XBLOCK = 512\n",
    "payloads/gpu0.txt": _gpu_code(0, "r0/ab/cabc"),
    "payloads/gpu1.txt": _gpu_code(1, "r1/xy/cxyz"),
}


def test_code_is_compared_only_where_the_graphs_agree_and_both_logged_some() -> None:
    read = TEXTS.get
    assert divergence([_rank(0, "payloads/a.txt"), _rank(1, "")], read=read).graphs == []
    apart = [_rank(0, "payloads/a.txt"), _rank(1, "payloads/b.txt")]
    assert [g.kind for g in divergence(apart, read=read).graphs] == ["output_code"]
    # Without the job's payloads the code is not compared: bytes alone would set GPU ranks apart.
    assert divergence(apart).graphs == []
    apart = [_rank(0, "payloads/a.txt", post="p"), _rank(1, "payloads/b.txt", post="q")]
    assert [g.kind for g in divergence(apart, read=read).graphs] == ["post_grad"]
    apart = [_rank(0, "payloads/a.txt", digest="g"), _rank(1, "payloads/b.txt", digest="h")]
    assert [g.kind for g in divergence(apart, read=read).graphs] == ["graph"]


def test_ranks_whose_code_differs_by_their_device_only_are_one_group() -> None:
    ranks = [_rank(0, "payloads/gpu0.txt"), _rank(1, "payloads/gpu1.txt"), _rank(2, "payloads/gpu1.txt")]
    assert divergence(ranks, read=TEXTS.get).graphs == []
    ranks.append(_rank(3, "payloads/b.txt"))
    (found,) = divergence(ranks, read=TEXTS.get).graphs
    assert [(g.ranks, g.payload) for g in found.groups] == [([0, 1, 2], "payloads/gpu0.txt"), ([3], "payloads/b.txt")]


def test_the_first_output_code_that_differs_is_said_and_linked() -> None:
    """A compile with a forward and a backward: the forwards agree, the backwards do not."""
    texts: dict[str, Any] = {
        "payloads/f.txt": "def call(args):\n    return kernel(args)\n",
        "payloads/b0.txt": "def call(args):\n    XBLOCK = 1024\n",
        "payloads/b1.txt": "def call(args):\n    XBLOCK = 512\n",
    }
    ranks = [
        _rank(0, "payloads/f.txt payloads/b0.txt"),
        _rank(1, "payloads/f.txt payloads/b1.txt"),
        _rank(2, "payloads/f.txt payloads/b0.txt"),
    ]
    (found,) = divergence(ranks, read=texts.get).graphs
    assert [(g.ranks, g.payload) for g in found.groups] == [([0, 2], "payloads/b0.txt"), ([1], "payloads/b1.txt")]
    assert found.sentence == (
        "[0/0] f (a.py:1): ranks traced one graph, but Inductor generated different code for it: output code 2, "
        'line 2 reads "XBLOCK = 1024" on ranks 0, 2, "XBLOCK = 512" on rank 1; '
        "tlscope diff JOB --ranks 0 1 shows the rest"
    )


def test_diff_of_two_gpu_ranks_masks_their_own_devices(
    tlparse_traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """multi_rank_runtime's ranks 0 and 1 (cuda:0, cuda:1) ran one program: their graphs, guards
    and code differ only by the device and the processes' environment, which `--ranks` masks."""
    job = tlparse_traces / "inputs" / "multi_rank_runtime"
    cli(["diff", str(job), "--ranks", "0", "1"])
    said = capsys.readouterr().out.split("\nDetails:")[0]
    assert "graphs differ" not in said and "generated code differs" not in said and "device=" not in said
    assert "guards differ: inner (external_utils.py:66) compile 2" in said  # a guard's own line
    # Two runs on two devices are compared as they are.
    from tlscope import load

    first = load(job, rank=0)
    result = first.diff(first.rank(1))
    assert any(
        line.endswith("generated code differs (fx_graph_runnable, inductor_output_code)")
        for line in result.summary.other
    )


def test_the_first_change_pairs_the_lines_that_changed_least() -> None:
    """Past the common head and tail, difflib's first changed stretch; in it, the closest pair."""
    from tlscope.analyse.ranks.graph_divergence import _first_change

    head = ["def call(args):", "    buf0 = empty()"]
    tail = ["    return (buf0,)"]
    a = [*head, "    for(x0=0; x0<64; x0+=16)", "        body(x0)", *tail]
    b = [*head, "    #pragma GCC ivdep", "    for(x0=0; x0<64; x0+=1)", "        body(x0)", *tail]
    assert _first_change(a, b, ("rank 0", "ranks 1, 2")) == (
        'line 3 reads "for(x0=0; x0<64; x0+=16)" on rank 0, line 4 "for(x0=0; x0<64; x0+=1)" on ranks 1, 2, '
        'after 1 line only ranks 1, 2 have ("#pragma GCC ivdep")'
    )
    assert _first_change(a, a, ("rank 0", "rank 1")) is None
    assert _first_change([*head, *tail], [*head, "    check()", *tail], ("rank 0", "rank 1")) == (
        'rank 1 has 1 more line at line 3: "check()"'
    )
