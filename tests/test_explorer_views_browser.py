"""The explorer's overview views in headless Chromium, on real corpus traces made with torch (issue 20).

* The Recompiles view (`?view=recompiles`): every recompile on one screen, as many as the log's
  `recompile_reasons` artifacts, each with its function, the recommended guard failure and what
  changed; a row opens that compile's Compile tab.
* A multi-rank job's divergence: the compile ids not on every rank (`window.__tlscope.divergent`)
  are the ones the rank logs themselves disagree on, marked in the sidebar with their ranks; the
  banner says ranks.json's sentences; a picked rank lists only its own compile ids in the sidebar.
* The active view is in the URL, and function names are in the sidebar.

The logs are read here with a reader of their own (the glog prefix and the JSON envelope), not
tlscope's, so the counts the page shows are checked against the logs, not against tlscope.
"""

from __future__ import annotations

import gzip
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import REPO, ExplorerSite, LiveServer, hook, open_explorer, require_shared, served_explorer, wait_hook

CORPUS = REPO / "corpus" / "traces"
TRACES = {
    "recompiles": "recompiles",
    "dynamic": "recompiles_dynamic",
    "diverge4": "ranks_diverge_4",
    "diverge2": "ranks_diverge_2",
    "desync2": "ranks_desync_2",
    "settings2": "ranks_settings_2",
    "same4": "ranks_same_4",
    "shifted4": "ranks_shifted_4",
    "exports": "export_failures",
    "strict": "export_strict",
    "plain": "export_plain",
    "train": "train_step",
}
GLOG = re.compile(rb"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] ")


def envelopes(log: Path) -> Iterator[dict[str, Any]]:
    """The JSON envelopes of a TORCH_TRACE log (gzipped or not)."""
    with gzip.open(log, "rb") if log.suffix == ".gz" else log.open("rb") as f:
        for line in f:
            m = GLOG.match(line)
            if m:
                try:
                    yield json.loads(line[m.end() :])
                except ValueError:
                    continue


def display_id(e: dict[str, Any]) -> str:
    """An envelope's compile id as PyTorch prints it: [F/C], [F/C_A], [!CA/F/C], [-/-]."""
    if "frame_id" not in e and "compiled_autograd_id" not in e:
        return "[-/-]"
    frame, compile_, attempt = e.get("frame_id"), e.get("frame_compile_id"), e.get("attempt") or 0
    base = f"{'-' if frame is None else frame}/{'-' if compile_ is None else compile_}" + (
        f"_{attempt}" if attempt else ""
    )
    ca = e.get("compiled_autograd_id")
    return f"[{base}]" if ca is None else f"[!{ca}/{base}]"


def logs_of(corpus: str | Path) -> list[Path]:
    folder = corpus if isinstance(corpus, Path) else CORPUS / corpus
    return sorted(p for p in folder.iterdir() if p.name.endswith((".log", ".log.gz")))


def recompile_reasons(corpus: str | Path) -> int:
    """How many recompiles the logs say: Dynamo logs one recompile_reasons artifact per recompile."""
    return sum(
        1
        for log in logs_of(corpus)
        for e in envelopes(log)
        if (e.get("artifact") or {}).get("name") == "recompile_reasons"
    )


def rank_of(log: Path) -> int:
    m = re.search(r"_rank_(\d+)[_.]", log.name)
    assert m, log
    return int(m.group(1))


def ids_by_rank(corpus: str | Path) -> dict[int, set[str]]:
    return {rank_of(log): {display_id(e) for e in envelopes(log)} - {"[-/-]"} for log in logs_of(corpus)}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tlscope.cli import main as tlscope_main

    root = tmp_path_factory.mktemp("views")
    for name, corpus in TRACES.items():
        assert tlscope_main([str(CORPUS / corpus), "-o", str(root / name), "--no-browser"]) == 0
    return {name: root / name for name in TRACES}


