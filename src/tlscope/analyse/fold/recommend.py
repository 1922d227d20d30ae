"""Which guard failure of a recompile explains it best: FORMAT.md "Which failure is the cause".

Every earlier cache entry rejected the call, each on the first of its own guards that failed, so
every failure is true; the one to show first is the entry that came closest to matching. A
failure on a tensor property (size, stride, rank, dtype, requires_grad, device) says nothing of
the call when another entry was compiled for the call's value of that property: the call is like
that entry there, and differs from it elsewhere (recompiles_dynamic's `[0/4]`: the 3-D entry
`[0/3]` failing on the rank of a 2-D call, which `[0/2]` has, says less than `[0/2]`'s failure on a
stride). Likewise a failure on torch's global state says nothing of the parts another entry's
global-state failure does not name (train_eval's autocast call: the no_grad entry fails on grad
mode and autocast, the older entries on autocast alone), and a failure on a dict's key nothing
when an earlier recompile of the frame said another entry was compiled for the call's presence
or absence of the key (dict_keys). Of the others, the newest entry's failure is the cause:
Dynamo tries the newest entry first, and automatic dynamic makes each newer entry more general
than the ones before it (a call with a new rank, after an int made dynamic, fails the newest
entry on the rank and the older ones on the int). A guard tlscope does not classify (`other`)
says least. Decided here once and written into compiles.json (`recompile.recommended`): `tlscope
summary`, the explorer and every viewer show that choice instead of making their own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tlscope.analyse.fold.callvalues import OBJ_ID, value_key
from tlscope.analyse.fold.guards import said_name, state_words
from tlscope.format.compiles import GuardFailure, RecommendedFailure, TensorInput

#: Guard kinds about a tensor property, which another entry's inputs can show it was compiled for.
TENSOR_KINDS = frozenset({"size", "stride", "rank", "dtype", "requires_grad", "device"})
#: Guard kinds about torch's global state, whose `subject` lists the parts that differ.
STATE_KINDS = frozenset({"grad_mode", "global_state"})
#: The dimension a size or stride guard names (compiled by `re` on first use: a log without
#: recompiles never pays for it).
_INDEX = r" at index (\d+)\."


def recommended_failure(
    failures: Sequence[GuardFailure],
    entry_inputs: Mapping[str, Sequence[TensorInput]] | None = None,
    call: Sequence[TensorInput] = (),
    entry_expected: Mapping[str, Mapping[str, str]] | None = None,
    call_ids: Mapping[str, str] | None = None,
) -> RecommendedFailure | None:
    """The newest failure that no other entry explains away (`entry_inputs`: each cache entry's
    tensor inputs by compile id; `call`: the recompiling call's; `entry_expected`: what earlier
    recompiles of the frame said each entry was compiled for, `expected_of`; `call_ids`: the ids
    the new compile's identity guards hold, by what they are about), classified before `other`;
    and why. None without guard failures."""
    if not failures:
        return None
    inputs = entry_inputs or {}
    known = (entry_expected or {}, call_ids or {})
    away = [explained_away(f, failures, inputs, call) or _known_away(f, failures, *known) for f in failures]
    best = min(range(len(failures)), key=lambda i: (away[i] is not None, failures[i].kind == "other", i))
    return RecommendedFailure(index=best, why=_why(failures, best, away))


def explained_away(
    failure: GuardFailure,
    failures: Sequence[GuardFailure],
    entry_inputs: Mapping[str, Sequence[TensorInput]],
    call: Sequence[TensorInput],
) -> str | None:
    """Another cache entry compiled for the call's value of the tensor property, or of the part of
    torch's global state, `failure` failed on (that entry's id), or None."""
    if failure.kind in STATE_KINDS:
        return _state_explained(failure, failures)
    if failure.kind not in TENSOR_KINDS or failure.subject is None:
        return None
    now = _tensor(call, failure.subject)
    if now is None:
        return None
    for other in failures:
        if other.cache_entry == failure.cache_entry:
            continue
        then = _tensor(entry_inputs.get(other.cache_entry, ()), failure.subject)
        if then is not None and _agrees(failure, then, now):
            return other.cache_entry
    return None


#: Guard kinds whose `expected` an earlier recompile's failure may have said of another entry
#: (a dict key's presence: `not ___dict_contains('y', d)` tells that the entry lacks `'y'`; an
#: attribute's; an optional argument's None: `mask is None`).
KNOWN_KINDS = frozenset({"dict_key", "attribute", "none", "identity"})


def expected_of(failure: GuardFailure) -> tuple[str, str] | None:
    """(what it is about, the value its entry was compiled for) of a failure of KNOWN_KINDS, as
    `entry_expected` keeps it: `("dict_key d 'y'", "absent")`."""
    if failure.kind == "identity":
        return _identity_of(failure)
    if failure.kind not in KNOWN_KINDS or failure.expected is None or failure.subject is None:
        return None
    if failure.kind == "none":
        return f"none {failure.subject}", failure.expected
    return f"{failure.kind} {failure.subject} {_key(failure)}", failure.expected


def _identity_of(failure: GuardFailure) -> tuple[str, str] | None:
    """(what it is about, the object id its entry was compiled for) of an `identity` failure."""
    found = re.match(OBJ_ID, failure.guard) if failure.subject is not None else None
    return (identity_about(failure.subject or ""), found["e"]) if found else None


def identity_about(source: str) -> str:
    """What an `identity` fact is about, as `entry_expected` and `call_ids` key it."""
    return f"identity {source}"


def _key(failure: GuardFailure) -> str:
    """The key a `dict_key` guard tests (`'y'` of `not ___dict_contains('y', d)`), the attribute
    an `attribute` guard does (`'bias'` of `hasattr(o, 'bias')`)."""
    guard = failure.guard.removeprefix("not ")
    if failure.kind == "attribute":
        return guard.rpartition(", ")[2].removesuffix(")")
    return guard.removeprefix("___dict_contains(").rpartition(", ")[0]


def _known_away(
    failure: GuardFailure,
    failures: Sequence[GuardFailure],
    entry_expected: Mapping[str, Mapping[str, str]],
    call_ids: Mapping[str, str],
) -> str | None:
    """Another entry an earlier recompile of the frame said was compiled for the call's value of
    what `failure` failed on (corpus dict_keys `[0/2]`: the entry with the key `'y'` fails a call
    without it, but `[0/0]`, which an earlier reason said lacks it, failed on `mode`; an object's
    id, the call's from the new compile's guards: functions passed in turn)."""
    about = expected_of(failure)
    if about is None:
        return None
    now = call_ids.get(about[0]) if failure.kind == "identity" else failure.actual
    if now is None:
        return None
    for other in failures:
        known = entry_expected.get(other.cache_entry, {})
        if other.cache_entry != failure.cache_entry and known.get(about[0]) == now:
            return other.cache_entry
    return None


def _state_explained(failure: GuardFailure, failures: Sequence[GuardFailure]) -> str | None:
    """An entry whose global-state failure names only some of the parts `failure` names: that entry
    was compiled under the call's value of the others (train_eval's autocast call: the no_grad
    entry fails on grad mode and autocast, the entries before it on autocast alone)."""
    mine = state_parts(failure)
    for other in failures:
        theirs = state_parts(other)
        if theirs and theirs < mine:
            return other.cache_entry
    return None


def state_parts(failure: GuardFailure) -> frozenset[str]:
    """The parts of torch's global state a GLOBAL_STATE failure names (empty for any other)."""
    if failure.kind not in STATE_KINDS or failure.subject is None:
        return frozenset()
    return frozenset(failure.subject.split())


