"""specialized: dynamic sizes the code specialises again (symbolic_shape_specialization). `pick`
branches on one size: after its first recompile made dim 0 dynamic, the call with that size gets a
graph of its own, and other sizes share the dynamic one. `looped` iterates over its input's first
dimension: every size is specialised, so each new size compiles twice over (a dynamic attempt
that the loop specialises), where `dynamic=False` would compile it once."""

from __future__ import annotations

import torch


def pick(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 5:  # the code compares the size with 5: size 5 is specialised
        return x * 2
    return x + 1


def looped(x: torch.Tensor) -> torch.Tensor:
    total = x[0]
    for i in range(1, x.shape[0]):  # range() needs a constant: every size is specialised
        total = total + x[i]
    return total


def main() -> None:
    torch.manual_seed(0)
    f = torch.compile(pick)
    f(torch.randn(4, 3))
    f(torch.randn(5, 3))  # size changed: dim 0 made dynamic, then specialised to 5 by the branch
    f(torch.randn(6, 3))  # a dynamic graph for every size but 5

    g = torch.compile(looped)
    g(torch.randn(3, 2))
    g(torch.randn(4, 2))  # size changed: dim 0 made dynamic, then specialised to 4 by range()
    g(torch.randn(5, 2))  # and again


if __name__ == "__main__":
    main()
