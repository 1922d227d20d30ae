"""growing_list: a decode step compiled with a growing list of cached tensors (each step appends
its output, as a hand-written KV cache does). Dynamo guards the list's length and never makes it
dynamic, so every step recompiles until the recompile limit, after which the step runs in eager.
Each recompile's fix (kind `stack_list`) says to pass the tensors stacked into one, whose size
automatic dynamic shapes makes dynamic after one change (checked: 2 compiles for the same steps)."""

from __future__ import annotations

import torch


@torch.compile(backend="eager")
def decode_step(x: torch.Tensor, cache: list[torch.Tensor]) -> torch.Tensor:
    keys = torch.stack(cache, dim=0)  # attend over every cached step
    return (keys * x).sum(0)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(4)
    cache = [torch.randn(4)]
    for _ in range(10):
        cache.append(decode_step(x, cache))


if __name__ == "__main__":
    main()
