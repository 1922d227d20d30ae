"""adapter_swap: a compiled model whose low-rank adapter is swapped for one of another rank
between calls (ranks 2, 4, 2, 8, 16). The adapter's weights are module parameters, whose sizes
Dynamo keeps static: each new rank recompiles (4 compiles), automatic dynamic shapes never makes
them dynamic, and mark_dynamic on them is ignored (checked on torch 2.13: still 4 compiles). The
recompiles' fix (kind `dynamic_parameters`) turns off `force_parameter_static_shapes` and
`force_nn_module_property_static_shapes` (checked: 2 compiles; with mark_dynamic too, 1)."""

from __future__ import annotations

import torch
from torch import nn


class LowRank(nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        self.down = nn.Linear(8, rank, bias=False)
        self.up = nn.Linear(rank, 8, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.down(x))


class Adapted(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.base = nn.Linear(8, 8)
        self.adapter = LowRank(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.adapter(x)


def main() -> None:
    torch.manual_seed(0)
    model = Adapted()
    compiled = torch.compile(model, backend="eager")
    for rank in (2, 4, 2, 8, 16):
        model.adapter = LowRank(rank)  # another adapter, another rank
        compiled(torch.randn(3, 8))


if __name__ == "__main__":
    main()
