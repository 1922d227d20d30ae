"""provenance.json (issue 23, point 6): every compilation that logged Inductor provenance, of
every compile id, with its texts and line links, on the real provenance traces."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import REPO

from tlscope.cli import main
from tlscope.format.provenance_file import ProvenanceFile

SHARED = ("aot", "aot_cuda", "aot_debug_handle", "extended", "jit", "jit_cuda", "jit_debug_handle", "aot_old")
_GLOG = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]+\] ")


def _shared_log(tlparse_traces: Path, name: str) -> Path:
    stem = "inductor_provenance_aot_log_old" if name == "aot_old" else f"inductor_provenance_{name}_log"
    return tlparse_traces / "inputs" / f"{stem}.txt"


def _mappings_logged(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """Read independently of tlscope: each node-mappings artifact's compile id and decoded payload."""
    opener = gzip.open if log.suffix == ".gz" else open
    with opener(log, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    found = []
    for i, line in enumerate(lines):
        match = _GLOG.match(line)
        if not match or "inductor_provenance_tracking_node_mappings" not in line:
            continue
        envelope = json.loads(line[match.end() :])
        payload = []
        for rest in lines[i + 1 :]:
            if not rest.startswith("\t"):
                break
            payload.append(rest[1:])
        frame, compile_id = envelope.get("frame_id"), envelope.get("frame_compile_id")
        cid = f"[{'-' if frame is None else frame}/{'-' if compile_id is None else compile_id}]"
        found.append((cid, json.loads("\n".join(payload))))
    return found


def _parse(log: Path, out: Path) -> dict[str, Any]:
    assert main([str(log), "-o", str(out), "--no-browser"]) == 0
    data: dict[str, Any] = json.loads((out / "provenance.json").read_text())
    return data


def _node(line: str) -> str:
    return line.strip().split("=", 1)[0].split(":", 1)[0].strip()


def _check_graph_links(out: Path, entry: dict[str, Any], mappings: dict[str, Any]) -> int:
    """Every graph link joins the lines of two nodes the mappings link; the number of links."""
    pre = (out / entry["pre"]).read_text().split("\n")
    post = (out / entry["post"]).read_text().split("\n")
    checked = 0
    for field, key, src, dst in (("pre_to_post", "preToPost", pre, post), ("post_to_pre", "postToPre", post, pre)):
        for line, targets in entry[field].items():
            name = _node(src[int(line) - 1])
            assert [_node(dst[t - 1]) for t in targets] == [
                n for n in mappings[key][name] if n in {_node(dst[t - 1]) for t in targets}
            ]
            checked += len(targets)
    return checked


def _check_graph_data(out: Path, entry: dict[str, Any]) -> None:
    """Every linked graph line is a node's `line` in that payload's graphs/<md5>.json (the same
    graph data the Graph view shows)."""
    for role, sources, targets in (
        ("pre", ("pre_to_post",), ("post_to_pre",)),
        ("post", ("post_to_pre", "post_to_code"), ("pre_to_post",)),
    ):
        graph = json.loads((out / "graphs" / f"{entry[role][len('payloads/') : -len('.txt')]}.json").read_text())
        lines = {node["line"] for node in graph["graph"]["nodes"]}
        assert {int(k) for f in sources for k in entry[f]} <= lines
        assert {t for f in targets for ts in entry[f].values() for t in ts} <= lines


def _check_code_links(out: Path, entry: dict[str, Any], mappings: dict[str, Any]) -> int:
    code = (out / entry["code"]).read_text().split("\n")
    post = (out / entry["post"]).read_text().split("\n")
    kernels = mappings.get("cppCodeToPost", {})
    for line, targets in entry["code_to_post"].items():
        text = code[int(line) - 1]
        # The code line calls a kernel (its name before any ':'), and the post lines are its nodes.
        hits = [k for k in kernels if k.split(":", 1)[0] in text or k.rsplit(":", 1)[0] in text]
        assert hits, f"code line {line} {text!r} names no kernel"
        assert {_node(post[t - 1]) for t in targets} <= {n for k in hits for n in kernels[k]}
    for line, targets in entry["post_to_code"].items():
        assert str(line) and all(1 <= t <= len(code) for t in targets)
    return len(entry["code_to_post"])


@pytest.mark.parametrize("name", SHARED)
def test_every_compilation_with_provenance_gets_its_links(name: str, tlparse_traces: Path, tmp_path: Path) -> None:
    log = _shared_log(tlparse_traces, name)
    logged = _mappings_logged(log)
    assert logged, f"{log} logs no node mappings"
    data = _parse(log, tmp_path / "out")
    entries = data["compilations"]
    assert [e["id"] for e in entries] == [cid for cid, _ in logged]
    assert data["format_minor"] >= 13
    for entry, (_, mappings) in zip(entries, logged, strict=True):
        assert entry["pre"] and entry["post"] and entry["code"] and entry["node_mappings"]
        assert json.loads((tmp_path / "out" / entry["node_mappings"]).read_text()) == mappings
        # A JIT log's code is inductor_output_code (Python), an AOTInductor log's its wrapper (C++).
        jit = '"inductor_output_code"' in log.read_text()
        assert entry["code_language"] == ("python" if jit else "cpp")
        # Every node the mappings link from that the graph prints gets its line.
        assert len(entry["pre_to_post"]) == len(mappings["preToPost"])
        assert _check_graph_links(tmp_path / "out", entry, mappings) > 0
        _check_graph_data(tmp_path / "out", entry)
        assert _check_code_links(tmp_path / "out", entry, mappings) > 0


def test_a_backward_under_its_forwards_compile_id_is_its_own_compilation(tmp_path: Path) -> None:
    """The corpus's provenance trace compiles a forward and a backward under [0/0]: two entries,
    the second keeping the forward's pre-grad graph and with its own post-grad graph and code."""
    log = next((REPO / "corpus" / "traces" / "provenance").glob("*.log.gz"))
    logged = _mappings_logged(log)
    entries = _parse(log, tmp_path / "out")["compilations"]
    assert (
        [(e["id"], e["n"]) for e in entries]
        == [("[0/0]", 1), ("[0/0]", 2)]
        == [(c, i + 1) for i, (c, _) in enumerate(logged)]
    )
    first, second = entries
    assert second["pre"] == first["pre"]
    assert second["post"] != first["post"] and second["code"] != first["code"]
    assert _check_graph_links(tmp_path / "out", first, logged[0][1]) > 0
    # The backward's mappings hold only their version: nothing to link, and nothing made up.
    assert set(logged[1][1]) == {"version"}
    assert second["pre_to_post"] == second["code_to_post"] == {}


def test_no_file_without_provenance(tlparse_traces: Path, tmp_path: Path) -> None:
    assert main([str(tlparse_traces / "inputs" / "simple.log"), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    assert not (tmp_path / "out" / "provenance.json").exists()


def test_streamed_file_is_the_whole_documents_encoding(tmp_path: Path) -> None:
    """provenance.json is written one compilation at a time (a 1 GB log's line links are not held
    at once): its bytes are exactly msgspec's encoding of the whole ProvenanceFile."""
    log = next((REPO / "corpus" / "traces" / "provenance").glob("*.log.gz"))
    _parse(log, tmp_path / "out")
    written = (tmp_path / "out" / "provenance.json").read_bytes()
    whole = msgspec.json.decode(written, type=ProvenanceFile)
    assert len(whole.compilations) == 2
    assert msgspec.json.encode(whole) == written


def test_compilations_logged_again_get_the_same_links(
    tlparse_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log holding the same compilations twice (a long job, a scaled trace): the second ones'
    links come from the store's memo of links by texts, and equal the links of their own texts."""
    from tlscope.analyse.provenance import links
    from tlscope.write import provenance_store

    computed: list[str] = []

    def counted(nodes: str, pre: str, post: str, code: str, language: str) -> Any:
        computed.append(nodes)
        return links(nodes, pre, post, code, language)

    monkeypatch.setattr(provenance_store, "links", counted)
    log = _shared_log(tlparse_traces, "jit")
    twice = tmp_path / "twice.log"
    twice.write_bytes(log.read_bytes() * 2)
    out = tmp_path / "out"
    entries = _parse(twice, out)["compilations"]
    assert len(entries) == 2 * len(_mappings_logged(log))
    texts = {(e["pre"], e["post"], e["code"], e["node_mappings"]) for e in entries}
    assert len(computed) == len(texts) < len(entries)  # the compilations met again: from the memo
    roles = ("pre_to_post", "post_to_pre", "code_to_post", "post_to_code")
    for entry in entries:
        read = {k: (out / entry[k]).read_text() for k in ("pre", "post", "code", "node_mappings")}
        found = links(read["node_mappings"], read["pre"], read["post"], read["code"], entry["code_language"])
        assert entry["code_to_post"]
        assert {r: entry[r] for r in roles} == {r: json.loads(msgspec.json.encode(getattr(found, r))) for r in roles}
