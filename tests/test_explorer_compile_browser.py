"""The explorer's Compile tab in headless Chromium, on real corpus traces made with torch.

A compile id picked in the sidebar shows, from compiles.json (docs/FORMAT.md section 14): its
status (each rank's in a multi-rank folder), function, time, why it recompiled (the recommended
guard failure first, then every one, and the inputs' changes), failure, graph breaks and cache
lookups, with buttons that select the event behind each payload reference. Every value asserted
is read from the folder's compiles.json here, not written into the test.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import (
    REPO,
    ExplorerSite,
    compile_id_of,
    hook,
    open_explorer,
    raw_events,
    served_explorer,
    wait_hook,
)

CORPUS = REPO / "corpus" / "traces"
HOSTILE = '<img src=x onerror="window.__pwned=1">'
#: Corpus traces the tab is tested on (name -> corpus folder).
TRACES = {
    "recompiles": "recompiles",
    "dynamic": "recompiles_dynamic",
    "failures": "failures",
    "ranks": "ranks_diverge_2",
    "repeated": "graph_breaks_repeated",
    "specialized": "specialized",
    "unbacked": "unbacked",
    "aoti": "aoti",
    "aot_compile": "aot_compile",
    "cache_hits": "caches/run2",
    "dynamic_true": "dynamic_true",
    "layers": "layers",
    "unrolled": "unrolled",
    "lr": "lr_schedule",
}


def _hostile_copy(src: Path, dest: Path) -> None:
    """`src` with every string of compiles.json's entries that the tab shows made into markup."""
    shutil.copytree(src, dest)
    data = json.loads((dest / "compiles.json").read_text())
    for entry in data["compiles"]:
        recompile = entry.get("recompile")
        if not recompile:
            continue
        for failure in recompile["guard_failures"]:
            failure.update(kind=HOSTILE, explanation=HOSTILE, expected=HOSTILE, actual=HOSTILE, cache_entry=HOSTILE)
            failure["user_frame"] = {"file": HOSTILE, "line": 1, "name": HOSTILE, "code": HOSTILE}
        for change in recompile["changes"]:
            change.update(input=HOSTILE, what=HOSTILE, before=HOSTILE, after=HOSTILE)
        entry["function"] = {"file": HOSTILE, "line": 3, "name": HOSTILE, "code": None}
        entry["restart_reasons"] = [HOSTILE]
    data["first_answers"] = [{"kind": "failure", "compile_id": "[0/2]", "text": HOSTILE}]
    (dest / "compiles.json").write_text(json.dumps(data))


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Output folders: the TRACES, `hostile` (recompiles with markup in compiles.json) and `old`
    (recompiles without compiles.json, as an older tlscope wrote it)."""
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("compile-tab")
    out = {}
    for name, corpus in TRACES.items():
        assert tlscope_main([str(CORPUS / corpus), "-o", str(root / name), "--no-browser"]) == 0
        out[name] = root / name
    _hostile_copy(out["recompiles"], root / "hostile")
    shutil.copytree(out["recompiles"], root / "old")
    (root / "old" / "compiles.json").unlink()
    return {**out, "hostile": root / "hostile", "old": root / "old"}


@pytest.fixture(scope="module")
def site(folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExplorerSite]:
    with served_explorer(folders, tmp_path_factory.mktemp("serve")) as served:
        yield served


def entries(folder: Path) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in json.loads((folder / "compiles.json").read_text())["compiles"]}


def open_page(browser: Any, url: str) -> Any:
    return open_explorer(browser, url, height=1000)


def pick(page: Any, cid: str) -> dict[str, Any]:
    page.click(f"#cids [data-cid='{cid}']")
    return wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == cid and h["filter"]["cid"] == cid)


def shown_failure(failure: dict[str, Any]) -> dict[str, Any]:
    """What the hook shows of a compiles.json guard failure."""
    expected, actual = failure["expected"], failure["actual"]
    values = None if expected is None and actual is None else f"{expected or 'not logged'} → {actual or 'not logged'}"
    keys = ("kind", "explanation", "expected", "actual")
    return {"cache_entry": failure["cache_entry"], **{k: failure[k] for k in keys}, "values": values}


def test_the_compile_tab_explains_every_recompile(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """recompiles: each recompile's guard failures and changes, as compiles.json has them."""
    page = open_page(browser, site.explorer("recompiles"))
    recompiles = [e for e in entries(folders["recompiles"]).values() if e["recompile"]]
    assert len(recompiles) >= 3
    for entry in recompiles:
        h = pick(page, entry["id"])
        c = h["compile"]
        rec = entry["recompile"]
        assert c["status"] == entry["status"] and c["source"] == "compiles.json"
        assert (
            c["guardFailures"]
            == len(rec["guard_failures"])
            == page.locator(".cp-table").first.locator("tr").count() - 1
        )
        assert c["changes"] == [
            {k: ch[k] if ch[k] is not None else "not logged" for k in ("what", "before", "after")}
            | {"input": ch["name"], "source": ch["input"]}  # as the code names it (format 1.47)
            for ch in rec["changes"]
        ]
        assert (
            c["function"] == f"{entry['function']['name']} at {entry['function']['file']}:{entry['function']['line']}"
        )
        assert page.locator(".cp-id").text_content() == entry["id"]
        assert page.locator(".tabs button.on").get_attribute("data-tab") == "compile"
        # The table is filtered to the compile id, as before the tab existed.
        assert h["total"] == sum(1 for e in raw_events(folders["recompiles"]) if compile_id_of(e) == entry["id"])
    # [-/-] is not a compilation: its meaning, nothing about recompiles.
    c = pick(page, "[-/-]")["compile"]
    assert c["status"] == "outside" and page.locator(".cp-sec").count() == 0
    assert (
        page.locator(".cp")
        .text_content()
        .endswith(json.loads((folders["recompiles"] / "compiles.json").read_text())["statuses"]["outside"])
    )
    assert page.errors == []
    page.close()


