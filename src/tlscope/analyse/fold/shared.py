"""One object per distinct value among what the compile fold keeps until the end of the log.

A long job logs the same things again and again: every recompile describes the same parameters
(`L['self']._modules['fc']._parameters['weight']`, `f32[64, 64][64, 1]cpu`, `cpu`) and logs the
same graphs again. The reader decodes each occurrence into new objects, and kept per compile id
they made the fold's memory grow with the log (~3.9 MB per copy of the 35 MB big trace scaled to
1 GB, 110 MB in all). The fold keeps the first object of each value and reuses it for the later
equal ones, so its memory grows with what is distinct, not with the log.

Only values nothing changes after they are made are shared: strings, the size and stride lists
of a tensor input, graph inputs, a pending `describe_tensor`'s fields. `TensorInput` itself is not
(the frame's dynamic dims are set on it at the end, per frame).
"""

from __future__ import annotations

from typing import Any, TypeVar

from tlscope.format.compiles import GraphInput
from tlscope.model.events import DescribeTensor

T = TypeVar("T")


class Shared:
    """The first object of each distinct value seen by one fold (one log: nothing outlives it)."""

    def __init__(self) -> None:
        #: Keys are tagged by kind, so values of different kinds never meet under one key.
        self._values: dict[tuple[Any, ...], Any] = {}

    def _one(self, key: tuple[Any, ...], value: T) -> T:
        found: T = self._values.setdefault(key, value)
        return found

    def text(self, value: str) -> str:
        return self._one(("s", value), value)

    def maybe_text(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def graph_inputs(self, inputs: list[GraphInput]) -> list[GraphInput]:
        """The same inputs, each the first equal GraphInput seen (a graph's list is never changed)."""
        return [self._one(("g", i.name, i.type), i) for i in inputs]

    def tensor(self, event: DescribeTensor) -> DescribeTensor:
        """What a `describe_tensor` waiting for its source needs, shared with equal ones."""
        key = (
            "t",
            event.dtype,
            event.device,
            None if event.size is None else tuple(event.size),
            None if event.stride is None else tuple(event.stride),
            event.requires_grad,
            tuple(event.dynamo_dynamic_indices or ()),
        )
        found: DescribeTensor | None = self._values.get(key)
        if found is not None:  # most: a recompile describes the same tensors again
            return found
        slim = DescribeTensor(
            dtype=event.dtype,
            device=event.device,
            size=event.size,
            stride=event.stride,
            requires_grad=event.requires_grad,
            # Never None here: the tensor input's `marked_dynamic` is this very list.
            dynamo_dynamic_indices=list(event.dynamo_dynamic_indices or ()),
        )
        return self._one(key, slim)