def _tensor(inputs: Sequence[TensorInput], subject: str) -> TensorInput | None:
    key = value_key(subject)
    return next((t for t in inputs if value_key(t.source) == key), None)


def _agrees(failure: GuardFailure, then: TensorInput, now: TensorInput) -> bool:
    """Whether an entry compiled for `then` accepts `now` on the property `failure` names."""
    kind = failure.kind
    if kind in ("dtype", "requires_grad", "device"):
        mine, theirs = getattr(then, kind), getattr(now, kind)
        return mine is not None and mine == theirs
    if then.size is None or now.size is None or len(then.size) != len(now.size):
        return False
    if kind == "rank":
        return True
    match = re.search(_INDEX, failure.guard)
    index = int(match[1]) if match else -1
    if not 0 <= index < len(now.size):
        return False
    if kind == "size":
        return index in then.dynamic_dims or then.size[index] == now.size[index]
    # A stride: symbolic where a later dimension is dynamic (a contiguous tensor's stride is the
    # product of the sizes after it), else the entry's own.
    if any(d > index for d in then.dynamic_dims):
        return True
    return then.stride is not None and now.stride is not None and then.stride[index] == now.stride[index]


def _why(failures: Sequence[GuardFailure], best: int, away: Sequence[str | None]) -> str:
    chosen = failures[best]
    if len(failures) == 1:
        return "the only cache entry of this frame"
    if best == 0:
        return "the newest cache entry, which Dynamo tries first"
    skipped = [i for i in range(best) if away[i] is not None]
    unclassified = [i for i in range(best) if away[i] is None]
    parts = []
    if skipped:
        more = f" ({len(skipped) - 1} more such)" if len(skipped) > 1 else ""
        parts.append(_explained_text(failures, failures[skipped[0]], away[skipped[0]] or "") + more)
    if unclassified:
        parts.append(f"{failures[unclassified[0]].cache_entry} failed on a guard tlscope does not classify")
    return f"{chosen.cache_entry} is the newest entry whose failure the others do not explain: {'; '.join(parts)}"


def _explained_text(failures: Sequence[GuardFailure], first: GuardFailure, by: str) -> str:
    """`[0/3] failed on the rank of x, but [0/2] was compiled for the call's rank`."""
    name = said_name(first.subject or "")  # as the code names it: `ACT`, not `G['ACT'].__code__`
    if first.kind == "identity":
        which = f"function {name.removesuffix('.__code__')}" if name.endswith(".__code__") else f"object {name}"
        return f"{first.cache_entry} failed on which {which} is, but {by} was compiled for the call's"
    if first.kind == "none":
        lead = f"{first.cache_entry} failed on {name} being {first.expected}"
        return f"{lead}, but {by} was compiled for {name} {first.actual}, as the call's"
    if first.kind in KNOWN_KINDS:
        has = "with" if first.actual == "present" else "without"
        what = "key" if first.kind == "dict_key" else "attribute"
        lead = f"{first.cache_entry} failed on {what} {_key(first)} of {name}"
        return f"{lead}, but {by} was compiled for {name} {has} it, as the call's"
    if first.kind not in STATE_KINDS:
        lead = f"{first.cache_entry} failed on the {first.kind} of {name}"
        return f"{lead}, but {by} was compiled for the call's {first.kind}"
    theirs = next(state_parts(f) for f in failures if f.cache_entry == by)
    mine = (first.subject or "").split()  # in torch's order
    agreed = [part for part in mine if part not in theirs]
    return (
        f"{first.cache_entry} failed on {state_words(mine)}, but {by} was compiled for the call's {state_words(agreed)}"
    )
