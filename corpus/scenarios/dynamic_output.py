"""dynamic_output: operators whose result depends on the data, which Dynamo cannot trace by
default: `torch.equal` (a Python bool, torch's break "Data dependent operator") and
`torch.unique` / `torch.nonzero` (a tensor whose size depends on the values, "Dynamic shape
operator"). Each break names its operator (`aten.equal.default`, `aten._unique2.default`,
`aten.nonzero.default`); the second call's other answer to `torch.equal` recompiles the resume
function, whose guard is on the value the break left on the stack."""

from __future__ import annotations

import torch


@torch.compile(backend="eager")
def same_or_unique(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if torch.equal(x, y):  # a bool from the data: a graph break
        return x + 1
    return torch.unique(x).sum()  # a size from the data: a graph break


@torch.compile(backend="eager")
def positives(x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x > 0).sum()  # a size from the data: a graph break


def main() -> None:
    torch.manual_seed(0)
    same_or_unique(torch.ones(4), torch.ones(4))
    same_or_unique(torch.ones(4), torch.zeros(4))
    positives(torch.randn(8))


if __name__ == "__main__":
    main()
