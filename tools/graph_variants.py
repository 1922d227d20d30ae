"""The FX graph printing variants of a set of traces, counted (issue 23: "the graph printing
variants found and handled").

    python tools/graph_variants.py                      # corpus/traces and ../shared/traces/tlparse*
    python tools/graph_variants.py --markdown           # the table docs/FORMAT.md section 18 holds

Every distinct payload holding a `class ...(torch.nn.Module):` line (`looks_like_graph`, what the
format writer sends to graphs/) of every log under each root is read with `parse_graph`, and
counted per root: by the event or artifact kind that logged it, by the printed forms it shows
(one payload may show several; each form is recognised from the parsed graph where it can be,
from the text where the parser keeps nothing of it), by the reader that read it (the line reader
of the common form, or `ast` for the rest), and the ones that failed (a `bad_graph` problem).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from tlscope.analyse.fxgraph import FxGraph, FxGraphFailure, looks_like_graph, parse_graph  # noqa: E402
from tlscope.analyse.fxgraph.graph_parser import _read_lines  # noqa: E402
from tlscope.read.reader import LogReader  # noqa: E402

ROOTS = {
    "corpus": REPO / "corpus" / "traces",
    "tlparse": REPO.parent / "shared" / "traces" / "tlparse",
    "tlparse-upstream": REPO.parent / "shared" / "traces" / "tlparse-upstream",
}


def _nodes(graph: FxGraph) -> Iterator[object]:
    yield from graph.nodes
    for sub in graph.subgraphs.values():
        yield from _nodes(sub)


def _ops(graph: FxGraph) -> set[str]:
    return {getattr(n, "op", "") for n in _nodes(graph)}


def _metas(graph: FxGraph) -> list[object]:
    return [i.meta for i in graph.inputs if i.meta is not None] + [
        getattr(n, "meta", None) for n in _nodes(graph) if getattr(n, "meta", None) is not None
    ]


#: `# recompute: MUST_SAVE File: ...`: an annotation printed before the user line (torch 2.13).
_PREFIXED_FILE = re.compile(r"#\s*(?:recompute|ac_graph_id|Annotation)\b.*? File: ")


def _unstrided(meta: object) -> bool:
    return getattr(meta, "shape", None) is not None and getattr(meta, "stride", None) is None


#: (form, test on the text and its parsed graph), in the order the table lists them.
FORMS: list[tuple[str, Callable[[str, FxGraph], bool]]] = [
    ("dynamo form: inputs on one line, `l_x_ = L_x_` aliases", lambda t, g: "placeholder_alias" in _ops(g)),
    ("AOT class `<lambda>`", lambda t, g: g.name == "<lambda>"),
    ("one input a line, `# PlainAOTInput(...)` comments", lambda t, g: "AOTInput(" in t),
    ("joint graph: `fx_pytree.tree_flatten_spec` unpack", lambda t, g: "tree_flatten_spec" in t),
    ("tuple unpack lines (`a, b, = ...`)", lambda t, g: "unpack" in _ops(g)),
    ("inline expressions (operators, subscripts)", lambda t, g: "expression" in _ops(g)),
    ("export: indented under `ExportedProgram:`", lambda t, g: "ExportedProgram:" in t),
    ("nested classes (DDP `submod_N`, higher-order-op bodies)", lambda t, g: bool(g.subgraphs)),
    ("`self.submod(...)` calls (call_module)", lambda t, g: "call_module" in _ops(g)),
    ("`self.x` attributes (get_attr)", lambda t, g: "get_attr" in _ops(g)),
    ("fx_graph_runnable: `class Repro` with `__init__`", lambda t, g: "def __init__(" in t),
    ("compiled autograd class", lambda t, g: g.name.startswith("CompiledAutograd")),
    ("`Sym(...)` annotations", lambda t, g: any(getattr(m, "dtype", "") == "Sym" for m in _metas(g))),
    ("annotations without strides", lambda t, g: any(_unstrided(m) for m in _metas(g))),
    ("`# File: ...` user lines", lambda t, g: "# File: " in t),
    ("`# File:` after `recompute:`, `ac_graph_id:`...", lambda t, g: _PREFIXED_FILE.search(t) is not None),
    ("`# No stacktrace found` blocks", lambda t, g: "No stacktrace found" in t),
    ("trailing `# graph id: ...` line", lambda t, g: "graph id" in t),
]  # fmt: skip


def graph_payloads(root: Path) -> Iterator[tuple[str, str]]:
    """(kind, text) of each distinct graph payload of the logs under `root`, in file order."""
    seen: set[bytes] = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name not in ("LICENSE", "README.md")):
        try:
            records = list(LogReader(path))
        except Exception:  # a file that is no log (an input list, a JSON aside)
            continue
        for record in records:
            payload = record.payload
            if payload is None or payload in seen or not looks_like_graph(payload):
                continue
            seen.add(payload)
            name = record.metadata.get("name") if record.key == "artifact" else None
            yield str(name or record.key), payload.decode("utf-8", "replace")


def count(root: Path) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """(kinds, forms, readers) over `root`'s distinct graph payloads; readers counts `line`, `ast`
    and `failed: <reason>`."""
    kinds: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    readers: Counter[str] = Counter()
    for kind, text in graph_payloads(root):
        kinds[kind] += 1
        graph = parse_graph(text)
        if isinstance(graph, FxGraphFailure):
            readers[f"failed: {graph.reason}"] += 1
            continue
        readers["line" if _read_lines(text) is not None else "ast"] += 1
        for form, test in FORMS:
            if test(text, graph):
                forms[form] += 1
    return kinds, forms, readers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="one markdown table of the forms, a column a root")
    args = parser.parse_args(argv)
    results = {name: count(root) for name, root in ROOTS.items() if root.is_dir()}
    if args.markdown:
        names = list(results)
        print("| printed form | " + " | ".join(names) + " |")
        print("|---|" + "--:|" * len(names))
        for form, _ in FORMS:
            print(f"| {form} | " + " | ".join(str(results[n][1][form]) for n in names) + " |")
        print("| **distinct graph payloads** | " + " | ".join(str(sum(results[n][0].values())) for n in names) + " |")
        readers = [f"{results[n][2]['line']} / {results[n][2]['ast']}" for n in names]
        print("| read by the line reader / by `ast` | " + " | ".join(readers) + " |")
        failed = {n: sum(v for k, v in results[n][2].items() if k.startswith("failed")) for n in names}
        print("| failed (`bad_graph`) | " + " | ".join(str(failed[n]) for n in names) + " |")
        print("| event/artifact kinds | " + " | ".join(str(len(results[n][0])) for n in names) + " |")
        return 0
    for name, (kinds, forms, readers) in results.items():
        print(f"== {name}: {sum(kinds.values())} distinct graph payloads")
        for label, counter in (("kinds", kinds), ("forms", forms), ("readers", readers)):
            print(f"  {label}:")
            for key, value in counter.most_common():
                print(f"    {value:5}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
