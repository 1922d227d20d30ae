"""reset: two functions compiled one after the other with torch._dynamo.reset() between them, as a
test suite or a notebook does. Dynamo numbers compiles from [0/0] again after a reset, so one
compile id holds both compiles (two compilation_metrics records with different `co_name`s), and a
third compile of the first function, after another reset, is [0/0] once more."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + 1


def gate(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x) * x


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 4)
    torch.compile(scale, backend="aot_eager")(x)
    torch._dynamo.reset()
    torch.compile(gate, backend="aot_eager")(x)
    torch._dynamo.reset()
    torch.compile(scale, backend="aot_eager")(x)


if __name__ == "__main__":
    main()
