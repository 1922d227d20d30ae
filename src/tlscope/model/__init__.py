"""model: the typed event model every stage shares (Record, events, compile ids, problems)."""

from tlscope.model.compile_id import CompileId
from tlscope.model.events import EVENT_TYPES, Event
from tlscope.model.problems import Problem, ProblemKind, Problems
from tlscope.model.record import GlogPrefix, Record

__all__ = [
    "EVENT_TYPES",
    "CompileId",
    "Event",
    "GlogPrefix",
    "Problem",
    "ProblemKind",
    "Problems",
    "Record",
]