@pytest.fixture(scope="module")
def site(folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExplorerSite]:
    with served_explorer(folders, tmp_path_factory.mktemp("serve")) as served:
        yield served


def compiles(folder: Path) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in json.loads((folder / "compiles.json").read_text())["compiles"]}


@pytest.mark.parametrize("name", ["recompiles", "dynamic"])
def test_recompiles_view_lists_every_recompile(
    browser: Any, site: ExplorerSite, folders: dict[str, Path], name: str
) -> None:
    """?view=recompiles lists as many recompiles as the log has recompile_reasons, on one screen,
    each with its function and the guard failure compiles.json recommends, and its changes."""
    page = open_explorer(browser, site.explorer(name, "&view=recompiles"), height=1000)
    h = wait_hook(page, lambda h: h.get("recompiles") is not None)
    want = recompile_reasons(TRACES[name])
    assert want >= 4
    hinted = [e for e in compiles(folders[name]).values() if e["failure"] and e["failure"]["hints"]]
    if name == "dynamic":  # [3/2] hit the recompile limit: torch says what to do about it
        assert [e["id"] for e in hinted] == ["[3/2]"]
        assert "recompile_limit" in hinted[0]["failure"]["hints"][0]
    assert h["view"] == "recompiles" and h["recompiles"] == want
    assert page.locator("#pane tr.rc").count() == want and page.locator("#table").is_hidden()
    assert page.locator("#view-recompiles").text_content() == f"Recompiles ({want})"
    entries = compiles(folders[name])
    for shown, row in zip(h["recompileList"], page.locator("#pane tr.rc").all(), strict=True):
        entry = entries[shown["id"]]
        rec = entry["recompile"]
        best = rec["guard_failures"][rec["recommended"]["index"]]
        assert shown["fn"] == entry["function"]["name"] and shown["kind"] == best["kind"]
        assert row.locator(".rc-name").text_content() == entry["function"]["name"]
        assert row.locator(".rc-expl").text_content() == best["explanation"]
        assert (
            row.locator(".rc-because").text_content()
            == f"cache entry {best['cache_entry']}: {rec['recommended']['why']}"
        )
        changes = [f"{c['name']} {c['what']}: {c['before']} → {c['after']}" for c in rec["changes"]]
        assert row.locator(".rc-change").all_text_contents() == changes
        fix = rec["fix"]
        assert row.locator(".rc-fix-code").all_text_contents() == ([fix["code"]] if fix else [])
        failure = entry["failure"]
        assert row.locator(".rc-failure").all_text_contents() == (
            [f"{failure['type']}: {failure['reason']}"] if failure else []
        )
        # torch's own fix hints of the failure (format 1.12), e.g. the recompile limit's.
        said = [*failure["hints"], failure["docs_url"]] if failure else []
        assert row.locator(".rc-hint").all_text_contents() == [f"torch: {h}" for h in said if h]
    # Why inputs are dynamic, as compiles.json's `dynamic` says it (format 1.29), opened on demand.
    dynamic = json.loads((folders[name] / "compiles.json").read_text())["dynamic"]
    assert page.locator(".rc-why-sentence").all_text_contents() == [dynamic["sentence"]]
    page.locator(".rc-why-dynamic summary").click()
    assert page.locator(".rc-why-sentence").is_visible()
    page.locator(".rc-why-dynamic summary").click()
    # The rows are in compile order, on one screen (1400 x 1000) for the corpus's 11: the last
    # one's compile id, function and reason are in view without scrolling (torch's hints below
    # them may run on).
    assert [s["id"] for s in h["recompileList"]] == [i for i, e in entries.items() if e["recompile"]]
    last_row = page.locator("#pane tr.rc").last
    for part in (".rc-open", ".rc-name", ".rc-expl"):
        box = last_row.locator(part).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 1000, part
    # A row opens that compile: the event table filtered to it, its Compile tab.
    last = h["recompileList"][-1]["id"]
    page.locator("#pane tr.rc .rc-open").last.click()
    h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == last and h["view"] == "events")
    assert h["filter"]["cid"] == last and page.locator("#table").is_visible() and page.locator("#pane").is_hidden()
    # The Compile tab says torch's hints of a failed compile too (recompiles_dynamic's [3/2]).
    failure = entries[last]["failure"]
    said = [*failure["hints"], failure["docs_url"]] if failure else []
    assert page.locator("#detail-body .cp-hint").all_text_contents() == [f"torch: {x}" for x in said if x]
    assert "view=recompiles" not in page.url.split("#")[1] and "view=events" in page.url
    assert page.errors == []
    page.close()


