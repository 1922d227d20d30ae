"""str_values: a compiled activation chosen by a str argument. Dynamo specialises a str on its
value, so each name compiles its own graph, even names that take the same branch; `act` is called
with ten names and reaches the recompile limit (8) at the ninth: the last two ran in eager. Its
recompiles' fix (kind `recompile_limit`) raises the limit (checked: with
`torch._dynamo.config.recompile_limit = 16`, 10 compiles, none refused). `norm` is called with
three names: three graphs, no limit reached, no fix."""

from __future__ import annotations

import torch


def act(x: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "relu":
        return torch.relu(x)
    if kind == "gelu":
        return torch.nn.functional.gelu(x)
    return x * torch.sigmoid(x)  # every other name: the same graph, compiled once a name


def norm(x: torch.Tensor, how: str) -> torch.Tensor:
    if how == "l2":
        return x / x.norm()
    if how == "max":
        return x / x.abs().max()
    return x


def main() -> None:
    torch.manual_seed(0)
    compiled_act = torch.compile(act, backend="eager")
    for name in ["relu", "gelu", "silu", "swish", "mish", "tanh", "elu", "selu", "celu", "glu"]:
        compiled_act(torch.randn(4), name)
    compiled_norm = torch.compile(norm, backend="eager")
    for how in ["l2", "max", "none"]:
        compiled_norm(torch.randn(4), how)


if __name__ == "__main__":
    main()
