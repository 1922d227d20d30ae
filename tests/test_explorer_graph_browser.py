"""The explorer's Graph view (`?view=graph&event=N`, issue 23 point 2) in headless Chromium, on a
real corpus trace made with torch (corpus/traces/provenance: a conv + linear module, compiled with
a backward): the rows are the graphs file's inputs and nodes; a name jumps to its definition and
shows its users; folds by user line and by module open and close; op and target filters; the
Payload tab links to the view; the module hierarchy is listed. What the page shows is checked
against graphs/<md5>.json read here as JSON."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import REPO, LiveServer, StaticSite, hook, open_explorer, served_explorer, wait_hook


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tlscope.cli import main as tlscope_main

    out = tmp_path_factory.mktemp("graph") / "provenance"
    assert tlscope_main([str(REPO / "corpus" / "traces" / "provenance"), "-o", str(out), "--no-browser"]) == 0
    return out


@pytest.fixture(scope="module")
def site(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_explorer({"trace": folder}, tmp_path_factory.mktemp("serve")) as served:
        yield served.explorer("trace")


def graph_events(folder: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """Event kind -> (its index among raw.jsonl's events, its graph), for the first of each kind."""
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, line in enumerate((folder / "raw.jsonl").read_text().splitlines()[1:]):
        event = json.loads(line)
        name = event.get("payload_filename", "")
        path = folder / "graphs" / f"{name[len('payloads/') : -len('.txt')]}.json"
        if name and path.is_file():
            kind = (event.get("artifact") or {}).get("name") or next(k for k, v in event.items() if isinstance(v, dict))
            found.setdefault(kind, (i, json.loads(path.read_text())["graph"]))
    return found


def names(graph: dict[str, Any]) -> list[str]:
    return [i["name"] for i in graph["inputs"]] + [n["name"] for n in graph["nodes"]]


def open_graph(browser: Any, site: str, n: int) -> Any:
    page = open_explorer(browser, f"{site}&view=graph&event={n}", height=900)
    wait_hook(page, lambda h: h.get("graphReady") is True and h.get("graphError") is None)
    return page


def test_rows_are_the_graphs_inputs_and_nodes_with_shapes(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["dynamo_output_graph"]
    page = open_graph(browser, site, n)
    assert hook(page)["graphNodes"] == names(graph)
    assert hook(page)["view"] == "graph" and page.locator("#table").is_hidden()
    node = next(x for x in graph["nodes"] if x.get("meta") and x["meta"].get("shape"))
    row = page.locator(".g-row", has=page.locator(f'.g-name[data-jump="{node["name"]}"]'))
    shape = f"{node['meta']['dtype']}[{', '.join(node['meta']['shape'])}]"
    assert row.locator(".g-meta").text_content() == shape
    assert row.locator(".g-call").text_content() == f"{node['target']}({', '.join(node['args'])})"
    assert page.errors == []


def test_a_name_jumps_to_its_definition_and_shows_its_users(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["aot_joint_graph"]
    page = open_graph(browser, site, n)
    # The last node reading an earlier node: click that argument in its row.
    user = next(x for x in reversed(graph["nodes"]) if any(a in {m["name"] for m in graph["nodes"]} for a in x["args"]))
    arg = next(a for a in user["args"] if a in {m["name"] for m in graph["nodes"]})
    defined = next(m for m in graph["nodes"] if arg in m["names"])
    row = page.locator(".g-row", has=page.locator(f'.g-name[data-jump="{user["name"]}"]'))
    # A call's arguments are links in the row under the pointer only (the others are text).
    assert page.locator(".g-call [data-jump]").count() == 0
    row.hover()
    # (dispatched: a long call's later arguments are clipped by the row's width, not hidden)
    row.locator(f'.g-call [data-jump="{arg}"]').first.dispatch_event("click")
    h = wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == defined["name"])
    assert h["graphSelected"]["users"] == defined["users"] and user["name"] in defined["users"]
    assert page.locator(".g-row.on .g-name").text_content() == defined["name"]
    # Its users, beside the table: one click goes to a user's definition in turn.
    page.locator(f'.g-user-list [data-jump="{user["name"]}"]').click()
    h = wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == user["name"])
    assert h["graphSelected"]["args"] == user["args"]


def source_folds(graph: dict[str, Any]) -> list[tuple[str, int]]:
    """(file:line, nodes) of each run of consecutive nodes from one user line, in graph order."""
    runs: list[tuple[str, int]] = []
    last = None
    for node in graph["nodes"]:
        src = node.get("source")
        if src is None:
            last = None
            continue
        key = f"{graph['sources'][src]['file']}:{graph['sources'][src]['line']}"
        if runs and last == key:
            runs[-1] = (key, runs[-1][1] + 1)
        else:
            runs.append((key, 1))
        last = key
    return runs


def test_folding_by_user_line_and_by_module(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["dynamo_output_graph"]
    page = open_graph(browser, site, n)
    page.select_option(".g-f-fold", "source")
    runs = source_folds(graph)
    assert runs and len(runs) < len(graph["nodes"])
    h = wait_hook(page, lambda h: len(h.get("graphFolds") or []) == len(runs))
    assert [f["size"] for f in h["graphFolds"]] == [size for _, size in runs]
    folded = {m["name"] for m in graph["nodes"] if m.get("source") is not None}
    assert h["graphNodes"] == [x for x in names(graph) if x not in folded]  # every fold closed
    page.locator(".g-fold").first.click()
    opened = [m["name"] for m in graph["nodes"] if m.get("source") is not None][: runs[0][1]]
    h = wait_hook(page, lambda h: all(x in h["graphNodes"] for x in opened))
    assert h["graphFolds"][0]["open"] is True
    page.locator(".g-collapse").click()
    wait_hook(page, lambda h: not any(f["open"] for f in h["graphFolds"]))
    modules = sorted({x["module"] for x in graph["inputs"] + graph["nodes"] if x.get("module") is not None})
    assert modules == ["conv", "fc"]
    assert hook(page)["graphModules"] == modules
    page.locator('.g-mod-name[data-module="fc"]').click()
    h = wait_hook(page, lambda h: any(f["label"] == "fc" and f["open"] for f in h.get("graphFolds") or []))
    in_fc = [x["name"] for x in graph["inputs"] + graph["nodes"] if x.get("module") == "fc"]
    assert all(x in h["graphNodes"] for x in in_fc)
    assert page.locator(".g-f-fold").input_value() == "module"


def test_a_jump_opens_the_closed_fold_holding_the_definition(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["dynamo_output_graph"]
    page = open_graph(browser, site, n)
    page.select_option(".g-f-fold", "source")
    wait_hook(page, lambda h: bool(h.get("graphFolds")))
    target = next(m for m in graph["nodes"] if m.get("source") is not None)
    page.evaluate("(name) => document.querySelector('.g-side').insertAdjacentHTML('beforeend', "
                  "`<button data-jump='${name}' id='probe'>x</button>`)", target["name"])  # fmt: skip
    page.locator("#probe").click()
    h = wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == target["name"])
    assert target["name"] in h["graphNodes"] and h["graphFolds"][0]["open"] is True


def test_op_and_target_filters_and_search(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["aot_joint_graph"]
    page = open_graph(browser, site, n)
    page.select_option(".g-f-op", "call_function")
    want = [m["name"] for m in graph["nodes"] if m["op"] == "call_function"]
    wait_hook(page, lambda h: h.get("graphNodes") == want)
    page.select_option(".g-f-op", "")
    page.fill(".g-f-target", "aten.mm")
    want = [m["name"] for m in graph["nodes"] if "aten.mm" in m["target"]]
    assert want
    wait_hook(page, lambda h: h.get("graphNodes") == want)
    page.fill(".g-f-target", "")
    shape = "f32[2, 5]"  # the search reads names, targets, annotations, user lines and modules
    want = [x["name"] for x in graph["inputs"] + graph["nodes"] if shape in (x.get("meta") or {}).get("text", "")]
    assert want
    page.fill(".g-f-q", shape)
    wait_hook(page, lambda h: h.get("graphNodes") == want)


def test_the_payload_tab_links_to_the_graph_view(browser: Any, site: str, folder: Path) -> None:
    n, graph = graph_events(folder)["aot_forward_graph"]
    page = open_explorer(browser, f"{site}#row={n}", height=900)
    wait_hook(page, lambda h: (h.get("selected") or {}).get("row") == n and h.get("payload") is not None)
    page.locator(".g-open-button").click()
    h = wait_hook(page, lambda h: h.get("view") == "graph" and h.get("graphNodes") == names(graph))
    assert "event=" + str(n) in page.url and h["graphError"] is None
    # A non-graph payload gets no link.
    code = next(
        i
        for i, line in enumerate((folder / "raw.jsonl").read_text().splitlines()[1:])
        if "inductor_output_code" in line
    )
    page.goto(f"{site}#row={code}")
    wait_hook(page, lambda h: (h.get("selected") or {}).get("row") == code and h.get("payload") is not None)
    assert page.locator(".g-open-button").count() == 0


def test_the_user_line_links_to_the_source_with_source_url(browser: Any, site: str, folder: Path) -> None:
    """`source_url` (what `tlscope serve --source-url` adds to the viewer links): the selected
    node's user line links to URL/<file relative to the source root>#L<line>; a non-http URL links nothing."""
    n, graph = graph_events(folder)["dynamo_output_graph"]
    node = next(m for m in graph["nodes"] if m.get("source") is not None)
    source = graph["sources"][node["source"]]
    assert source["file"].startswith("$CWD/")
    base = "https://example.invalid/o/r/blob/0123abc"
    page = open_explorer(browser, f"{site}&source_url={quote(base, safe='')}&view=graph&event={n}", height=900)
    wait_hook(page, lambda h: h.get("graphReady") is True)
    page.locator(f'.g-row .g-name[data-jump="{node["name"]}"]').click()
    wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == node["name"])
    href = page.locator(".g-src-link").get_attribute("href")
    assert href == f"{base}/{source['file'][len('$CWD/') :]}#L{source['line']}"
    page.goto(f"{site}&source_url={quote('javascript:alert(1)', safe='')}&view=graph&event={n}")
    wait_hook(page, lambda h: h.get("graphReady") is True and h.get("graphNodes"))
    page.locator(f'.g-row .g-name[data-jump="{node["name"]}"]').click()
    wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == node["name"])
    assert page.locator(".g-src-link").count() == 0 and page.locator(".g-src-where").count() == 1


def test_a_rank_of_a_job_shows_its_graph_from_the_jobs_graphs(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """In a job, graphs/ is the job's (beside its payloads/, `payloads.root` ".."): event N of the
    trace is counted over the ranks one after another, so rank 1's events follow rank 0's."""
    from tlscope.cli import main as tlscope_main

    out = tmp_path_factory.mktemp("job") / "job"
    assert tlscope_main([str(REPO / "corpus" / "traces" / "ranks_same_2"), "-o", str(out), "--no-browser"]) == 0
    assert not (out / "rank_1" / "graphs").exists() and any((out / "graphs").iterdir())
    rank0 = len((out / "rank_0" / "raw.jsonl").read_text().splitlines()) - 1
    lines = (out / "rank_1" / "raw.jsonl").read_text().splitlines()[1:]
    i, name = next(
        (i, json.loads(line)["payload_filename"])
        for i, line in enumerate(lines)
        if '"dynamo_output_graph"' in line and "payload_filename" in line
    )
    graph = json.loads((out / "graphs" / f"{name[len('payloads/') : -len('.txt')]}.json").read_text())["graph"]
    server = LiveServer([str(out)], tmp_path_factory.mktemp("serve-job"))
    try:
        with urllib.request.urlopen(f"{server.url}/api/traces", timeout=60) as response:
            (trace,) = json.load(response)
        url = f"{server.url}/viewers/explorer/?trace={quote(trace['url'], safe='')}&view=graph&event={rank0 + i}"
        page = open_explorer(browser, url, height=900)
        h = wait_hook(page, lambda h: h.get("graphReady") is True and bool(h.get("graphNodes")))
        assert h["graphNodes"] == names(graph) and h["graphError"] is None
    finally:
        server.close()


def test_event_n_resolves_when_the_events_are_paged_from_the_server(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`?view=graph&event=N` on a trace paged through serve's events API (`mode=remote`, as a trace
    past the explorer's limits is): event N is past the table's first page (200 rows), so the
    view asks the API for that one row, unfiltered, and shows its graph."""
    from tlscope.cli import main as tlscope_main

    out = tmp_path_factory.mktemp("paged") / "recompiles_dynamic"
    assert tlscope_main([str(REPO / "corpus" / "traces" / "recompiles_dynamic"), "-o", str(out), "--no-browser"]) == 0
    found = [(n, graph) for n, graph in _graphs_by_event(out) if n >= 200]
    assert found, "no graph event past the first page"
    n, graph = found[-1]
    with served_explorer({"trace": out}, tmp_path_factory.mktemp("serve-paged")) as served:
        page = open_explorer(browser, f"{served.explorer('trace')}&mode=remote&view=graph&event={n}", height=900)
        h = wait_hook(page, lambda h: h.get("graphReady") is True and bool(h.get("graphNodes")))
        assert h["mode"] == "remote" and h["graphNodes"] == names(graph) and h["graphError"] is None
        assert page.errors == []
        page.goto(f"{served.explorer('trace')}&mode=remote&view=graph&event=100000")
        h = wait_hook(page, lambda h: h.get("graphReady") is True)
        assert not h.get("graphNodes") and page.errors == []  # no such event: the view says how to open one
        page.close()


def _graphs_by_event(folder: Path) -> list[tuple[int, dict[str, Any]]]:
    """(index among raw.jsonl's events, graph) of every event whose payload has a graphs file."""
    found = []
    for i, line in enumerate((folder / "raw.jsonl").read_text().splitlines()[1:]):
        name = json.loads(line).get("payload_filename", "")
        path = folder / "graphs" / f"{name[len('payloads/') : -len('.txt')]}.json"
        if name and path.is_file():
            found.append((i, json.loads(path.read_text())["graph"]))
    return found


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """corpus/traces/deep_stack parsed and served: FX graphs of thousands of nodes."""
    from tlscope.cli import main as tlscope_main

    out = tmp_path_factory.mktemp("deep") / "deep_stack"
    assert tlscope_main([str(REPO / "corpus" / "traces" / "deep_stack"), "-o", str(out), "--no-browser"]) == 0
    with served_explorer({"trace": out}, tmp_path_factory.mktemp("serve-deep")) as served:
        yield out, served.explorer("trace")


def largest_graph(folder: Path) -> tuple[int, dict[str, Any]]:
    """The graph with the most nodes: (the index among raw.jsonl's events of the first event
    printing it, the graph)."""
    graphs = {p.stem: json.loads(p.read_text())["graph"] for p in (folder / "graphs").glob("*.json")}
    md5 = max((k for k in graphs if graphs[k]), key=lambda k: len(graphs[k]["nodes"]))
    lines = (folder / "raw.jsonl").read_text().splitlines()[1:]
    return next(i for i, line in enumerate(lines) if f'"payloads/{md5}.txt"' in line), graphs[md5]


def test_a_graph_of_thousands_of_nodes_and_a_jump_from_its_bottom(browser: Any, deep: tuple[Path, str]) -> None:
    """The corpus's biggest graph (deep_stack's joint graph): every node a row; at the bottom, an
    argument of a node links to its definition far above, and its users lead back down."""
    folder, site = deep
    n, graph = largest_graph(folder)
    assert len(graph["nodes"]) >= 2000
    page = open_graph(browser, site, n)
    h = hook(page)
    assert h["graphNodes"] == names(graph) and h["graphRows"] == len(names(graph))
    index = {name: i for i, x in enumerate(graph["nodes"]) for name in x["names"]}
    # The last node whose first argument is a node defined more than a thousand nodes before it.
    far = [x for x in graph["nodes"] if x["args"] and index.get(x["args"][0], len(index)) < index[x["name"]] - 1000]
    user = far[-1]
    assert index[user["name"]] >= len(graph["nodes"]) - 20  # on the last screen
    arg = user["args"][0]
    defined = graph["nodes"][index[arg]]
    page.locator(".g-table").evaluate("(t) => { t.scrollTop = t.scrollHeight; }")
    row = page.locator(".g-row", has=page.locator(f'.g-name[data-jump="{user["name"]}"]'))
    row.hover()
    row.locator(f'.g-call [data-jump="{arg}"]').first.click()
    h = wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == defined["name"])
    assert h["graphSelected"]["users"] == defined["users"] and user["name"] in defined["users"]
    assert page.locator(".g-row.on .g-name").text_content() == defined["name"]
    page.locator(f'.g-user-list [data-jump="{user["name"]}"]').click()
    wait_hook(page, lambda h: (h.get("graphSelected") or {}).get("name") == user["name"])
    assert page.locator(".g-row.on .g-name").text_content() == user["name"]
    assert page.errors == []


def test_a_cold_link_draws_its_graph_before_loading_the_events(
    browser: Any, deep: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`?view=graph&event=N` opened cold, on a static folder (a plain file server, no events API)
    and through tlscope serve: event N is read alone from raw.jsonl and its graph (deep_stack's
    biggest, thousands of nodes, late in the trace) is drawn while the table holds no event yet;
    the events load after it, and the table then has them all."""
    from tlscope.viewers import EXPLORER, LIB

    folder, served = deep
    n, graph = largest_graph(folder)
    events = len((folder / "raw.jsonl").read_text().splitlines()) - 1
    assert n > events // 2  # late: the old page loaded most of the trace before drawing it
    static = StaticSite({"/lib": LIB, "/viewers/explorer": EXPLORER, "/traces/deep": folder})
    try:
        plain = f"{static.url}/viewers/explorer/?trace={quote('/traces/deep/', safe='')}"
        for site in (plain, served):
            page = open_explorer(browser, f"{site}&view=graph&event={n}", height=900)
            h = wait_hook(page, lambda h: h.get("graphReady") is True and h.get("total") == events)
            assert h["graphNodes"] == names(graph) and h["graphError"] is None
            assert h["graphFirst"]["eventsLoaded"] == 0 and h["mode"] == "local"
            page.locator("#view-events").click()
            wait_hook(page, lambda h: h.get("view") == "events")
            assert page.locator("#table .row").count() > 0 and page.errors == []
            page.close()
    finally:
        static.close()
