"""layers: a small transformer (an embedding, eight identical layers in an nn.ModuleList, a head)
compiled whole with Inductor, one training step: the compile is slow because the eight layers are
traced into one graph and Inductor generates and compiles code for each copy. tlscope's
`slow_compile` first answer ends with the compile's `time_fix` (kind `regional`): compile each
layer instead (`for block in model.layers: block.compile()`), which on torch 2.13 compiles the
layer once and reuses it for the seven others (12 layers: 27.5 s whole, 13.5 s as blocks)."""

from __future__ import annotations

import torch

LAYERS = 8
WIDTH = 16


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(WIDTH)
        self.qkv = torch.nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = torch.nn.Linear(WIDTH, WIDTH)
        self.norm2 = torch.nn.LayerNorm(WIDTH)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(), torch.nn.Linear(4 * WIDTH, WIDTH)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v
        x = x + self.proj(attention)
        return x + self.mlp(self.norm2(x))


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(8, WIDTH)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.head = torch.nn.Linear(WIDTH, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(Model())
    compiled(torch.randn(4, 10, 8)).sum().backward()


if __name__ == "__main__":
    main()
