"""decode: a compiled attention layer with a KV cache, called on a 7-token prompt and then on
one token at a time, each step's input the last position of the output before (`out[:, -1:]`).
The first decode step recompiles for size 1, which torch always specialises: no mark_dynamic
avoids it; tlscope's fix is `mark_unbacked`. The next step recompiles on the input's storage
offset: the first step's input was a slice of the prompt's output (offset 96), compiled at a
dynamic offset, and a slice of a one-token output starts at 0, which a dynamic offset, like a
dynamic size, never covers."""

from __future__ import annotations

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(
        self, x: torch.Tensor, cache_k: torch.Tensor, cache_v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        k = torch.cat([cache_k, self.k(x)], dim=1)
        v = torch.cat([cache_v, self.v(x)], dim=1)
        weights = (self.q(x) @ k.transpose(1, 2)).softmax(-1)
        return weights @ v, k, v


def main() -> None:
    torch.manual_seed(0)
    layer = torch.compile(Attention(), backend="eager")
    cache_k, cache_v = torch.zeros(1, 0, 16), torch.zeros(1, 0, 16)
    with torch.no_grad():
        out, cache_k, cache_v = layer(torch.randn(1, 7, 16), cache_k, cache_v)  # the prompt
        for _ in range(4):  # one token at a time
            out, cache_k, cache_v = layer(out[:, -1:], cache_k, cache_v)


if __name__ == "__main__":
    main()
