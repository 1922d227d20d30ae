"""graph_breaks: one function with four kinds of graph break (print, data-dependent branch on a
tensor value, a call dynamo cannot trace, and an explicit torch._dynamo.graph_break())."""

from __future__ import annotations

import contextlib
import io
import operator

import torch


def untraceable(t: torch.Tensor) -> torch.Tensor:
    # Builtins without a dynamo rule (here: a C function reached via functools.reduce on a
    # numpy-free path) force a break; a plain Python callback through ctypes would too.
    import copy

    return copy.deepcopy(t) + 1


def fn(x: torch.Tensor) -> torch.Tensor:
    x = torch.sin(x)
    print("graph break: print")
    x = x * 2
    if x.sum().item() > 0:  # noqa: SIM108 (a real if-statement on a tensor value is the point)
        x = x + 1
    else:
        x = x - 1
    x = untraceable(x)
    torch._dynamo.graph_break()
    return operator.mul(torch.cos(x), 3)


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(fn)
    with contextlib.redirect_stdout(io.StringIO()):
        compiled(torch.randn(4, 4))


if __name__ == "__main__":
    main()
