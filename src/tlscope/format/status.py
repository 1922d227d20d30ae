"""The compile status vocabulary: its words, their severity order, how a status is decided, tlparse's words.

The one place these rules live. compiles.json's statuses (analyse/fold/compileresult.py), the report's
stack-trie classes (analyse/tlparse/metrics.py), the landing page's per-rank statuses (analyse/ranks/facts.py)
and the JS client's fallbacks for folders without compiles.json (lib/rules.js, held to the same
answers by tests/conformance/cases.json) all decide here, or read what was decided here.

Two orders exist on purpose, and only two:

* **compiles.json's** (`compile_status`): the first status of `STATUSES` that applies. The same
  order is the **severity** order (`STATUS_ORDER`, written into compiles.json as `status_order`):
  across ranks a compile id shows its most severe status, and a viewer sorts by it.
  `metrics_missing` can only apply when none of `empty`, `cache_hit` and `ok` can (they need
  metrics), so its place among them is a matter of severity alone: it ranks below every status a
  rank's metrics establish, because a missing record is often harmless (an id holding runtime
  events only). A compiled-autograd capture (`captured`) has no metrics either: it ranks just
  above `metrics_missing`, its graph being logged.
* **tlparse's stack trie** (`trie_status`, the report's index.html, kept for parity): an empty
  graph outranks a restart, and a null `restart_reasons` counts as a restart.
"""

from __future__ import annotations

from collections.abc import Iterable

from tlscope.model.events import CompilationMetrics

#: The status vocabulary, most severe first: a compile id gets the first that applies.
STATUSES: dict[str, str] = {
    "failed": "The compilation raised: the last forward metrics record of this compile id has "
    "`fail_type`, or a backward compile failed after it (`failure` says what and where; a failed "
    "record followed by a good one, after torch._dynamo.reset(), leaves `failure` set and the "
    "good compile's status, see `metrics_records`). What happened next is not in the log: at the recompile limit "
    "(`Dynamo recompile limit exceeded`) the frame runs in eager from then on; otherwise the error "
    "reached the caller (`fullgraph=True`, or `torch._dynamo.config.suppress_errors` off, the default) "
    "or, with suppress_errors on, the frame ran in eager.",
    "restarted": "Dynamo abandoned this attempt and analysed the frame again as the next attempt "
    "(`restarted_as`), usually because of a graph break (`graph_breaks` says where).",
    "graph_break": "Compiled, but the graph stops at a graph break: its metrics carry "
    "`restart_reasons`, or a break was logged under this id (`graph_breaks`; usually the break is "
    "listed under the restarted attempt before, `[F/C]` for `[F/C_1]`). Code after the break runs "
    "in eager or in a resume function (`torch_dynamo_resume_in_<fn>_at_<line>`) compiled as another frame.",
    "empty": 'Finished without a graph to run (index.html\'s "Empty graph"): no ops were captured '
    "(`metrics.graph_op_count` 0, or null with no `dynamo_output_graph` in `graphs`) or no guarded "
    "code was installed (`metrics.has_guarded_code` false); the frame runs in eager.",
    "cache_hit": "Compiled by loading the backend's result from a cache: at least one cache hit "
    "and no miss or bypass (`cache`).",
    "ok": "Compiled: one captured graph (`metrics.graph_op_count` > 0, or a `dynamo_output_graph` in "
    "`graphs`), no graph break, no failure.",
    "captured": "A compiled-autograd capture (`[!N/-/-]`, `torch._dynamo.config.compiled_autograd` "
    "on): the backward pass was traced into one graph (a `compiled_autograd_graph` in `graphs`), which "
    "Dynamo then compiles as frames of its own (`[!N/F/C]`, whose `module` is torch's name for that "
    "graph, `CompiledAutograd0`). Torch logs no compilation metrics for a capture, nor a stack: its `time` "
    "is its `compiled_autograd` span, its `stack` the first compile of its graph's above compiled "
    "autograd's runtime (its `user_frame` is the user's `loss.backward()` line). Since 1.47; before, "
    "`metrics_missing`.",
    "metrics_missing": "No compilation metrics were logged for this compile id and no later "
    "attempt explains why: the process may have died or the log been cut, or the id holds only "
    "runtime events, or it is a compiled-autograd id with no frame (`[!N/-/-]`) that logged no "
    "captured graph.",
    "outside": "`[-/-]`: events logged outside any compilation (torch version, string table, "
    "runtime events with no compile id). Not a compilation.",
}

