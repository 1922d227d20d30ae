"""Compilation metrics by compile id, the stack-trie status of a compile id, and the failures list.

tlparse merges every attempt of a frame compile into attempt 0, so a compile id with attempt
>= 1 always shows "metrics missing". Here attempt-0 ids keep tlparse's merged view (parity)
and ids with attempt >= 1 get their own metrics (deviation, docs/DEVIATIONS.md).
"""

from __future__ import annotations

import msgspec

from tlscope.format.status import trie_class, trie_status
from tlscope.model.compile_id import CompileId
from tlscope.model.events import CompilationMetrics

#: What the stack-trie status needs of one compilation_metrics event, as bits: a metrics record
#: carries the whole dynamo and inductor config (tens of KB) and is kept per compile id for the
#: whole run, so only these bits are kept (OR-ed per key: the status asks whether *any* has one).
_ERROR, _EMPTY, _BREAK = 1, 2, 4


def frame_key(cid: CompileId) -> CompileId:
    """tlparse's metrics key: attempt forced to 0 whenever a frame compile id is set."""
    if cid.frame_compile_id is not None:
        return msgspec.structs.replace(cid, attempt=0)
    return cid


def status_bits(metrics: CompilationMetrics) -> int:
    """tlparse's status rules for one record, incl. a null restart_reasons counting as a break."""
    restarts = metrics.restart_reasons
    return (
        (_ERROR if metrics.fail_type is not None else 0)
        | (_EMPTY if not metrics.graph_op_count else 0)
        | (_BREAK if restarts is None or restarts else 0)
    )


class MetricsIndex:
    def __init__(self) -> None:
        self._by_frame: dict[CompileId | None, int] = {}
        self._by_attempt: dict[CompileId | None, int] = {}

    def add(self, cid: CompileId | None, metrics: CompilationMetrics) -> None:
        bits = status_bits(metrics)
        for index, key in (
            (self._by_frame, None if cid is None else frame_key(cid)),
            (self._by_attempt, None if cid is None else cid.normalised()),
        ):
            index[key] = index.get(key, 0) | bits

    def lookup(self, cid: CompileId | None) -> int | None:
        """The OR of the status bits of the records that count for `cid`; None if there are none."""
        if cid is None:
            return self._by_frame.get(None)
        if cid.attempt:
            return self._by_attempt.get(cid.normalised())
        return self._by_frame.get(frame_key(cid))

    def status(self, cid: CompileId | None) -> str:
        """CSS class of a compile id in the stack trie (tlparse's rules, format/status.py)."""
        bits = self.lookup(cid) or 0
        found = trie_status(
            has_metrics=self.lookup(cid) is not None,
            failed=bool(bits & _ERROR),
            empty=bool(bits & _EMPTY),
            broke=bool(bits & _BREAK),
        )
        return trie_class(found)


class FailureRow(msgspec.Struct, frozen=True):
    """One row of failures_and_restarts.html."""

    cid: CompileId | None
    #: The metrics page of that compilation (relative to OUT), None for an unknown compile id.
    metrics_url: str | None
    #: "restart" or "failure".
    kind: str
    reason: str
    fail_type: str = ""
    source: str = ""


def failures_of(cid: CompileId | None, metrics_url: str | None, metrics: CompilationMetrics) -> list[FailureRow]:
    """Restarts, then the failure, of one compilation_metrics event (tlparse's row order)."""
    rows = [FailureRow(cid, metrics_url, "restart", reason) for reason in metrics.restart_reasons or ()]
    if metrics.fail_type is not None:
        filename, lineno = metrics.fail_user_frame_filename, metrics.fail_user_frame_lineno
        rows.append(
            FailureRow(
                cid,
                metrics_url,
                "failure",
                # tlparse aborts the whole run when fail_reason is missing; an empty reason is enough.
                metrics.fail_reason or "",
                fail_type=metrics.fail_type,
                source=f"{filename if filename is not None else 'N/A'}:{lineno if lineno is not None else 0}",
            )
        )
    return rows
