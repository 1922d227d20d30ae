"""Why a cache did not serve a compile (analyse/caches.py, analyse/cache_key.py): the lookups a cache bypassed with
torch's reason (summary, the report), and, between two runs, the parts of the FX graph cache's key
that differ (`tlscope diff`: why a warm start missed, pytorch#152065). On corpus `cache_changed`
(run2 sets one Inductor option; both runs compile a torch.cond, which no cache stores), read
against the logs parsed here independently, and on hostile payloads."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.analyse.cache_key import MAX_PARTS, VALUE_WIDTH, key_changes
from tlscope.analyse.caches import MAX_IDS, REASON_WIDTH, bypasses
from tlscope.analyse.diff import normalised
from tlscope.cli import main as cli
from tlscope.format.compiles import CacheOutcome, CompileEntry, PayloadRef

RUN1, RUN2 = CORPUS / "cache_changed" / "run1", CORPUS / "cache_changed" / "run2"


def _records(folder: Path) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Each envelope of the folder's log with its payload (the lines after it, tab removed)."""
    lines = gzip.decompress(next(folder.glob("*.log.gz")).read_bytes()).decode("utf-8").split("\n")
    for i, line in enumerate(lines):
        if not line.startswith(("V", "I", "W", "E")) or "{" not in line:
            continue
        envelope = json.loads(line[line.index("{") :])
        body = []
        for later in lines[i + 1 :]:
            if not later.startswith("\t"):
                break
            body.append(later[1:])
        yield envelope, "\n".join(body) if body else None


