"""recompiles_dynamic: guards of several kinds fail one after another, so one reading of the log
can explain each recompile: a size (then automatic dynamic shapes on that dimension), a size on
another dimension, the number of dimensions, a stride (a transposed input), a Python int argument
(specialised, then dynamic), a global flag read by the function, a list's length, and an input
marked dynamic whose size is then 1 (0/1 specialisation). A second function recompiles until it
hits torch._dynamo.config.recompile_limit (cache_size_limit), the usual "why is it slow" trap."""

from __future__ import annotations

import torch

SCALE_UP = False


def shaped(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2


def scaled(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k + (1 if SCALE_UP else 0)


def summed(xs: list[torch.Tensor]) -> torch.Tensor:
    total = xs[0]
    for t in xs[1:]:
        total = total + t
    return total


def limited(x: torch.Tensor, mode: str) -> torch.Tensor:
    return x + len(mode)


def main() -> None:
    global SCALE_UP
    torch.manual_seed(0)
    f = torch.compile(shaped)
    f(torch.randn(4, 8))
    f(torch.randn(5, 8))  # size of dim 0 changed: recompile, dim 0 becomes dynamic
    f(torch.randn(5, 9))  # size of dim 1 changed: recompile, dim 1 becomes dynamic too
    f(torch.randn(3, 4, 5))  # ndim changed: recompile
    f(torch.randn(8, 6).t())  # a transposed input: stride guard fails

    g = torch.compile(scaled)
    g(torch.randn(4), 2)
    g(torch.randn(4), 3)  # int argument changed: recompile, k becomes a dynamic int
    SCALE_UP = True
    g(torch.randn(4), 3)  # the global read by the function changed: recompile

    h = torch.compile(summed)
    h([torch.randn(4), torch.randn(4)])
    h([torch.randn(4), torch.randn(4), torch.randn(4)])  # the list's length changed

    x = torch.randn(6, 4)
    torch._dynamo.mark_dynamic(x, 0)
    m = torch.compile(shaped)
    m(x)
    m(torch.randn(1, 4))  # size 1 is always specialised: the dynamic graph's guard 2 <= s0 fails

    torch._dynamo.config.recompile_limit = 2
    lim = torch.compile(limited, dynamic=False)
    for mode in ("a", "bb", "ccc", "dddd"):
        lim(torch.randn(2), mode)  # a new string each call; past the limit dynamo runs it in eager


if __name__ == "__main__":
    main()
