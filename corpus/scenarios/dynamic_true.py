"""dynamic_true: `torch.compile(step, dynamic=True)`: every size of every input starts dynamic,
so the first compile has a symbol for each dimension and the second call (another batch and
width) runs it again without a recompile. Nothing in the code marks a dimension and no call
changed one before the compile: what made the sizes dynamic is the compile's own setting
(its metrics record logs `assume_static_by_default` off)."""

from __future__ import annotations

import torch


def step(x: torch.Tensor) -> torch.Tensor:
    return (x.relu() * 2).sum(0)


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(step, dynamic=True, backend="aot_eager")
    compiled(torch.randn(8, 16))
    compiled(torch.randn(10, 12))


if __name__ == "__main__":
    main()
