"""recompiles: one function called with changing inputs so its guards fail: a new shape
(then automatic dynamic shapes), a new dtype, a new requires_grad and a change of grad mode."""

from __future__ import annotations

import torch


def fn(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 2 + 1


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(fn)
    compiled(torch.randn(4, 8))
    compiled(torch.randn(5, 8))  # size guard fails -> recompile with a dynamic dim
    compiled(torch.randn(6, 8))  # served by the dynamic graph
    compiled(torch.randn(6, 8, dtype=torch.float64))  # dtype guard fails
    compiled(torch.randn(6, 8))  # back to float32: served by the dynamic graph again
    compiled(torch.randn(6, 8, requires_grad=True))  # requires_grad guard fails
    with torch.no_grad():
        compiled(torch.randn(6, 8, requires_grad=True))  # grad mode guard fails


if __name__ == "__main__":
    main()
