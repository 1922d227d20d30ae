"""int_loop: a compiled function that loops `for _ in range(n)` over an int argument, called with
n from 2 to 11. The second call makes n dynamic (automatic dynamic shapes), but range() needs its
value: every compile specialises it again (`symbolic_shape_specialization`,
range_refined_to_singleton), so every value recompiles until the recompile limit refuses the ninth
and the rest run in eager. The recompiles' fix (and each specialisation's) is the loop's line:
looping outside the compiled function over a compiled body compiles once (checked on torch 2.13)."""

from __future__ import annotations

import torch


def repeat_apply(x: torch.Tensor, n: int) -> torch.Tensor:
    for _ in range(n):  # unrolled: the graph holds n steps
        x = torch.tanh(x) * 1.1
    return x


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(repeat_apply, backend="eager")
    for n in range(2, 12):
        compiled(torch.randn(4), n)


if __name__ == "__main__":
    main()
