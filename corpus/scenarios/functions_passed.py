"""functions_passed: a compiled function that takes a function and a shape, called with one
function, another, the first again with another shape, then two closures that capture different
values. Dynamo guards a function argument by its code object (`___check_obj_id(fn.__code__, …)`)
and a closure's captured value (`fn.__closure__[0].cell_contents == 2`). tlscope says which
function or captured value changed, and blames the call of the first function with a new shape
on the shape: the entry compiled for the second function fails it on the function, but the new
compile's guards hold the call's function's id, which an earlier recompile's reason said the
first entry was compiled for."""

from __future__ import annotations

from collections.abc import Callable

import torch


def double(t: torch.Tensor) -> torch.Tensor:
    return t * 2


def triple(t: torch.Tensor) -> torch.Tensor:
    return t * 3


@torch.compile(backend="eager")
def apply(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    return fn(x).reshape(shape)


def scaled_by(k: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def scaled(t: torch.Tensor) -> torch.Tensor:
        return t * k

    return scaled


def main() -> None:
    x = torch.randn(4)
    apply(double, x, (2, 2))
    apply(triple, x, (2, 2))  # another function
    apply(double, x, (4, 1))  # the first function again, another shape
    apply(scaled_by(2), x, (2, 2))  # a closure
    apply(scaled_by(3), x, (2, 2))  # the same closure code, another captured value


if __name__ == "__main__":
    main()
