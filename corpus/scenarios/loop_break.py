"""loop_break: a compiled model whose forward loops over its blocks, each calling a function
under `torch.compiler.disable` (as FSDP2's hooks are: a job that compiles an FSDP2 model meets
the same). The break inside the loop fails the whole outer frame: torch skips it and runs the
forward in eager, compiling only each block. The failure's reason says both breaks, the disabled
function's and torch's `graph break in loop`, with torch's explanation."""

from __future__ import annotations

import torch


@torch.compiler.disable
def hook(x: torch.Tensor) -> torch.Tensor:
    return x


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return hook(self.linear(x))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:  # a graph break in this loop runs the whole forward in eager
            x = block(x)
        return x


def main() -> None:
    torch.manual_seed(0)
    torch.compile(Net(), backend="eager")(torch.randn(2, 8))


if __name__ == "__main__":
    main()
