"""globals_changed: a compiled function that reads a global tensor and a global module and takes
`*rest` and a float keyword. The program replaces the tensor with a float64 one, the module with
another class, then passes one more positional argument and new float values: each recompiles.
Torch names the global tensor `G['buf']` inside its message (`tensor 'G['buf']' dtype
mismatch`), checks the module by type (`___check_type_id(G['act'], …), type=<class '…ReLU'>`)
and an empty `*rest` by `not rest`; tlscope says each in words with the call's value where the
new compile logged it (`length of rest changed: 0 -> 1`)."""

from __future__ import annotations

import torch

buf = torch.zeros(4)
act: torch.nn.Module = torch.nn.ReLU()


@torch.compile(backend="eager")
def step(x: torch.Tensor, *rest: torch.Tensor, lr: float = 0.1) -> torch.Tensor:
    y = x + buf
    for r in rest:
        y = y + r
    return act(y) * lr


def main() -> None:
    global buf, act
    x = torch.randn(4)
    step(x)
    buf = torch.zeros(4, dtype=torch.float64)  # a global tensor replaced: its dtype
    step(x)
    act = torch.nn.GELU()  # a global module replaced by another class
    step(x)
    step(x, x)  # one more positional argument: *rest no longer empty
    step(x, lr=0.2)  # a float keyword: then dynamic
    step(x, lr=0.3)


if __name__ == "__main__":
    main()
