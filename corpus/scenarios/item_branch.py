"""item_branch: a value read from a tensor (`.item()`) breaks the graph, and the code branches on it
after the break. The resume function takes the value from the stack (Dynamo names it `___stack0`),
so calls with other values recompile it: first because it was compiled for one float (then the value
is made dynamic), then because the value is on the other side of the branch (the guard
`___stack0 <= 0.0`, a condition the code tested). The recompile reasons name neither the line nor
the branch; tlscope says both."""

from __future__ import annotations

import torch


def scaled(x: torch.Tensor) -> torch.Tensor:
    y = x.sin()
    z = y.sum().item()  # a graph break: capture_scalar_outputs is off
    if z > 0:  # a branch on the value, in the resume function
        return y * 2
    return y - 1


def main() -> None:
    compiled = torch.compile(scaled)
    for value in (-1.0, -2.0, 3.0):  # sin() sums of -6.7, -7.3, then 1.1: another float, then > 0
        compiled(torch.full((8,), value))


if __name__ == "__main__":
    main()