def test_view_in_the_url(browser: Any, site: ExplorerSite) -> None:
    """The view picked is kept in the fragment and comes back on reload; the sidebar names functions."""
    page = open_explorer(browser, site.explorer("recompiles"))
    assert hook(page)["view"] == "events" and page.locator("#pane").is_hidden()
    page.click("#view-recompiles")
    wait_hook(page, lambda h: h.get("recompiles") is not None)
    assert "view=recompiles" in page.url
    page.reload()
    wait_hook(page, lambda h: h.get("loaded") is True and h.get("view") == "recompiles")
    assert page.locator("#pane tr.rc").count() == recompile_reasons("recompiles")
    page.click("#view-breaks")
    wait_hook(page, lambda h: h.get("view") == "breaks")
    assert "view=breaks" in page.url and page.locator("#pane #breaks").is_visible()
    # Function names beside the compile ids (compiles.json's function.name).
    row = page.locator("#cids [data-cid='[0/1]']")
    assert row.locator(".cid-fn").text_content() == "fn"
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("name", ["diverge4", "diverge2"])
def test_divergence_marked(browser: Any, site: ExplorerSite, folders: dict[str, Path], name: str) -> None:
    """The compile ids not on every rank, as the rank logs say, with their ranks; the banner says
    ranks.json's sentences; a picked rank lists only its own compile ids in the sidebar."""
    by_rank = ids_by_rank(TRACES[name])
    every = set.intersection(*by_rank.values())
    divergent = sorted(set.union(*by_rank.values()) - every)
    assert divergent, "the corpus trace diverges"
    page = open_explorer(browser, site.explorer(name))
    h = wait_hook(page, lambda h: "divergent" in h)
    assert h["divergent"] == divergent
    sentences = [g["sentence"] for g in json.loads((folders[name] / "ranks.json").read_text())["divergence"]["groups"]]
    assert h["divergence"] == sentences
    assert (
        page.locator("#divergence .dv-group").all_text_contents() == sentences
        and page.locator("#divergence").is_visible()
    )
    # The note under the groups is a line of its own: the next list's title starts below it.
    note, title = (page.locator(f"#divergence {s}").bounding_box() for s in (".dv-note", "strong >> nth=1"))
    assert note is not None and title is not None and title["y"] >= note["y"] + note["height"]
    for cid in divergent:
        on = sorted(r for r, ids in by_rank.items() if cid in ids)
        marker = page.locator(f"#cids [data-cid='{cid}'] .cid-only")
        assert marker.text_content() == "only " + ",".join(f"r{r}" for r in on)
    # Not marked: an id every rank has.
    common = sorted(every)[-1]
    assert page.locator(f"#cids [data-cid='{common}'] .cid-only").is_hidden()
    # A picked rank: the sidebar lists that rank's compile ids only (each rank's log's own).
    for rank, ids in sorted(by_rank.items()):
        page.select_option("#f-rank", str(rank))
        h = wait_hook(page, lambda h, rank=rank: h.get("sidebarRank") == rank)
        assert set(h["compileIds"]) - {"[-/-]"} == ids
        assert h["filter"]["rank"] == rank
    page.select_option("#f-rank", "")
    h = wait_hook(page, lambda h: h.get("sidebarRank") is None)
    assert set(h["compileIds"]) - {"[-/-]"} == set.union(*by_rank.values())
    assert page.errors == []
    page.close()


