"""deep_stack: a 180-block residual MLP (Linear, LayerNorm, GELU and a residual add per block)
compiled as one graph with inductor, one forward and one backward pass: the corpus's big FX graphs
(dynamo's 1,441 nodes, the AOT forward's 3,060, the backward's 7,376, the joint graph's 9,358),
what the explorer's Graph view is measured on (issue 23, bench/graphview.py)."""

from __future__ import annotations

import torch

BLOCKS = 180
WIDTH = 8


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH)
        self.norm = torch.nn.LayerNorm(WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.nn.functional.gelu(self.norm(self.linear(x)))


def main() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(Block() for _ in range(BLOCKS)))
    compiled = torch.compile(model)
    x = torch.randn(2, WIDTH)
    compiled(x).sum().backward()


if __name__ == "__main__":
    main()