def _lookups(folder: Path, outcome: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(compile id, cache, payload) of each `<cache>_cache_<outcome>` artifact of the log."""
    found = []
    for envelope, payload in _records(folder):
        name = envelope.get("artifact", {}).get("name", "")
        if name.endswith(f"_cache_{outcome}") and payload is not None:
            cid = f"[{envelope['frame_id']}/{envelope['frame_compile_id']}]"
            found.append((cid, name.removesuffix(f"_cache_{outcome}"), json.loads(payload)))
    return found


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    cli(list(args))
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("run", [RUN1, RUN2])
def test_summary_groups_the_bypasses_by_cache_and_reason(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected: dict[tuple[str, str], list[str]] = {}
    for cid, cache, payload in _lookups(run, "bypass"):
        reason = " ".join(payload["cache_bypass_reason"].split())
        expected.setdefault((cache, reason), []).append(cid)
    assert {cache for cache, _ in expected} == {"fx_graph", "aotautograd"}  # the torch.cond compile
    assert any("cond" in reason for _, reason in expected)
    found = _json(capsys, "summary", str(run), "--json")["cache"]
    assert {(g["cache"], g["reason"]): g["compile_ids"] for g in found["bypassed"]} == expected
    assert sum(g["lookups"] for g in found["bypassed"]) == found["bypasses"] == 2
    capsys.readouterr()
    cli(["summary", str(run)])
    text = capsys.readouterr().out
    assert "bypassed, so every run compiles these again:" in text
    assert "fx_graph: Can't cache HigherOrderOperator: cond ([1/0])" in text


def test_the_report_says_the_bypasses_escaped(tmp_path: Path) -> None:
    assert cli([str(RUN2), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    section = index[index.index('id="cache-bypasses"') : index.index('id="graph-breaks"')]
    assert "Can&#39;t cache HigherOrderOperator: cond" in section
    assert '<a href="#[1/0]">[1/0]</a>' in section


def test_diff_names_the_part_of_the_key_that_changed(capsys: pytest.CaptureFixture[str]) -> None:
    """run2 set torch._inductor.config.fallback_random: the FX graph cache key of `scaled`
    differs in that part alone, as the two logs' key components say."""
    (_, _, a), (_, _, b) = (next(x for x in _lookups(run, "miss") if x[1] == "fx_graph") for run in (RUN1, RUN2))
    parts = [{c.split("] ", 1)[1].split(": ", 1)[0]: c.split("] ", 1)[0] for c in p["components"]} for p in (a, b)]
    differ = [name for name in parts[0] if parts[0][name] != parts[1].get(name)]
    assert differ == ["inductor_config[fallback_random]"] and a["key"] != b["key"]
    result = _json(capsys, "diff", str(RUN1), str(RUN2), "--json")
    assert not result["equal"]
    told = [c for c in result["summary"]["caches"] if not c["said_elsewhere"]]
    assert [(c["cache"], c["nth"], c["a_key"], c["b_key"]) for c in told] == [("fx_graph", 1, a["key"], b["key"])]
    assert told[0]["changed"] == [{"name": "inductor_config[fallback_random]", "a": "False", "b": "True"}]
    assert told[0]["parts"] == len(a["components"])
    # AOTAutograd's key changed with it; its log lists no parts: said, but not in the header.
    aot = [c for c in result["summary"]["caches"] if c["cache"] == "aotautograd"]
    assert len(aot) == 1 and aot[0]["parts"] is None and aot[0]["said_elsewhere"]
    capsys.readouterr()
    assert cli(["diff", str(RUN1), str(RUN2)]) == 1
    header = capsys.readouterr().out.split("Details:")[0]
    assert "fx_graph lookup 1 (miss -> miss): 1 of" in header
    assert "      inductor_config[fallback_random]: False -> True" in header
    assert "aotautograd" not in header


def test_diff_page_says_the_key_change(tmp_path: Path) -> None:
    page = tmp_path / "diff.html"
    assert cli(["diff", str(RUN1), str(RUN2), "-o", str(page)]) == 1
    assert "inductor_config[fallback_random]: False -&gt; True" in page.read_text(encoding="utf-8")


def test_a_graph_change_leaves_the_key_to_the_graph_diff(capsys: pytest.CaptureFixture[str]) -> None:
    """Two ranks that compiled different graphs: their keys differ in `gm` and the inputs, which
    the graph diff shows; the header does not say it twice."""
    result = _json(capsys, "diff", str(CORPUS / "ranks_diverge_2"), "--ranks", "0", "1", "--json")
    caches = result["summary"]["caches"]
    assert caches and all(c["said_elsewhere"] for c in caches)
    named = {part["name"] for c in caches for part in c["changed"]}
    assert named and all(re.fullmatch(r"gm|example_inputs\[\d+\]", n) for n in named)


def _lookup(cache: str, outcome: str, key: str | None, payload: str | None, reason: str | None = None) -> CacheOutcome:
    name = None if payload is None else f"payloads/{abs(hash(payload))}.txt"
    return CacheOutcome(
        cache=cache,
        outcome=outcome,
        key=key,
        reason=reason,
        event=PayloadRef(kind=cache, payload_filename=name, log_line=1),
    )


def _reader(*lookups: tuple[CacheOutcome, str | None]) -> Any:
    texts = {lookup.event.payload_filename: text for lookup, text in lookups}
    return texts.get


def _payload(*components: object) -> str:
    return json.dumps({"key": "k", "components": list(components)})


def test_key_parts_compared_by_hash_whatever_the_payload() -> None:
    a_text = _payload(
        "[h1] gm: def forward(self):\n    return x", "[h2] torch_version: 2.13", "[h3] opt: 1", "[h4] opt: 2"
    )
    b_text = _payload(
        "[h1] gm: def forward(self):\n    return x", "[h9] torch_version: 2.14", "[h3] opt: 1", "[h5] opt: 3"
    )
    a, b = _lookup("fx_graph", "hit", "ka", a_text), _lookup("fx_graph", "miss", "kb", b_text)
    changes = key_changes("k", [a], [b], (_reader((a, a_text)), _reader((b, b_text))))
    assert len(changes) == 1
    change = changes[0]
    assert [(p.name, p.a, p.b) for p in change.changed] == [("torch_version", "2.13", "2.14"), ("opt #2", "2", "3")]
    assert change.parts == 4 and not change.said_elsewhere
    assert change.sentence == "fx_graph lookup 1 (hit -> miss): 2 of 4 parts of the key differ: torch_version, opt #2"
    # Same key, a key missing on a side, another cache: nothing to say.
    same = _lookup("fx_graph", "miss", "ka", a_text)
    assert key_changes("k", [a], [same], (_reader((a, a_text)), _reader((same, a_text)))) == []
    nokey = _lookup("fx_graph", "miss", None, b_text)
    assert key_changes("k", [a], [nokey], (_reader((a, a_text)), _reader((nokey, b_text)))) == []
    other = _lookup("aotautograd", "miss", "kb", b_text)
    assert key_changes("k", [a], [other], (_reader((a, a_text)), _reader((other, b_text)))) == []


@pytest.mark.parametrize(
    "b_text",
    [
        None,
        "not json",
        "[1, 2]",
        json.dumps({"components": "a string"}),
        json.dumps({"components": [1, None]}),
        _payload(),
        _payload("no bracket: x", "[h] : no name"),
    ],
)
def test_a_key_with_no_readable_parts_is_said_without_them(b_text: str | None) -> None:
    a_text = _payload("[h1] opt: 1")
    a, b = _lookup("fx_graph", "hit", "ka", a_text), _lookup("fx_graph", "miss", "kb", b_text)
    changes = key_changes("k", [a], [b], (_reader((a, a_text)), _reader((b, b_text))))
    assert [(c.parts, c.changed, c.sentence) for c in changes] == [
        (None, [], "fx_graph lookup 1 (hit -> miss): the key differs; the log does not list its parts")
    ]
    assert not changes[0].said_elsewhere
    again = key_changes("k", [a], [b], (_reader((a, a_text)), _reader((b, b_text))), graphs_differ=True)
    assert again[0].said_elsewhere


def test_long_values_are_cut_around_the_change_and_parts_capped() -> None:
    head = "x" * 500
    many = [f"[a{i}] p{i}: {head}A" for i in range(MAX_PARTS + 3)]
    other = [f"[b{i}] p{i}: {head}B" for i in range(MAX_PARTS + 3)]
    a_text, b_text = _payload(*many), _payload(*other)
    a, b = _lookup("fx_graph", "miss", "ka", a_text), _lookup("fx_graph", "miss", "kb", b_text)
    (change,) = key_changes("k", [a], [b], (_reader((a, a_text)), _reader((b, b_text))))
    assert len(change.changed) == MAX_PARTS and change.more == 3
    part = change.changed[0]
    assert part.a is not None and part.b is not None
    assert len(part.a) <= VALUE_WIDTH and part.a.endswith("A") and part.b.endswith("B") and part.a.startswith("…")
    assert change.sentence.endswith("p0, p1, p2 and 8 more")


def _entry(cid: str, *lookups: CacheOutcome) -> CompileEntry:
    return CompileEntry(id=cid, dir=cid, status="ok", frame_compile="0/0", cache=list(lookups))


def test_bypasses_grouped_capped_and_one_line() -> None:
    long = "why " * 200
    entries = [
        _entry(
            f"[{i}/0]",
            _lookup("fx_graph", "bypass", None, None, "Can't\n cache  cond"),
            _lookup("fx_graph", "bypass", None, None, "Can't cache cond"),
        )
        for i in range(MAX_IDS + 5)
    ]
    entries.append(
        _entry("[99/0]", _lookup("aotautograd", "bypass", None, None, long), _lookup("fx_graph", "miss", "k", None))
    )
    entries.append(_entry("[98/0]", _lookup("aotautograd", "bypass", None, None, None)))
    found = bypasses(entries)
    assert [(g.cache, g.lookups, g.compiles, len(g.compile_ids)) for g in found] == [
        ("fx_graph", 2 * (MAX_IDS + 5), MAX_IDS + 5, MAX_IDS),
        ("aotautograd", 1, 1, 1),
        ("aotautograd", 1, 1, 1),
    ]
    assert found[0].reason == "Can't cache cond" and found[0].compile_ids[0] == "[0/0]"
    assert len(found[1].reason) == REASON_WIDTH and found[1].reason.endswith("…")
    assert found[2].reason == "reason not logged"


def test_the_trace_folder_of_each_run_is_not_a_difference() -> None:
    a = "import os\nos.environ['TORCH_TRACE'] = '/tmp/run1'\nx = 1\n"
    b = "import os\nos.environ['TORCH_TRACE'] = '/tmp/another run'\nx = 1\n"
    assert normalised(a) == normalised(b)
    assert normalised(a) != normalised(b.replace("x = 1", "x = 2"))


def test_an_id_match_guards_address_is_not_a_difference() -> None:
    """tlparse's multi_rank_schedule (macOS): `___check_obj_id(G['torch'], 4344900688)` on one
    rank, `…, 4322782208)` on the other: an address, another in every process, too short for the
    long-number mask; the guarded source is still compared."""
    a = "| | +- ID_MATCH: ___check_obj_id(G['torch'], 4344900688)\n| +- TYPE_MATCH: ___check_type_id(L['m'].f(1), 71)"
    b = "| | +- ID_MATCH: ___check_obj_id(G['torch'], 4322782208)\n| +- TYPE_MATCH: ___check_type_id(L['m'].f(1), 93)"
    assert normalised(a) == normalised(b)
    assert normalised(a) != normalised(b.replace("G['torch']", "G['np']"))


CACHES = CORPUS / "caches"


@pytest.mark.parametrize("run", ["run1", "run2"])
def test_each_lookup_keeps_the_times_its_payload_logged(run: str, tmp_path: Path) -> None:
    """corpus caches: run1's misses and run2's hits, each lookup's `time_saved_s` / `time_taken_s`
    as the payload's ns or ms say (format 1.26)."""
    expected = []
    for outcome in ("hit", "miss"):
        for cid, cache, payload in _lookups(CACHES / run, outcome):
            if "time_saved_ns" in payload:
                saved: float | None = payload["time_saved_ns"] / 1e9
            elif "time_saved_ms" in payload:
                saved = payload["time_saved_ms"] / 1e3
            else:
                saved = None
            taken = payload["time_taken_ns"] / 1e9 if "time_taken_ns" in payload else None
            expected.append((cid, cache, outcome, saved, taken))
    assert any(e[3] for e in expected) if run == "run2" else any(e[4] for e in expected)
    out = tmp_path / "out"
    assert cli([str(CACHES / run), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text(encoding="utf-8"))["compiles"]
    found = [
        (e["id"], c["cache"], c["outcome"], c["time_saved_s"], c["time_taken_s"])
        for e in compiles
        for c in e["cache"]
        if c["outcome"] in ("hit", "miss")
    ]
    assert len(found) == len(expected)
    for got, want in zip(sorted(found, key=str), sorted(expected, key=str), strict=True):
        assert got[:3] == want[:3]
        for x, y in zip(got[3:], want[3:], strict=True):
            assert (x is None and y is None) or (x is not None and y is not None and abs(x - y) < 1e-6), (got, want)


def test_summary_says_what_the_hits_saved_and_the_misses_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """Per compile the hits saved AOTAutograd's count when it logged one (it covers the FX graph
    hit inside it), else the FX graph hits' summed; the misses cost their FX graph compile times."""
    hits = _lookups(CACHES / "run2", "hit")
    per_compile: dict[str, dict[str, float]] = {}
    for cid, cache, payload in hits:
        seconds = payload["time_saved_ms"] / 1e3 if "time_saved_ms" in payload else payload["time_saved_ns"] / 1e9
        per_compile.setdefault(cid, {})[cache] = per_compile.get(cid, {}).get(cache, 0.0) + seconds
    saved = sum(c.get("aotautograd", sum(c.values())) for c in per_compile.values())
    found = _json(capsys, "summary", str(CACHES / "run2"), "--json")["cache"]
    assert found["saved_s"] == pytest.approx(saved, abs=1e-5) and found["missed_s"] is None
    missed = sum(p["time_taken_ns"] / 1e9 for _, _, p in _lookups(CACHES / "run1", "miss") if "time_taken_ns" in p)
    found = _json(capsys, "summary", str(CACHES / "run1"), "--json")["cache"]
    assert found["missed_s"] == pytest.approx(missed, abs=1e-5) and missed > 0 and found["saved_s"] is None
    capsys.readouterr()
    cli(["summary", str(CACHES / "run2")])
    assert f"the hits saved {saved:.2f} s of compiling" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("run", "said"), [("run1", "The misses cost {missed:.2f} s"), ("run2", "The cache hits saved {saved:.2f} s")]
)
def test_the_report_says_what_summary_says_of_the_cache_times(
    run: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = _json(capsys, "summary", str(CACHES / run), "--json")["cache"]
    assert cli([str(CACHES / run), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    line = index[index.index('<p id="cache-times">') :].split("</p>")[0]
    assert said.format(saved=cache["saved_s"] or 0, missed=cache["missed_s"] or 0) in line
    assert ("saved" in line) == (cache["saved_s"] is not None) and ("misses" in line) == (cache["missed_s"] is not None)


@pytest.mark.parametrize(
    ("payload", "saved", "taken"),
    [
        ({"time_saved_ns": 2_500_000_000, "time_saved_ms": 9}, 2.5, None),
        ({"time_saved_ms": 1500.0}, 1.5, None),
        ({"time_taken_ns": 1000}, None, 1e-6),
        ({"time_saved_ns": "12", "time_taken_ns": True}, None, None),
        ({"time_saved_ns": -5, "time_saved_ms": [1], "time_taken_ns": {"a": 1}}, None, None),
        ({"time_saved_ns": 0, "time_taken_ns": 0.5e9}, 0.0, 0.5),
    ],
)
def test_times_of_other_types_leave_the_key_and_reason(
    payload: dict[str, Any], saved: float | None, taken: float | None
) -> None:
    from tlscope.analyse.fold.compile_fold import cache_fields

    text = json.dumps({"key": "k1", "cache_bypass_reason": "why", **payload})
    fields = cache_fields(text.encode(), None)
    assert fields == ("k1", "why", saved, taken)


def test_diff_says_each_sides_compile_time_and_the_compiles_that_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """caches: run1 compiled cold, run2 loaded from the caches. The diff says both totals and the
    compile whose time fell, with the phase that moved most and that B loaded it from a cache; as
    information, so two equal traces still say "No differences." first."""
    a = _json(capsys, "summary", str(CACHES / "run1"), "--json")
    b = _json(capsys, "summary", str(CACHES / "run2"), "--json")
    result = _json(capsys, "diff", str(CACHES / "run1"), str(CACHES / "run2"), "--json")
    times = result["times"]
    assert (times["a_s"], times["b_s"]) == pytest.approx((a["compile_time_s"], b["compile_time_s"]), abs=1e-5)
    rows = {r["function"]: r for r in a["compiles"]}, {r["function"]: r for r in b["compiles"]}
    moved = times["changed"]
    assert moved, times
    for change in moved:
        fn = change["key"].split(" (")[0]
        # A compile's time as the table says it: its span and its backward's compile.
        said = [r["duration_s"] + (r["backward_s"] or 0.0) for r in (rows[0][fn], rows[1][fn])]
        assert (change["a_s"], change["b_s"]) == pytest.approx(tuple(said), abs=1e-5)
        assert abs(change["b_s"] - change["a_s"]) >= 0.5 and change["b_s"] < change["a_s"] / 1.25
        assert change["sentence"].endswith("B loaded it from a cache") and change["phase"]
    capsys.readouterr()
    cli(["diff", str(CACHES / "run1"), str(CACHES / "run2")])
    header = capsys.readouterr().out.split("Details:")[0]
    assert f"Compile time: {times['a_s']:.2f} s in A, {times['b_s']:.2f} s in B" in header
    assert f"  {moved[0]['key']}: {moved[0]['sentence']}" in header
    capsys.readouterr()
    assert cli(["diff", str(CACHES / "run2"), str(CACHES / "run2")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "No differences." and out[1].startswith(f"Compile time: {times['b_s']:.2f} s in A, ")


def test_a_time_change_is_said_only_when_marked() -> None:
    from tlscope.analyse.time_diff import time_change
    from tlscope.format.compiles import Phase, Timing

    def entry(seconds: float | None, phases: dict[str, float], hit: bool = False) -> CompileEntry:
        lookup = _lookup("fx_graph", "hit" if hit else "miss", "k", None)
        found = _entry("[0/0]", lookup)
        found.time = None if seconds is None else Timing(duration_s=seconds)
        found.phases = [Phase(name=n, seconds=s, count=1) for n, s in phases.items()]
        return found

    assert time_change("k", entry(1.0, {}), entry(1.4, {})) is None  # under 0.5 s
    assert time_change("k", entry(10.0, {}), entry(11.0, {})) is None  # under a quarter
    assert time_change("k", entry(None, {}), entry(11.0, {})) is None
    change = time_change(
        "k", entry(2.0, {"dynamo": 2.0, "a": 0.5, "b": 1.0}), entry(8.0, {"a": 0.6, "c": 6.5}, hit=True)
    )
    assert change is not None and (change.phase, change.phase_a_s, change.phase_b_s) == ("c", 0.0, 6.5)
    assert change.sentence == "2.00 s -> 8.00 s (4.00x); most in c, 0.00 s -> 6.50 s; B loaded it from a cache"
    zero = time_change("k", entry(0.0, {}), entry(3.0, {}))
    assert zero is not None and zero.sentence == "0.00 s -> 3.00 s" and zero.phase is None
    # Where the time moved, as the slowest compile and a straggler say where time went: the
    # innermost of the chain that carries the change, never a wrapper (corpus cache_changed's
    # branchy said `most in compile_attempt`, the whole compile).
    cold = {"compile_attempt": 1.33, "backend_compile": 1.0, "code_gen": 0.95, "async_compile.wait": 0.9}
    warm = {"compile_attempt": 0.19, "backend_compile": 0.1, "code_gen": 0.05}
    moved = time_change("k", entry(1.36, cold), entry(0.22, warm))
    assert moved is not None and (moved.phase, moved.phase_a_s, moved.phase_b_s) == ("async_compile.wait", 0.9, 0.0)
    wrapped = time_change("k", entry(1.36, {"compile_attempt": 1.33}), entry(0.22, {"compile_attempt": 0.19}))
    assert wrapped is not None and wrapped.phase is None and "most in" not in wrapped.sentence


#: What compiles.json writes of every payload reference and every graph, null or empty when unset
#: (viewers read the fields as present); `name` only on a graph_dump's reference (1.25).
REF_FIELDS = {"kind", "payload_filename", "payload_size", "raw_line", "log_line"}
GRAPH_FIELDS = REF_FIELDS | {"nodes", "inputs", "collectives"}


@pytest.mark.parametrize("scenario", ["aoti", "ranks_same_2", "caches/run1"])
def test_references_and_graphs_write_every_field(scenario: str, tmp_path: Path) -> None:
    """A field only some references have (`name`) must not make the others drop theirs: with
    msgspec's omit_defaults on PayloadRef, Graph (a subclass) stopped writing an empty
    `collectives` (identity caught it, no test did)."""
    log = sorted((CORPUS / scenario).glob("*.log.gz"))[0]
    assert cli([str(log), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    data = json.loads((tmp_path / "out" / "compiles.json").read_text(encoding="utf-8"))
    entries = [*data["compiles"], *data["aot_inductor"]]
    graphs = [g for e in entries for g in e["graphs"]]
    refs = [r for e in entries for r in e["code"]]
    assert graphs and refs
    assert all(set(g) == GRAPH_FIELDS for g in graphs), graphs[0]
    for ref in refs:
        assert set(ref) == (REF_FIELDS | {"name"} if ref["kind"] == "graph_dump" else REF_FIELDS), ref


def test_the_terminal_lists_a_few_ids_a_bypass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run that turned a cache off bypasses it in every compile (the big trace: 25): the terminal
    lists the first few ids and counts the rest; --json keeps up to MAX_IDS."""
    from helpers import write_trace

    from tlscope.write.summary_view import BYPASS_IDS

    records: list[tuple[dict[str, Any], str | None]] = []
    for frame in range(MAX_IDS + 4):
        cid = {"frame_id": frame, "frame_compile_id": 0, "attempt": 0}
        records.append(
            (
                {"artifact": {"name": "aotautograd_cache_bypass", "encoding": "json"}, **cid},
                '{"cache_bypass_reason": "FX graph cache is not enabled"}',
            )
        )
        records.append(({"compilation_metrics": {"co_name": f"f{frame}"}, **cid}, None))
    log = write_trace(tmp_path / "off.log", records)
    (group,) = _json(capsys, "summary", str(log), "--json")["cache"]["bypassed"]
    assert (group["compiles"], len(group["compile_ids"])) == (MAX_IDS + 4, MAX_IDS)
    capsys.readouterr()
    cli(["summary", str(log), "--width", "400"])
    shown = ", ".join(f"[{n}/0]" for n in range(BYPASS_IDS))
    assert (
        f"aotautograd: FX graph cache is not enabled ({shown} and {MAX_IDS + 4 - BYPASS_IDS} more)"
        in capsys.readouterr().out
    )
