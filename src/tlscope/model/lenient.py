"""Typed events out of metadata that does not fit its schema.

The reader types each record's own event strictly (`Record.event`, None plus a `schema` problem
when a field has the wrong type). Writers still want what can be used of such an event, and of
the other event keys of an envelope that has several: `lenient` drops each value of the wrong
type, the smallest part possible (one field of a struct, one frame of a stack), as if the log
had not written it. Well-formed metadata converts exactly as the reader's (same types, same
values); these are the only converters from raw metadata to events outside the reader.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, TypeVar

import msgspec

from tlscope.model.events import Frame, Stack

S = TypeVar("S", bound=msgspec.Struct)

#: A field whose value was of the wrong type: left out, so it takes its default (None).
_DROP = object()


def lenient(value: Any, struct: type[S]) -> S | None:
    """`value` (an envelope's metadata) as `struct`, fields of the wrong type dropped; None when
    `value` is not a JSON object."""
    if not isinstance(value, dict):
        return None
    try:
        return msgspec.convert(value, struct)
    except msgspec.ValidationError:
        pass
    kept: dict[str, Any] = {}
    for name, encode_name, annotation in _fields(struct):
        if encode_name in value:
            item = _field(value[encode_name], annotation)
            if item is not _DROP:
                kept[name] = item
    return struct(**kept)


def frames_of(value: Any) -> Stack | None:
    """A stack (a JSON list of frame objects) as Frames: items that are not objects are skipped,
    a frame's field of the wrong type is dropped (a boolean is not a line number, as in tlparse,
    whose frames are typed). None when `value` is not a list."""
    if not isinstance(value, list):
        return None
    try:
        return msgspec.convert(value, Stack)
    except msgspec.ValidationError:
        frames: Stack = _elements(value, Frame)
        return frames


@functools.cache
def _fields(struct: type[msgspec.Struct]) -> tuple[tuple[str, str, Any], ...]:
    return tuple((f.name, f.encode_name, f.type) for f in msgspec.structs.fields(struct))


def _field(item: Any, annotation: Any) -> Any:
    try:
        return msgspec.convert(item, annotation)
    except msgspec.ValidationError:
        pass
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, msgspec.Struct) and isinstance(item, dict):
            return lenient(item, member)  # a nested object, e.g. frame_locals
        if typing.get_origin(member) is list and isinstance(item, list):
            return _elements(item, typing.get_args(member)[0])  # e.g. a stack, restart_reasons
    return _DROP


def _elements(items: list[Any], element: Any) -> list[Any]:
    """The items of the element type (a struct's fields of the wrong type dropped in turn)."""
    kept = []
    for item in items:
        value = _field(item, element)
        if value is not _DROP:
            kept.append(value)
    return kept


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation allows: the members of a union, else the annotation itself."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)