def test_recommended_failure_and_null_actual(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """recompiles_dynamic: [0/5] recommends [0/2]'s dim_marking over the newest entry's stride
    (FORMAT.md "Which failure is the cause"); [3/2]'s actual is null and shows as "not logged"."""
    data = entries(folders["dynamic"])
    page = open_page(browser, site.explorer("dynamic"))
    c = pick(page, "[0/5]")["compile"]
    failures = data["[0/5]"]["recompile"]["guard_failures"]
    assert failures[0]["kind"] in {"size", "stride", "rank"}
    chosen = next(f for f in failures if f["kind"] not in {"size", "stride", "rank", "other"})
    assert chosen["kind"] == "dim_marking" and chosen["cache_entry"] == "[0/2]"  # FORMAT.md's example
    assert c["recommended"] == shown_failure(chosen)
    assert page.locator(".cp-rec .cp-entry").text_content() == "[0/2]"
    assert page.locator(".cp-rec .cp-expl").text_content() == chosen["explanation"]
    assert c["guardFailures"] == len(failures)
    marked = {"input": "x", "source": "L['x']", "what": "marked_dynamic", "before": "[]", "after": "[0]"}
    assert marked in c["changes"]
    # A guard Dynamo printed no values for: a dash, not "not logged → not logged".
    cells = page.locator("tr", has_text="dim_marking").first.locator("td")
    assert chosen["expected"] is None and chosen["actual"] is None and cells.nth(3).text_content() == "\N{EM DASH}"
    page.screenshot(path=str(folders["dynamic"].parent / "compile-tab.png"))
    # [3/2]: a value guard whose new value the log does not hold.
    c = pick(page, "[3/2]")["compile"]
    first = data["[3/2]"]["recompile"]["guard_failures"][0]
    assert first["actual"] is None and first["expected"] is not None
    assert c["recommended"] == shown_failure(first)
    assert c["recommended"]["values"] == f"{first['expected']} → not logged"
    assert page.locator(".cp-rec .cp-values").text_content() == f"{first['expected']} → not logged"
    assert c["status"] == data["[3/2]"]["status"] == "failed"
    assert c["failure"]["type"] == data["[3/2]"]["failure"]["type"]
    # Its user frame: file:line in name, and the source line.
    frame = first["user_frame"]
    assert page.locator(".cp-rec .cp-where").text_content() == f"{frame['file']}:{frame['line']} in {frame['name']}"
    assert page.locator(".cp-rec .cp-code").text_content() == frame["code"]
    assert page.errors == []
    page.close()


def test_a_size_recompile_shows_its_fix_as_the_file_says(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """recompiles_dynamic: each recompile's `fix` (format 1.10) is shown as compiles.json has it,
    the line to add, before which call, and why; a recompile without one shows none."""
    data = entries(folders["dynamic"])
    page = open_page(browser, site.explorer("dynamic"))
    with_fix = [e for e in data.values() if e["recompile"] and e["recompile"]["fix"]]
    assert {e["id"] for e in with_fix} >= {"[0/1]", "[0/2]", "[0/6]"}
    for entry in with_fix:
        fix = entry["recompile"]["fix"]
        c = pick(page, entry["id"])["compile"]
        assert page.locator(".cp-fix .cp-fix-code").text_content() == fix["code"]
        assert page.locator(".cp-fix .cp-why").text_content() == fix["why"]
        if fix["where"] is None:  # a setting, set before the first compile (1.48: limited's recompile_limit)
            assert fix["kind"] == "recompile_limit" and c["fix"]["where"] is None
            assert page.locator(".cp-fix .cp-where").count() == 0
            continue
        where = f"{fix['where']['file']}:{fix['where']['line']} in {fix['where']['name']}"
        assert c["fix"] == {"code": fix["code"], "input": fix["input"], "dim": fix["dim"], "where": where}
        assert page.locator(".cp-fix .cp-where").text_content() == f"before {where}"
        assert page.locator(".cp-fix .cp-code").text_content() == fix["where"]["code"]
    c = pick(page, "[1/2]")["compile"]
    assert data["[1/2]"]["recompile"]["fix"] is None and c["fix"] is None and page.locator(".cp-fix").count() == 0
    assert page.errors == []
    page.close()


def test_a_slow_compile_shows_its_time_fix_as_the_file_says(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """Corpus layers: the compile's `time_fix` (format 1.49, kind `regional`) is shown as
    compiles.json has it, the loop, before which call, and why; recompiles_dynamic's slow
    compiles have none and show none."""
    entry = entries(folders["layers"])["[0/0]"]
    fix = entry["time_fix"]
    page = open_page(browser, site.explorer("layers"))
    c = pick(page, "[0/0]")["compile"]
    where = f"{fix['where']['file']}:{fix['where']['line']} in {fix['where']['name']}"
    assert c["timeFix"] == {"kind": "regional", "code": fix["code"], "where": where}
    box = page.locator(".cp-fix")
    assert box.locator(".cp-sub").text_content() == "To compile faster, compile each block instead of the whole: "
    assert box.locator(".cp-fix-code").text_content() == "for block in model.layers: block.compile()"
    assert box.locator(".cp-where").text_content() == f"before {where}"
    assert box.locator(".cp-code").text_content() == fix["where"]["code"]
    assert box.locator(".cp-why").text_content() == fix["why"]
    # format 1.49: the backward compiled at the first backward call, beside the span.
    assert c["backwardS"] == entry["backward_s"] and entry["backward_s"] > 0
    time = page.locator(".cp-facts dd").nth(_fact_index(page, "time")).text_content()
    assert time.startswith(
        f"{entry['time']['duration_s']:.3f} s, and {entry['backward_s']:.3f} s compiling its backward"
    )
    page.close()
    page = open_page(browser, site.explorer("dynamic"))
    assert "time_fix" not in entries(folders["dynamic"])["[0/0]"]
    assert pick(page, "[0/0]")["compile"]["timeFix"] is None and page.locator(".cp-fix").count() == 0
    assert page.errors == []
    page.close()


def test_a_tensor_lr_fix_is_said_in_words(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """Corpus lr_schedule: the scheduler's recompile of AdamW.step has the fix kind `tensor_lr`
    (format 1.49), an instruction in words, shown as words (not as a line of code to add)."""
    fix = entries(folders["lr"])["[2/1]"]["recompile"]["fix"]
    page = open_page(browser, site.explorer("lr"))
    pick(page, "[2/1]")
    box = page.locator(".cp-fix")
    assert box.locator(".cp-sub").first.text_content() == "To avoid it, "
    said = box.locator(".cp-fix-code")
    assert said.text_content() == fix["code"] == "create AdamW with lr=torch.tensor(0.001), not the float 0.001"
    assert said.evaluate("e => e.tagName") == "SPAN" and box.locator(".cp-where").count() == 0
    assert box.locator(".cp-why").text_content() == fix["why"]
    assert page.errors == []
    page.close()


def test_a_big_graph_says_the_line_it_grew_from(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """Corpus unrolled: the Dynamo graph's `busiest_line` (format 1.49) is a fact of the Compile
    tab, as compiles.json has it; a compile whose graphs have none (layers) shows no such fact."""
    entry = entries(folders["unrolled"])["[0/0]"]
    (graph,) = [g for g in entry["graphs"] if g.get("busiest_line")]
    line = graph["busiest_line"]
    page = open_page(browser, site.explorer("unrolled"))
    c = pick(page, "[0/0]")["compile"]
    where = f"{line['file']}:{line['line']}"
    assert c["busiestLine"] == {"where": where, "code": line["code"], "nodes": 600, "of": graph["nodes"]}
    fact = page.locator(".cp-facts dd").nth(_fact_index(page, "graph grew from")).text_content()
    assert fact.startswith(f"600 of its graph's 601 nodes: {where}, `x = torch.sin(x) * 1.01 + i`, traced again")
    page.close()
    page = open_page(browser, site.explorer("layers"))
    assert pick(page, "[0/0]")["compile"]["busiestLine"] is None
    assert "graph grew from" not in page.locator(".cp-facts dt").all_text_contents()
    assert page.errors == []
    page.close()


#: `symbols[].why` as the explorer words it (every symbol of recompiles_dynamic says one).
WHY_WORDS = {"marked": "mark_dynamic", "automatic": "automatic (a call changed it)"}


def _fact_index(page: Any, term: str) -> int:
    terms = page.locator(".cp-facts dt").all_text_contents()
    return terms.index(term)


def test_the_compile_tab_says_where_each_dynamic_dimension_comes_from(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """recompiles_dynamic: a compile id's `symbols` (format 1.10), as compiles.json has them, a
    guarded dimension's fix (format 1.15: [0/4]'s s77 and s27, a transposed input's bound), and
    why each is dynamic with the run's answer (format 1.29: `why`, `dynamic.sentence`)."""
    data = json.loads((folders["dynamic"] / "compiles.json").read_text())
    page = open_page(browser, site.explorer("dynamic"))
    assert {(s["compile_id"], s["symbol"]) for s in data["symbols"] if s["fix"]} == {("[0/4]", "s77"), ("[0/4]", "s27")}
    for cid in ("[0/2]", "[0/4]", "[0/5]", "[1/1]"):
        mine = [s for s in data["symbols"] if s["compile_id"] == cid]
        assert mine
        c = pick(page, cid)["compile"]
        assert c["symbols"] == [s["symbol"] for s in mine]
        sec = page.locator(".cp-sec", has_text="Dynamic dimensions")
        rows = sec.locator("tr")
        assert rows.count() == len(mine) + 1
        for i, symbol in enumerate(mine, 1):
            cells = rows.nth(i).locator("td")
            assert cells.nth(0).text_content() == symbol["symbol"] and cells.nth(1).text_content() == symbol["source"]
            at = symbol["entered_at"]
            assert cells.nth(3).locator(".cp-where").text_content() == f"{at['file']}:{at['line']} in {at['name']}"
            assert cells.nth(4).text_content() == WHY_WORDS[symbol["why"]]
            if symbol["failed_in"]:
                assert f"its range failed {', '.join(symbol['failed_in'])}" in (cells.nth(5).text_content() or "")
            fix = symbol["fix"]
            if fix:
                where = fix["where"]
                said = f"(fix: change {where['file']}:{where['line']} in {where['name']}: {fix['code']})"
                assert said in (cells.nth(5).text_content() or "")
        assert sec.locator(".cp-why-dynamic").text_content() == f"Why dynamic? {data['dynamic']['sentence']}"
    # format 1.29: a compile under other settings than the first says which (recompiles_dynamic's [3/1]).
    (group,) = data["settings"]["groups"]
    pick(page, "[3/1]")
    said = "; ".join(f"{x['section']} {x['key']} {x['value']} ({x['first']} in [0/0])" for x in group["settings"])
    assert page.locator(".cp-facts dt", has_text="settings").count() == 1
    assert page.locator(".cp-facts dd").nth(_fact_index(page, "settings")).text_content() == said
    c = pick(page, "[0/0]")["compile"]
    assert c["symbols"] == [] and page.locator(".cp-sec", has_text="Dynamic dimensions").count() == 0
    assert page.errors == []
    page.close()


def test_dynamic_true_says_every_size_started_dynamic(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """dynamic_true (format 1.32): both sizes of [0/0] are dynamic because the compile ran under
    dynamic=True, as compiles.json's `why` says; no run-wide answer (nothing torch did alone)."""
    data = json.loads((folders["dynamic_true"] / "compiles.json").read_text())
    assert {s["why"] for s in data["symbols"]} == {"all_dynamic"} and data["dynamic"] is None
    page = open_page(browser, site.explorer("dynamic_true"))
    c = pick(page, "[0/0]")["compile"]
    assert c["symbols"] == [s["symbol"] for s in data["symbols"]]
    rows = page.locator(".cp-sec", has_text="Dynamic dimensions").locator("tr")
    said = [rows.nth(i).locator("td").nth(4).text_content() for i in range(1, rows.count())]
    assert said == ["dynamic=True (every size starts dynamic)"] * len(data["symbols"])
    assert page.locator(".cp-why-dynamic").count() == 0
    assert page.errors == []
    page.close()


def test_a_specialisation_shows_its_fix_as_the_file_says(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """specialized (format 1.15): each specialisation's `fix` beside it in the Dynamic dimensions
    section: [0/1]'s branch on the size (change that line), [1/1]'s loop over it (dynamic=False)."""
    data = json.loads((folders["specialized"] / "compiles.json").read_text())
    page = open_page(browser, site.explorer("specialized"))
    for cid, kind in (("[0/1]", "change_code"), ("[1/1]", "dynamic_false")):
        (symbol,) = [s for s in data["symbols"] if s["compile_id"] == cid]
        (spec,) = symbol["specializations"]
        fix, frame = spec["fix"], spec["user_frame"]
        assert fix["kind"] == kind
        pick(page, cid)
        notes = page.locator(".cp-sec", has_text="Dynamic dimensions").locator("tr").nth(1).locator("td").nth(5)
        at = f"{frame['file']}:{frame['line']} in {frame['name']}"
        said = f"change {at}: {fix['code']}" if kind == "change_code" else f"{fix['code']}, or change {at}"
        assert f"specialised to {spec['value']} at {at} (fix: {said})" in (notes.text_content() or "")
    assert page.errors == []
    page.close()


def test_unbacked_symbols_made_again_are_said_as_the_ones_they_stand_for(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """unbacked (format 1.18): [0/0]'s rows are the symbols its code made (u0, u1); the ones
    AOTAutograd and Inductor made again are one line, each with the symbol it stands for; each row
    names the operator that made it (format 1.39)."""
    data = json.loads((folders["unbacked"] / "compiles.json").read_text())
    mine = [s for s in data["symbols"] if s["compile_id"] == "[0/0]"]
    own = [s["symbol"] for s in mine if s["retrace_of"] is None]
    again = [f"{s['symbol']} = {s['retrace_of']}" for s in mine if s["retrace_of"]]
    assert own == ["u0", "u1"] and again
    page = open_page(browser, site.explorer("unbacked"))
    c = pick(page, "[0/0]")["compile"]
    assert c["symbols"] == [s["symbol"] for s in mine]
    sec = page.locator(".cp-sec", has_text="Dynamic dimensions")
    assert [sec.locator("tr").nth(i).locator("td").nth(0).text_content() for i in (1, 2)] == own
    # format 1.39: the operator each was made by, as its source, and data-dependent as the why.
    cells = [[sec.locator("tr").nth(i).locator("td").nth(c).text_content() for c in (1, 4)] for i in (1, 2)]
    data_why = "the data (known only when the graph runs)"
    assert cells == [["unbacked: item()", data_why], ["unbacked: nonzero()", data_why]]
    assert sec.locator("tr").count() == len(own) + 1
    said = f"Made again by AOTAutograd and Inductor, with no line of their own: {', '.join(again)}."
    assert sec.locator(".cp-retraces").text_content() == said
    assert page.errors == []
    page.close()


def test_failure_and_its_traceback_event(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """failures: a failed compile's type, reason and user frame; its button selects the traceback
    event (the dynamo_error artifact at the reference's raw.jsonl line), payload open."""
    data = entries(folders["failures"])
    failed = next(e for e in data.values() if e["failure"] and e["failure"]["traceback"])
    page = open_page(browser, site.explorer("failures"))
    c = pick(page, failed["id"])["compile"]
    f = failed["failure"]
    assert c["failure"]["type"] == f["type"] and c["failure"]["reason"] == f["reason"]
    assert c["status"] == "failed"
    page.locator(".cp-sec", has_text="Failure").locator(".cp-ref").click()
    h = wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == f["traceback"]["log_line"])
    raw = (folders["failures"] / "raw.jsonl").read_text().splitlines()[f["traceback"]["raw_line"] - 1]
    assert h["selected"]["log_line"] == json.loads(raw)["log_line"]
    assert h["selected"]["cid"] == failed["id"]
    assert page.locator(".tabs button.on").get_attribute("data-tab") == "payload"
    payload = (folders["failures"] / f["traceback"]["payload_filename"]).read_text(encoding="utf-8")
    wait_hook(page, lambda h: bool(h.get("payload")))
    assert page.locator(".code-line .src").first.text_content() == payload.split("\n")[0]
    # The Compile tab comes back for the same compile id.
    page.click(".tabs button[data-tab='compile']")
    assert page.locator(".cp-id").text_content() == failed["id"]
    assert page.errors == []
    page.close()


def follow_every_reference(page: Any, folder: Path, cid: str) -> None:
    """Pick `cid`, then click each of its payload references (the recompile reasons, the cache
    lookups): each selects exactly the event at the reference's raw.jsonl line."""
    entry = entries(folder)[cid]
    lines = (folder / "raw.jsonl").read_text().splitlines()
    pick(page, cid)
    refs = [entry["recompile"]["event"], *(c["event"] for c in entry["cache"])]
    assert page.locator(".cp-ref").count() == len(refs)
    for i, ref in enumerate(refs):
        page.click(".tabs button[data-tab='compile']")
        page.locator(".cp-ref").nth(i).click()
        h = wait_hook(page, lambda h, ref=ref: (h.get("followed") or {}).get("raw_line") == ref["raw_line"])
        assert h["followed"]["row"] >= 0
        h = wait_hook(page, lambda h, ref=ref: h.get("selected", {}).get("log_line") == ref["log_line"])
        assert json.loads(lines[ref["raw_line"] - 1])["log_line"] == h["selected"]["log_line"]


def test_recompile_reasons_and_cache_events(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """Each reference button selects exactly the event at its raw.jsonl line."""
    page = open_page(browser, site.explorer("recompiles"))
    follow_every_reference(page, folders["recompiles"], "[0/2]")
    page.close()


def test_each_cache_lookup_says_what_it_saved(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """caches/run2: every lookup hit; the Cache lookups table's time column says what each saved,
    as compiles.json's `time_saved_s` (1.26)."""
    compiles = json.loads((folders["cache_hits"] / "compiles.json").read_text())["compiles"]
    entry = next(e for e in compiles if e["cache"])
    saved = [c["time_saved_s"] for c in entry["cache"]]
    assert saved and all(isinstance(t, float) for t in saved)
    page = open_page(browser, site.explorer("cache_hits"))
    pick(page, entry["id"])
    rows = page.locator(".cp-sec", has_text="Cache lookups").locator("tr")
    cells = [rows.nth(i).locator("td").all_text_contents() for i in range(1, rows.count())]
    assert [c[:3] for c in cells] == [
        [c["cache"], c["outcome"], f"saved {c['time_saved_s']:.2f} s"] for c in entry["cache"]
    ]
    assert page.errors == []
    page.close()


def test_references_when_paged_from_the_server(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """?mode=remote pages the trace through serve's events API (as a trace past the limits is):
    the tab's reference buttons still select the event at their raw.jsonl line, found by its log
    line among the narrowed view's rows."""
    events = (folders["recompiles"] / "raw.jsonl").read_text().splitlines()
    page = open_page(browser, site.explorer("recompiles", "&mode=remote"))
    h = wait_hook(page, lambda h: h.get("loaded") is True)
    assert h["mode"] == "remote" and h["total"] == len(events) - 1  # line 1: the string table
    follow_every_reference(page, folders["recompiles"], "[0/2]")
    assert page.errors == []
    page.close()


def test_multi_rank_statuses(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """ranks_diverge_2: every rank's status of a compile id, and each rank's own entry."""
    per_rank = {r: entries(folders["ranks"] / f"rank_{r}") for r in (0, 1)}
    page = open_page(browser, site.explorer("ranks"))
    both = [cid for cid in per_rank[0] if cid in per_rank[1] and cid != "[-/-]"]
    only = [cid for cid in per_rank[1] if cid not in per_rank[0]]
    assert both and only, "ranks_diverge_2's ranks compile different frames"
    for cid in (both[0], only[0]):
        c = pick(page, cid)["compile"]
        want = {str(r): per_rank[r][cid]["status"] for r in (0, 1) if cid in per_rank[r]}
        assert c["ranks"] == want
        assert page.locator(".cp-rank").all_text_contents() == [f"rank {r}: {s}" for r, s in want.items()]
    # A restarted attempt leads to the attempt that went on.
    restarted = next(cid for cid in both if per_rank[0][cid]["restarted_as"])
    pick(page, restarted)
    page.click(".cp-facts .cp-cid")
    nxt = per_rank[0][restarted]["restarted_as"]
    h = wait_hook(page, lambda h: h["compile"]["id"] == nxt and h["filter"]["cid"] == nxt)
    assert h["compile"]["status"] in {per_rank[r][nxt]["status"] for r in (0, 1)}
    # The other rank's own entry, picked with its button.
    cid = both[0]
    pick(page, cid)
    page.click(".cp-rank[data-rank='1']")
    c = wait_hook(page, lambda h: h["compile"]["rank"] == 1)["compile"]
    assert c["cache"] == len(per_rank[1][cid]["cache"]) and c["graphBreaks"] == len(per_rank[1][cid]["graph_breaks"])
    # A reference of rank 1's entry selects that event in rank 1's raw.jsonl (the second part).
    cid = next(i for i in both if per_rank[1][i]["cache"])
    pick(page, cid)
    page.click(".cp-rank[data-rank='1']")
    wait_hook(page, lambda h: h["compile"]["rank"] == 1 and h["compile"]["id"] == cid)
    ref = per_rank[1][cid]["cache"][0]["event"]
    page.locator(".cp-sec", has_text="Cache lookups").locator(".cp-ref").first.click()
    h = wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == ref["log_line"])
    assert h["selected"]["rank"] == 1 and h["filter"]["rank"] == 1 and h["selected"]["cid"] == cid
    line = (folders["ranks"] / "rank_1" / "raw.jsonl").read_text().splitlines()[ref["raw_line"] - 1]
    assert json.loads(line)["log_line"] == ref["log_line"]
    assert page.errors == []
    page.close()


def test_log_strings_are_shown_as_text(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    page = open_page(browser, site.explorer("hostile"))
    c = pick(page, "[0/2]")["compile"]
    assert c["recommended"]["explanation"] == HOSTILE and c["recommended"]["kind"] == HOSTILE
    pane = page.locator("#detail-body")
    assert HOSTILE in pane.text_content()
    assert pane.locator("img").count() == 0
    # The run's first answers, shown while no event is selected: text too.
    show_answers(page)
    assert page.locator("#first-answers .fa-text").all_text_contents() == [HOSTILE]
    assert pane.locator("img").count() == 0
    assert page.evaluate("() => window.__pwned === undefined") is True
    assert page.errors == []
    page.close()


def show_answers(page: Any) -> None:
    """Every compile id, no event selected and the Event tab: the pane says the first answers."""
    page.click("#cids [data-cid='']")
    wait_hook(page, lambda h: h["filter"]["cid"] is None)
    page.click(".tabs button[data-tab='event']")
    page.wait_for_selector("#first-answers")


def _first_answers(folder: Path) -> list[dict[str, Any]]:
    """compiles.json's first answers as the hook shows them (rank None: a single log)."""
    said = json.loads((folder / "compiles.json").read_text())["first_answers"]
    return [
        {"kind": a["kind"], "compileId": a["compile_id"], "rank": None, "text": a["text"], "who": None} for a in said
    ]


def test_the_first_answers_show_until_an_event_is_picked(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """recompiles_dynamic: while no event is selected, the detail pane says the run's first answers
    (compiles.json's, as `tlscope LOG` printed them: its first failure, first recompile and slowest
    compile), each a button that opens its compile's Compile tab; picking an event shows the event
    instead."""
    expected = _first_answers(folders["dynamic"])
    assert [a["kind"] for a in expected] == ["failure", "recompile", "slow_compile"]
    page = open_page(browser, site.explorer("dynamic"))
    assert wait_hook(page, lambda h: "firstAnswers" in h)["firstAnswers"] == expected
    page.wait_for_selector("#first-answers")
    assert page.locator("#first-answers .fa-text").all_text_contents() == [a["text"] for a in expected]
    assert page.locator("#first-answers li").first.get_attribute("class") == "fa-failure"
    recompile = expected[1]
    page.locator("#first-answers .fa-recompile .fa-open").click()
    h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == recompile["compileId"])
    assert h["opened"] == {"cid": recompile["compileId"], "rank": None} and h["filter"]["cid"] == recompile["compileId"]
    assert page.locator(".tabs button.on").get_attribute("data-tab") == "compile"
    # Back to all compile ids and another tab: the answers again; the slowest compile's opens it.
    show_answers(page)
    slow = expected[2]
    page.locator("#first-answers .fa-slow_compile .fa-open").click()
    h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == slow["compileId"])
    assert h["opened"] == {"cid": slow["compileId"], "rank": None}
    # Again, until a row is picked.
    show_answers(page)
    page.click("#table .row >> nth=2")
    page.wait_for_selector("#detail-body pre.json")
    assert page.locator("#first-answers").count() == 0
    assert page.errors == []
    page.close()


def test_a_jobs_ranks_saying_one_answer_say_it_once(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """ranks_diverge_2: a job's first answers are ranks.json's (1.42): both ranks' most frequent
    break is one line, said once for every rank; its button opens the compile on rank 0."""
    said = json.loads((folders["ranks"] / "ranks.json").read_text())["first_answers"]["lines"]
    assert said and said[0]["ranks"] == [0, 1] and said[0]["who"] == "every rank"
    page = open_page(browser, site.explorer("ranks"))
    h = wait_hook(page, lambda h: "firstAnswers" in h)
    assert h["firstAnswers"] == [
        {"kind": a["kind"], "compileId": a["compile_id"], "rank": a["ranks"][0], "text": a["text"], "who": a["who"]}
        for a in said
    ]
    page.wait_for_selector("#first-answers")
    assert page.locator("#first-answers .fa-text").all_text_contents() == [a["text"] for a in said]
    assert page.locator("#first-answers .fa-rank").first.text_content() == "every rank:"
    cid = said[0]["compile_id"]
    button = page.locator("#first-answers .fa-open").first
    assert button.text_content() == f"open {cid} on rank 0"
    button.click()
    h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == cid)
    assert h["opened"] == {"cid": cid, "rank": 0} and h["filter"]["rank"] == 0
    assert page.errors == []
    page.close()


def test_url_round_trip(browser: Any, site: ExplorerSite) -> None:
    page = open_page(browser, site.explorer("dynamic"))
    before = pick(page, "[0/5]")
    url = page.url
    assert "tab=compile" in url and f"cid={quote('[0/5]', safe='')}" in url
    again = open_page(browser, url)
    after = wait_hook(again, lambda h: (h.get("compile") or {}).get("id") == "[0/5]")
    assert after["compile"] == before["compile"]
    assert after["filter"] == before["filter"]
    assert again.locator(".tabs button.on").get_attribute("data-tab") == "compile"
    page.close()
    again.close()


def test_without_compiles_json(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    page = open_page(browser, site.explorer("old"))
    h = hook(page)
    assert h["statuses"]["[0/1]"] == "ok"  # from compilation_metrics, as before
    c = pick(page, "[0/1]")["compile"]
    assert c["source"] == "none" and c["status"] == "ok" and c["recommended"] is None
    assert "No compiles.json" in page.locator("#detail-body").text_content()
    assert page.errors == []
    page.close()


def test_a_reference_logged_under_another_attempt(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """graph_breaks_repeated: a recompile whose frame compile restarted has its entry on the last
    attempt and its recompile_reasons event logged under the first; the button still finds it."""
    lines = (folders["repeated"] / "raw.jsonl").read_text().splitlines()
    entry, ref = next(
        (e, e["recompile"]["event"])
        for e in entries(folders["repeated"]).values()
        if e["recompile"] and compile_id_of(json.loads(lines[e["recompile"]["event"]["raw_line"] - 1])) != e["id"]
    )
    logged_under = compile_id_of(json.loads(lines[ref["raw_line"] - 1]))
    page = open_page(browser, site.explorer("repeated"))
    pick(page, entry["id"])
    page.locator(".cp-sec", has_text="Why it recompiled").locator(".cp-ref").click()
    h = wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == ref["log_line"])
    assert h["selected"]["cid"] == logged_under == h["filter"]["cid"] and h["selected"]["key"] == "artifact"
    assert h["filter"]["q"] == "recompile_reasons"
    assert page.errors == []
    page.close()


def test_aot_inductor_compiles_are_shown_with_the_outside_events(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """aoti: the AOT Inductor compile (compiles.json `aot_inductor`, format 1.21), which torch logs
    with no compile id, is shown with `[-/-]`: its status, call, time, and a button per code and
    graph that selects its event, the wrapper code's payload open."""
    (aoti,) = json.loads((folders["aoti"] / "compiles.json").read_text())["aot_inductor"]
    page = open_page(browser, site.explorer("aoti"))
    c = pick(page, "[-/-]")["compile"]
    assert c["status"] == "outside" and c["aotInductor"] == 1
    box = page.locator(".cp-sec", has_text="AOT Inductor compiles (1)")
    text = box.text_content()
    assert f"compile 0: {aoti['status']}" in text and f"{aoti['time']['duration_s']:.2f} s" in text
    assert f"{aoti['user_frame']['file']}:{aoti['user_frame']['line']}" in text
    refs = [*aoti["code"], *aoti["graphs"]]
    assert box.locator(".cp-ref").count() == len(refs)
    wrapper = next(i for i, ref in enumerate(refs) if ref.get("name") == "inductor_aot_wrapper_code")
    # Labelled by the dump's name (1.25), not "graph_dump".
    assert box.locator(".cp-ref").nth(wrapper).text_content().startswith("inductor_aot_wrapper_code · log line ")
    box.locator(".cp-ref").nth(wrapper).click()
    h = wait_hook(page, lambda h: h.get("selected", {}).get("log_line") == refs[wrapper]["log_line"])
    assert h["selected"]["cid"] == "[-/-]"
    payload = (folders["aoti"] / refs[wrapper]["payload_filename"]).read_text(encoding="utf-8")
    wait_hook(page, lambda h: bool(h.get("payload")))
    assert page.locator(".code-line .src").nth(1).text_content() == payload.split("\n")[1]
    assert page.errors == []
    page.close()


def test_an_aot_compile_capture_says_what_captured_it(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """aot_compile: the captured compiles (compiles.json `capture`, format 1.20) show their status,
    time and failure as read from the records torch logged outside them, and what captured them."""
    data = entries(folders["aot_compile"])
    page = open_page(browser, site.explorer("aot_compile"))
    for cid in ("[0/0]", "[1/0]"):
        entry = data[cid]
        c = pick(page, cid)["compile"]
        assert (c["status"], c["capture"]) == (entry["status"], "aot_compile")
        assert c["durationS"] == entry["time"]["duration_s"]
        frame = entry["user_frame"]
        assert (
            f"aot_compile, called at {frame['file']}:{frame['line']}" in page.locator(".cp-facts").first.text_content()
        )
    assert c["failure"]["type"] == data["[1/0]"]["failure"]["type"] == "Unsupported"
    assert page.errors == []
    page.close()


def test_the_collectives_a_compile_calls_and_inductor_scheduled(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """ranks_diverge_2: the compile whose graph all-reduces shows its Dynamo graph's collectives
    and (format 1.34) the schedule Inductor logged, as rank 0's compiles.json says them."""
    mine = entries(folders["ranks"] / "rank_0")
    cid = next(c for c, e in mine.items() if e.get("collective_schedules"))
    calls = [
        " ".join([c["op"], *([c["tensor"]] if c["tensor"] else []), *c["args"]])
        for g in mine[cid]["graphs"]
        if g["kind"] == "dynamo_output_graph"
        for c in g["collectives"]
    ]
    page = open_page(browser, site.explorer("ranks"))
    pick(page, cid)
    page.click(".cp-rank[data-rank='0']")
    c = wait_hook(page, lambda h: h["compile"]["rank"] == 0 and h["compile"]["id"] == cid)["compile"]
    assert (c["collectives"], c["scheduled"]) == (calls, mine[cid]["collective_schedules"]) and calls
    shown = page.locator(".cp-sec", has_text="Collectives").locator("dd").all_text_contents()
    assert shown == [", ".join(calls), *(", ".join(ops) for ops in mine[cid]["collective_schedules"])]
    assert page.errors == []
    page.close()
