"""unbacked: data-dependent values in torch.compile (capture_scalar_outputs and
capture_dynamic_output_shape_ops on). `counted` reads an int from tensor data (`.item()`) and
takes `nonzero()`, whose size depends on the data: Dynamo makes the unbacked symbols u0 and u1
at those lines; AOTAutograd and Inductor then trace the graph again and make u2..u8 for the same
two calls, with no user line of their own. `halved` reads a float (`.item()`): zuf0, made again
as zuf1..zuf3."""

from __future__ import annotations

import torch
import torch._dynamo


def counted(x: torch.Tensor) -> torch.Tensor:
    n = x.sum().int().item()
    nz = x.nonzero()
    return nz.float().sum() + n


def halved(x: torch.Tensor) -> float:
    return x.sum().item() / 2


def main() -> None:
    torch._dynamo.config.capture_scalar_outputs = True
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    torch.compile(counted)(torch.tensor([1.0, 0.0, 2.0]))
    torch.compile(halved)(torch.randn(3))


if __name__ == "__main__":
    main()