#: How a count of each status reads in a sentence ("8 with a graph break", not "8 graph break");
#: a status not listed reads as its name with spaces.
STATUS_WORDS: dict[str, str] = {
    "graph_break": "with a graph break",
    "captured": "compiled-autograd captures",
    "metrics_missing": "without metrics",
}


#: The words of one, where they differ ("1 compiled-autograd capture").
_ONE_WORDS: dict[str, str] = {"captured": "compiled-autograd capture"}


def status_words(status: str, count: int = 2) -> str:
    """How `count` compiles of `status` read after their number."""
    if count == 1 and status in _ONE_WORDS:
        return _ONE_WORDS[status]
    return STATUS_WORDS.get(status, status.replace("_", " "))


#: Most severe first (compiles.json `status_order`): across ranks a compile id shows the first of its statuses.
STATUS_ORDER: tuple[str, ...] = tuple(STATUSES)

#: tlparse's words for the same statuses (its stack trie, and tlscope's multi-rank landing page).
TLPARSE_WORDS: dict[str, str] = {
    "failed": "error",
    "graph_break": "break",
    "empty": "empty",
    "ok": "ok",
    "metrics_missing": "missing",
}
#: And back: a multi_rank_summary.json status in compiles.json's vocabulary. (tlparse has no word
#: for a compiled-autograd capture: its stack trie says `missing`, as for any id without metrics.)
FROM_TLPARSE: dict[str, str] = {word: status for status, word in TLPARSE_WORDS.items()}


def severity(status: str) -> int:
    """0 for the most severe status; an unknown word after every known one."""
    try:
        return STATUS_ORDER.index(status)
    except ValueError:
        return len(STATUS_ORDER)


def worst(statuses: Iterable[str]) -> str | None:
    """The most severe of `statuses` (the first given among equals), None for none."""
    return min(statuses, key=severity, default=None)


def compile_status(
    *,
    outside: bool,
    failed: bool,
    restarted: bool,
    broke: bool,
    has_metrics: bool,
    empty: bool,
    cache_hit: bool,
    captured: bool = False,
) -> str:
    """compiles.json's status: the first of the vocabulary that applies.

    `broke`: restart reasons in its metrics or a graph break logged under it; `empty`: no ops
    captured or no guarded code installed; `cache_hit`: cache hits and no miss or bypass;
    `captured`: a compiled-autograd capture id that logged its backward graph.
    """
    if outside:
        return "outside"
    if failed:
        return "failed"
    if restarted:
        return "restarted"
    if broke:
        return "graph_break"
    if not has_metrics:
        return "captured" if captured else "metrics_missing"
    if empty:
        return "empty"
    return "cache_hit" if cache_hit else "ok"


def status_from_metrics(metrics: CompilationMetrics) -> str:
    """The status one compilation_metrics record establishes on its own (compile_status's rule).

    What a record cannot say is left out: whether a later attempt exists, graph breaks logged
    elsewhere, caches, and whether a graph was captured when `graph_op_count` is null (then `ok`).
    """
    return compile_status(
        outside=False,
        failed=metrics.fail_type is not None,
        restarted=False,
        broke=bool(metrics.restart_reasons),
        has_metrics=True,
        empty=metrics.graph_op_count == 0 or metrics.has_guarded_code is False,
        cache_hit=False,
    )


def trie_status(*, has_metrics: bool, failed: bool, empty: bool, broke: bool) -> str:
    """tlparse's stack-trie status over the records that count for a compile id (report parity).

    `empty`: any record without graph ops (0 or null); `broke`: any with restart reasons or a null
    `restart_reasons`. Unlike compile_status, an empty graph outranks a restart.
    """
    if not has_metrics:
        return "metrics_missing"
    if failed:
        return "failed"
    if empty:
        return "empty"
    return "graph_break" if broke else "ok"


def trie_class(status: str) -> str:
    """The CSS class tlparse's index.html gives a status in the stack trie (`status-error`…)."""
    return f"status-{TLPARSE_WORDS[status]}"
