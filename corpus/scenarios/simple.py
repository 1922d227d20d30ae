"""simple: a tiny MLP compiled with inductor, one forward and one backward pass."""

from __future__ import annotations

import torch


def main() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    compiled = torch.compile(model)
    x = torch.randn(3, 8)
    compiled(x).sum().backward()


if __name__ == "__main__":
    main()