def test_collectives_that_differ_between_ranks_are_said_first(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """ranks_desync_2: both ranks compile the same ids (no divergence groups), but [0/0]'s
    all_reduce is f32[8, 16] on rank 0 and f32[9, 16] on rank 1: the banner shows ranks.json's
    sentence for it, as written (the page compares nothing)."""
    mismatches = json.loads((folders["desync2"] / "ranks.json").read_text())["divergence"]["collectives"]
    sentences = [m["sentence"] for m in mismatches]
    assert [m["id"] for m in mismatches] == ["[0/0]"]
    page = open_explorer(browser, site.explorer("desync2"))
    h = wait_hook(page, lambda h: "collectives" in h)
    assert h["collectives"] == sentences and h["divergence"] == [] and h["divergent"] == []
    assert page.locator("#divergence").is_visible()
    assert page.locator("#divergence .dv-collective").all_text_contents() == sentences
    assert page.locator("#divergence .dv-group").count() == 0
    # Its [0/0] graphs differ too (x is f32[8, 16] on rank 0, f32[9, 16] on rank 1: format 1.30).
    graphs = [
        g["sentence"] for g in json.loads((folders["desync2"] / "ranks.json").read_text())["divergence"]["graphs"]
    ]
    assert len(graphs) == 1 and graphs[0].startswith("[0/0] step (ranks_desync_2.py:")
    assert h["graphs"] == graphs and page.locator("#divergence .dv-graph").all_text_contents() == graphs
    assert page.errors == []
    page.close()


def test_ranks_under_other_settings_are_said_before_their_graphs(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """ranks_settings_2 (format 1.30): rank 1 turned automatic dynamic shapes off, so its [0/1]
    is static where rank 0's is dynamic. The banner says ranks.json's settings sentence, then the
    graphs', as written; the compile ids agree (no groups)."""
    divergence = json.loads((folders["settings2"] / "ranks.json").read_text())["divergence"]
    settings = [s["sentence"] for s in divergence["settings"]]
    graphs = [g["sentence"] for g in divergence["graphs"]]
    assert settings == [
        "rank 1 compiled under other settings than rank 0: dynamo automatic_dynamic_shapes False (True on rank 0)"
    ]
    assert len(graphs) == 1 and "input L_x_ is f32[s77, 16] on rank 0, f32[10, 16] on rank 1" in graphs[0]
    page = open_explorer(browser, site.explorer("settings2"))
    h = wait_hook(page, lambda h: "settings" in h)
    assert h["settings"] == settings and h["graphs"] == graphs and h["divergence"] == []
    assert page.locator("#divergence .dv-setting").all_text_contents() == settings
    assert page.locator("#divergence .dv-graph").all_text_contents() == graphs
    # The settings come first: they are the cause.
    text = page.locator("#divergence").text_content() or ""
    assert text.index("Settings differ between ranks") < text.index("Graphs differ between ranks")
    assert page.errors == []
    page.close()


def test_caches_that_answered_differently_are_said_last(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """ranks_same_4 (format 1.36): rank 1's FX graph cache hit twice in [4/0] where the others
    missed. The banner says ranks.json's caches sentence, as written, and nothing else diverges."""
    divergence = json.loads((folders["same4"] / "ranks.json").read_text())["divergence"]
    caches = [c["sentence"] for c in divergence["caches"]]
    assert len(caches) == 1 and caches[0].startswith("[4/0] Mlp.forward (_ranks.py:40): caches answered differently")
    page = open_explorer(browser, site.explorer("same4"))
    h = wait_hook(page, lambda h: "caches" in h)
    assert h["caches"] == caches and h["divergence"] == [] and h["graphs"] == [] and h["settings"] == []
    assert page.locator("#divergence .dv-cache").all_text_contents() == caches
    assert page.locator("#divergence").is_visible()
    assert page.errors == []
    page.close()


def test_a_function_one_rank_compiled_alone_is_said_where_ranks_json_says(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """ranks_shifted_4 (format 1.31): rank 0 alone compiled log_stats, which renumbers its later
    functions. The banner says ranks.json's frames sentence, as written, in the order ranks.json's
    `said` gives (format 1.40: after the groups it explains)."""
    divergence = json.loads((folders["shifted4"] / "ranks.json").read_text())["divergence"]
    frames = [f["sentence"] for f in divergence["frames"]]
    assert len(frames) == 1 and frames[0].startswith("rank 0 compiled 1 function ranks 1, 2, 3 did not")
    page = open_explorer(browser, site.explorer("shifted4"))
    h = wait_hook(page, lambda h: "frames" in h)
    assert h["frames"] == frames and h["divergence"] == [g["sentence"] for g in divergence["groups"]]
    assert page.locator("#divergence .dv-frame").all_text_contents() == frames
    # Each list where ranks.json's `said` puts it (format 1.40: the groups, then the functions
    # that explain them, then the graphs), under its title.
    text = page.locator("#divergence").text_content() or ""
    titles = [said["title"] for said in divergence["said"]]
    assert titles == ["Ranks diverge", "Ranks compiled other functions", "Graphs differ between ranks"]
    assert h["said"] == [said["list"] for said in divergence["said"]]
    assert [text.index(f"{t}: ") for t in titles] == sorted(text.index(f"{t}: ") for t in titles)
    # The sidebar names each id's functions, each rank's (ranks ascending), then the picked rank's.
    fn = page.locator("#cids [data-cid='[1/0]'] .cid-fn")
    assert fn.text_content() == "log_stats / block"
    for rank, name in ((0, "log_stats"), (1, "block")):
        page.select_option("#f-rank", str(rank))
        wait_hook(page, lambda h, rank=rank: h.get("sidebarRank") == rank)
        assert fn.text_content() == name
    assert page.errors == []
    page.close()


def test_exports_view_says_each_call_as_written(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """export_failures: ?view=exports lists each torch.export call (as many as the log's `export`
    events; as many exported as its `exported_program` events) with compiles.json's sentences and
    fixes as written; an issue's button selects its event in the table. A torch.compile trace has
    no Exports button."""
    (log,) = logs_of(TRACES["exports"])
    keys = [next(iter(e)) for e in envelopes(log)]
    calls = json.loads((folders["exports"] / "compiles.json").read_text())["exports"]
    assert len(calls) == keys.count("export") == 4
    assert sum(c["status"] == "exported" for c in calls) == keys.count("exported_program") == 1
    page = open_explorer(browser, site.explorer("exports", "&view=exports"), height=1000)
    h = wait_hook(page, lambda h: bool(h.get("exports")) and h.get("view") == "exports")
    assert [(c["status"], c["sentence"]) for c in h["exports"]] == [(c["status"], c["sentence"]) for c in calls]
    assert [c["issues"] for c in h["exports"]] == [[i["kind"] for i in c["issues"]] for c in calls]
    assert page.locator("#view-exports").text_content() == "Exports (4)"
    assert page.locator("#exports .ex-call-sentence").all_text_contents() == [c["sentence"] for c in calls]
    fixes = [i["fix"]["code"] for c in calls for i in c["issues"] if i["fix"]]
    assert page.locator("#exports .ex-fix-code").all_text_contents() == fixes
    # The first issue's event: guard_on_data_dependent_error, selected in the table.
    first = calls[0]["issues"][0]
    raw = (folders["exports"] / "raw.jsonl").read_text().splitlines()
    assert "guard_on_data_dependent_error" in json.loads(raw[first["raw_line"] - 1])
    page.locator("#exports li.ex-call").first.locator(".ex-show").first.click()
    h = wait_hook(
        page, lambda h: (h.get("followed") or {}).get("raw_line") == first["raw_line"] and h["view"] == "events"
    )
    assert h["followed"]["row"] >= 0 and page.locator("#table").is_visible()
    assert page.errors == []
    page.close()
    other = open_explorer(browser, site.explorer("recompiles"))
    wait_hook(other, lambda h: h.get("loaded") is True and "exports" in h)
    assert hook(other)["exports"] == [] and other.locator("#view-exports").is_hidden()
    other.close()


@pytest.mark.parametrize("name", ["strict", "plain"])
def test_every_export_issue_selects_its_own_event(
    browser: Any, site: ExplorerSite, folders: dict[str, Path], name: str
) -> None:
    """export_strict and export_plain: a data-dependent error read from strict export's metrics or
    from the partial graph is shown at that event (compiles.json `event_kind`, 1.23), not at a
    guard_on_data_dependent_error the log does not have: each issue's button selects its row."""
    calls = json.loads((folders[name] / "compiles.json").read_text())["exports"]
    issues = [i for c in calls for i in c["issues"]]
    raw = (folders[name] / "raw.jsonl").read_text().splitlines()
    page = open_explorer(browser, site.explorer(name, "&view=exports"), height=1000)
    wait_hook(page, lambda h: bool(h.get("exports")) and h.get("view") == "exports")
    buttons = page.locator("#exports .ex-show")
    assert buttons.count() == len(issues)
    for n, issue in enumerate(issues):
        assert issue["event_kind"] in json.dumps(json.loads(raw[issue["raw_line"] - 1]))
        page.click("#view-exports")
        buttons.nth(n).click()
        h = wait_hook(page, lambda h, i=issue: (h.get("followed") or {}).get("raw_line") == i["raw_line"])
        assert h["followed"]["row"] >= 0, issue
    assert page.errors == []
    page.close()


def test_a_strict_call_traced_says_its_end_is_not_logged(
    browser: Any, site: ExplorerSite, folders: dict[str, Path]
) -> None:
    """export_strict: its third call's Dynamo trace worked and, without TORCH_DTRACE, nothing
    followed: the Exports view shows it `traced` with the file's sentence and its trace's id."""
    calls = json.loads((folders["strict"] / "compiles.json").read_text())["exports"]
    (traced,) = [c for c in calls if c["status"] == "traced"]
    page = open_explorer(browser, site.explorer("strict", "&view=exports"), height=1000)
    h = wait_hook(page, lambda h: bool(h.get("exports")) and h.get("view") == "exports")
    assert [c["status"] for c in h["exports"]] == [c["status"] for c in calls]
    item = page.locator("#exports li.ex-call").nth(traced["index"])
    assert item.locator(".ex-status").text_content() == "traced, end not logged"
    assert item.locator(".ex-call-sentence").text_content() == traced["sentence"]
    assert item.locator(".ex-trace").text_content() == f"strict export's Dynamo trace: compile {traced['trace_id']}"
    assert page.errors == []
    page.close()


def test_single_log_has_no_banner(browser: Any, site: ExplorerSite) -> None:
    page = open_explorer(browser, site.explorer("recompiles"))
    h = wait_hook(page, lambda h: "divergent" in h)
    assert h["divergent"] == [] and h["divergence"] == [] and h["collectives"] == [] and h["graphs"] == []
    assert page.locator("#divergence").is_hidden()
    page.close()


def test_packed_job_marks_divergence(browser: Any, folders: dict[str, Path], tmp_path: Path) -> None:
    """`tlscope pack` of a diverging job: from file://, the same marks and banner (its ranks.json is packed)."""
    from tlscope.cli import main as tlscope_main

    html = tmp_path / "job.html"
    assert tlscope_main(["pack", str(folders["diverge2"]), "-o", str(html)]) == 0
    by_rank = ids_by_rank(TRACES["diverge2"])
    page = browser.new_page()
    page.goto(html.as_uri())
    h = wait_hook(page, lambda h: h.get("loaded") is True and "divergent" in h)
    assert h["divergent"] == sorted(set.union(*by_rank.values()) - set.intersection(*by_rank.values()))
    assert page.locator("#divergence .dv-group").count() == len(h["divergence"]) >= 2
    for cid in h["divergent"]:
        assert page.locator(f"#cids [data-cid='{cid}'] .cid-only").is_visible()
    page.close()


def test_recompiles_and_divergence_of_a_job(browser: Any, tmp_path: Path) -> None:
    """tlparse's multi_rank_logs (../shared): ranks 1 and 3 recompile (14 and 6 times), ranks 0 and
    2 never; the Recompiles view lists each rank's, and the divergent ids are the logs' own."""
    from tlscope.cli import main as tlscope_main

    job = require_shared() / "inputs" / "multi_rank_logs"
    out = tmp_path / "job"
    assert tlscope_main([str(job), "-o", str(out), "--no-browser"]) == 0
    per_rank = {rank_of(log): recompile_reasons_of(log) for log in logs_of(job)}
    assert per_rank[1] > 0 and per_rank[0] == 0
    by_rank = ids_by_rank(job)
    server = LiveServer([str(out)], tmp_path / "serve")
    try:
        with urllib.request.urlopen(f"{server.url}/api/traces", timeout=60) as response:
            (trace,) = json.load(response)
        page = open_explorer(
            browser, f"{server.url}/viewers/explorer/?trace={quote(trace['url'], safe='')}&view=recompiles"
        )
        h = wait_hook(page, lambda h: h.get("recompiles") is not None and "divergent" in h)
        assert h["recompiles"] == sum(per_rank.values())
        assert {r: sum(1 for x in h["recompileList"] if x["rank"] == r) for r in per_rank} == per_rank
        # Two programs ran (fn on ranks 0, 2; kernel on 1, 3, both first [0/0]): by function
        # (format 1.33) no compile is on every rank, kernel's said with its function.
        every_id = set.union(*by_rank.values())
        assert sorted({d.split(" ")[0] for d in h["divergent"]}) == sorted(every_id)
        assert len(h["divergent"]) == len(every_id) + 1 and "[0/0] kernel (gen_many_frames.py:6)" in h["divergent"]
        # A rank's recompile opens that rank's compile: the table on that rank, the sidebar too.
        first = next(x for x in h["recompileList"] if x["rank"] == 3)
        page.locator("#pane tr.rc").nth(h["recompileList"].index(first)).locator(".rc-open").click()
        h = wait_hook(page, lambda h: (h.get("compile") or {}).get("id") == first["id"] and h.get("sidebarRank") == 3)
        assert h["filter"]["rank"] == 3 and h["compile"]["rank"] == 3
        assert set(h["compileIds"]) - {"[-/-]"} == by_rank[3]
        assert page.errors == []
        page.close()
    finally:
        server.close()


def recompile_reasons_of(log: Path) -> int:
    return sum(1 for e in envelopes(log) if (e.get("artifact") or {}).get("name") == "recompile_reasons")


def test_breaks_view_shows_each_break_s_fix(browser: Any, site: ExplorerSite, folders: dict[str, Path]) -> None:
    """Format 1.50: a distinct break's `fix` is shown under it, as compiles.json words it (corpus
    train_step: the backward's `compile_model`, the optimizer's `step_outside`), before torch's hints."""
    groups = json.loads((folders["train"] / "compiles.json").read_text())["graph_breaks"]
    page = open_explorer(browser, site.explorer("train", "#view=breaks"))
    wait_hook(page, lambda h: h.get("view") == "breaks")
    items = page.locator("#pane #breaks li.gb")
    assert items.count() == len(groups) == 3
    for i, group in enumerate(groups):
        item = items.nth(i)
        assert item.locator(".gb-reason").text_content() == group["reason"]
        assert item.locator(".cp-fix .cp-fix-code").text_content() == group["fix"]["code"]
        assert item.locator(".cp-fix .cp-why").text_content() == group["fix"]["why"]
    kinds = [g["fix"]["kind"] for g in groups]
    assert sorted(kinds) == ["compile_model", "step_outside", "step_outside"]
    assert page.errors == []
    page.close()
