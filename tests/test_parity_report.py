"""Parity of the HTML report with tlparse 0.4.3: same paths, same compile directory, same artifacts.

Every single-rank trace of ../shared/traces/tlparse (and corpus/traces when present) is run
through both tools with the same flags. Deliberate deviations are encoded here, each named
after its entry in docs/DEVIATIONS.md ("Report"), never skipped.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import REPO, TLPARSE_TRACES

from tlscope.cli import main as tlscope_main

SINGLE_RANK = sorted(
    [p.name for p in TLPARSE_TRACES.glob("inputs/*.log")] + [p.name for p in TLPARSE_TRACES.glob("inputs/*.txt")]
)
#: The project's own traces (gzipped; tlparse reads plain text, so it gets a decompressed copy).
#: The muxed trace holds several ranks: tlscope reports it per rank (deviation "Muxed logs",
#: tested in test_multirank_cli.py), tlparse keeps one rank, so it is not a single-rank case.
CORPUS = (
    sorted(p for p in (REPO / "corpus" / "traces").glob("**/*.log.gz") if p.parent.name != "muxed")
    if (REPO / "corpus" / "traces").is_dir()
    else []
)
#: Index files of the format 1.1, and the report's flame graph page, tlparse has no counterpart of
#: (deviation "No index of compiles").
ANSWERS = {"compiles.json", "log_size.json", "chromium_log_lines.json", "timeline.bin", "compile_time.html"}
#: Files tlscope's format writer always adds (deviation "Format files in every mode").
FORMAT_ONLY = {"manifest.json", *ANSWERS}
#: Export mode: tlparse writes only the report; tlscope's format files are still written.
EXPORT_FORMAT_FILES = {"manifest.json", "raw.jsonl", "chromium_events.json", *ANSWERS}
#: Deviation "No dangling collectives link": tlparse links a file single-rank runs never write.
TLPARSE_ONLY_LINKS = {"collectives_parity.json"}


def modes_for(name: str) -> list[list[str]]:
    modes = [[], ["-p"]]
    if "provenance" in name:
        modes.append(["-i"])
    if name.startswith("export"):
        modes = [["-e"]]
    return modes


def run_both(trace: Path, flags: list[str], tmp: Path, tlparse_bin: Path) -> tuple[Path, Path]:
    ref, ours = tmp / "tlparse", tmp / "tlscope"
    done = subprocess.run(
        [str(tlparse_bin), str(trace), "-o", str(ref), "--no-browser", *flags],
        cwd=tmp,
        capture_output=True,
        timeout=300,
        check=False,
    )
    (tmp / "tlparse.stderr").write_bytes(done.stderr)
    assert ref.is_dir(), "tlparse wrote nothing"
    assert tlscope_main([str(trace), "-o", str(ours), "--no-browser", *flags]) == 0
    return ref, ours


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def trie_links(html: str) -> list[tuple[str, str]]:
    return re.findall(r"<a href='#([^']*)' class='([^']*)'>", html)


def product_links(html: str) -> set[str]:
    section = html.split("Build products below:", 1)[1]
    return {m for m in re.findall(r"<li><a href=\"([^\"]*)\">", section)}


def failure_count(html: str) -> int:
    found = re.search(r">(\d+) restart\(s\) and/or compilation failure\(s\)<", html)
    return int(found.group(1)) if found else 0


def assert_parity(ref: Path, ours: Path, flags: list[str]) -> None:
    ref_files, our_files = files(ref), files(ours)
    ref_payloads = {f for f in ref_files if f.startswith("payloads/")}
    # Deviation "Every payload in payloads/": tlscope keeps all payloads (named by their MD5),
    # a superset of tlparse's (named by has_payload, equal when the MD5 is right).
    our_payloads = {f for f in our_files if f.startswith("payloads/")}
    assert ref_payloads <= our_payloads or _md5_mismatch_only(ref, ref_payloads - our_payloads)
    extra = EXPORT_FORMAT_FILES if "-e" in flags else FORMAT_ONLY
    # Format 1.11's graphs/ (each FX graph payload as data) is tlscope's own, beside payloads/.
    our_graphs = {f for f in our_files if f.startswith("graphs/")}
    # So is format 1.13's provenance.json (every compilation's provenance), on provenance logs.
    extra = extra | {"provenance.json"}
    assert ref_files - ref_payloads == our_files - our_payloads - our_graphs - extra

    for rel in sorted(ref_files - ref_payloads):
        if rel.endswith(".txt"):
            assert (ref / rel).read_bytes() == (ours / rel).read_bytes(), rel
        elif rel.endswith(".json") and rel not in ("raw.jsonl", "chromium_events.json"):
            assert _as_json((ref / rel).read_bytes()) == _as_json((ours / rel).read_bytes()), rel

    if "-e" in flags:
        return
    assert (ref / "compile_directory.json").read_bytes() == (ours / "compile_directory.json").read_bytes()
    assert (ref / "raw.log").read_bytes() == (ours / "raw.log").read_bytes()
    ref_index = (ref / "index.html").read_text()
    our_index = (ours / "index.html").read_text()
    assert trie_links(ref_index) == trie_links(our_index)
    assert product_links(ref_index) == product_links(our_index) | (TLPARSE_ONLY_LINKS & product_links(ref_index))
    assert failure_count(ref_index) == failure_count(our_index)
    assert len(re.findall(r"<tr>", (ours / "failures_and_restarts.html").read_text())) - 1 == failure_count(ref_index)


def tlparse_stats(stderr: str) -> dict[str, int]:
    """tlparse's closing `Stats { ok: 64, fail_payload_md5: 1 }` line (reference §1.9)."""
    found = re.search(r"Stats \{([^}]*)\}", stderr)
    assert found, "tlparse printed no Stats line"
    return {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", found.group(1))}


#: Problem kinds only tlscope reports (docs/DEVIATIONS.md, Format: blank lines, bad payload JSON
#: and report problems are counted, not skipped silently or printed to stderr).
TLSCOPE_ONLY_KINDS = {"blank_line", "bad_payload_json", "report"}


def assert_same_problem_counts(work: Path, ours: Path) -> None:
    """tlparse's Stats line against tlscope's manifest: the same lines read, the same failures."""
    stats = tlparse_stats((work / "tlparse.stderr").read_text(errors="replace"))
    manifest = json.loads((ours / "manifest.json").read_text())
    counts: dict[str, int] = manifest["problems"]["counts"]
    events = manifest["events"]
    not_str = sum(v["count"] for k, v in events.items() if k != "str")
    # Deviation "Rank-less lines": tlparse counts them as other_rank instead of ok; their sum
    # is every envelope that parsed, as tlscope's event count is.
    assert stats.get("ok", 0) + stats.get("other_rank", 0) == not_str
    assert counts.get("other_rank", 0) <= stats.get("other_rank", 0)
    assert stats.get("fail_payload_md5", 0) == counts.get("payload_md5", 0)
    if not counts.get("invalid_json"):  # deviation "Invalid JSON envelope": tlparse counts it twice
        assert stats.get("fail_json", 0) == counts.get("not_an_object", 0)
        assert stats.get("fail_glog", 0) == counts.get("glog_prefix", 0) + counts.get("orphan_payload", 0)
    mapped = {"payload_md5", "other_rank", "invalid_json", "not_an_object", "glog_prefix", "orphan_payload"}
    assert set(counts) - mapped <= TLSCOPE_ONLY_KINDS


def _as_json(data: bytes) -> object:
    """The parsed JSON; the bytes themselves when the artifact is not JSON (both tools keep it as is)."""
    try:
        return json.loads(data)
    except ValueError:
        return data


def _md5_mismatch_only(ref: Path, missing: set[str]) -> bool:
    """tlparse names a payload by has_payload even when it is wrong; tlscope by the real MD5."""
    import hashlib

    return all(hashlib.md5((ref / f).read_bytes()).hexdigest() != Path(f).stem for f in missing)


@pytest.mark.parametrize("name", SINGLE_RANK)
def test_report_parity_public_traces(name: str, tmp_path: Path, tlparse_traces: Path, tlparse_bin: Path) -> None:
    trace = tlparse_traces / "inputs" / name
    for flags in modes_for(name):
        work = tmp_path / ("mode" + "".join(flags))
        work.mkdir()
        ref, ours = run_both(trace, flags, work, tlparse_bin)
        assert_parity(ref, ours, flags)
        if "-e" not in flags:  # export mode prints no Stats line
            assert_same_problem_counts(work, ours)


#: Corpus traces where tlscope reports lines tlparse drops, so later `_N` numbers shift
#: (docs/DEVIATIONS.md, Report: "Lenient event shapes" and "Rank-less lines of a rank's process").
_LIST_VALUED_LOCALS = re.compile(rb'"frame_locals": \{[^{}]*"locals": \{[^{}]*\[')


def list_valued_locals(log: Path) -> bool:
    """True when an export guard's frame_locals values are lists (torch 2.13): tlparse fails to
    parse those lines and drops them, tlscope reports the guards (deviation "Lenient event shapes")."""
    with log.open("rb") as f:
        return any(_LIST_VALUED_LOCALS.search(line) for line in f if not line.startswith(b"\t"))


def rankless_after_rank(log: Path) -> bool:
    """True when a rank-less event follows a ranked one: tlparse drops it as "other rank", tlscope
    gives it its process's rank (deviation "Rank-less lines of a rank's process"), so numbers shift."""
    seen_rank = False
    with log.open("rb") as f:
        for line in f:
            if line.startswith(b"\t") or b'{"str": ' in line:
                continue
            if b'"rank": ' in line:
                seen_rank = True
            elif seen_rank:
                return True
    return False


def unnumbered(paths: set[str]) -> set[str]:
    return {re.sub(r"_\d+(\.[^./]*)?$", r"\1", p) for p in paths if not p.startswith("payloads/")}


def assert_superset_renumbered(ref: Path, ours: Path) -> None:
    """Every kind of output tlparse wrote, tlscope wrote too (numbers aside); compile ids agree."""
    assert unnumbered(files(ref)) <= unnumbered(files(ours))
    ref_json = ref / "compile_directory.json"
    ref_dir = json.loads(ref_json.read_text()) if ref_json.exists() else {}
    if ref_dir:
        assert set(ref_dir) <= set(json.loads((ours / "compile_directory.json").read_text()))


@pytest.mark.parametrize("trace", CORPUS, ids=[p.parent.name + "/" + p.name for p in CORPUS])
def test_report_parity_corpus(trace: Path, tmp_path: Path, tlparse_bin: Path) -> None:
    plain = tmp_path / trace.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(trace.read_bytes()))
    for flags in modes_for(trace.parent.name):
        work = tmp_path / ("mode" + "".join(flags))
        work.mkdir()
        ref, ours = run_both(plain, flags, work, tlparse_bin)
        if list_valued_locals(plain) or rankless_after_rank(plain):
            assert_superset_renumbered(ref, ours)
        else:
            assert_parity(ref, ours, flags)
        if "-e" not in flags:
            assert_same_problem_counts(work, ours)


@pytest.mark.parametrize("name", [n for n in SINGLE_RANK if "provenance" in n])
def test_provenance_mappings_equal(name: str, tmp_path: Path, tlparse_traces: Path, tlparse_bin: Path) -> None:
    ref, ours = run_both(tlparse_traces / "inputs" / name, ["-i"], tmp_path, tlparse_bin)
    pages = sorted(p.name for p in ref.glob("provenance_tracking_*.html"))
    assert pages == sorted(p.name for p in ours.glob("provenance_tracking_*.html"))
    for page in pages:
        assert line_mappings((ref / page).read_text()) == line_mappings((ours / page).read_text()), page


def line_mappings(html: str) -> object:
    start = html.index('<script id="lineMappings" type="application/json">')
    body = html[html.index(">", start) + 1 :]
    return json.loads(body[: body.index("</script>")])
