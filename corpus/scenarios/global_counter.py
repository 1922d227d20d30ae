"""global_counter: a compiled function that reads a global the training loop advances (`STEP`,
for a warm-up factor). Dynamo guards a global by value, not making it dynamic on its own: every
step recompiles, until the recompile limit (8) runs the function in eager from then on. tlscope
says each recompile's cause (`global STEP changed: 0 -> 1`), what filled the limit, and the fix:
pass it as an argument, which automatic dynamic makes dynamic after one change."""

from __future__ import annotations

import torch

STEP = 0


@torch.compile(backend="eager")
def warmed_up(grad: torch.Tensor) -> torch.Tensor:
    return grad * min(1.0, (STEP + 1) / 100)


def main() -> None:
    global STEP
    torch.manual_seed(0)
    for step in range(10):
        STEP = step
        warmed_up(torch.randn(8))


if __name__ == "__main__":
    main()
