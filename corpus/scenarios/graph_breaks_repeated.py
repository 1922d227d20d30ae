"""graph_breaks_repeated: graph breaks from several user lines, some hit again and again: a
helper that logs with print() is called from two compiled functions (the same break, at the
helper's line, for both), one function is recompiled for a new input shape and breaks at the same
lines again, and a data-dependent branch in a third function breaks at its own line."""

from __future__ import annotations

import contextlib
import io

import torch


def log_value(t: torch.Tensor) -> torch.Tensor:
    print("value", t.shape)  # a graph break each time dynamo traces it
    return t


def first(x: torch.Tensor) -> torch.Tensor:
    x = torch.sin(x)
    x = log_value(x)
    return torch.cos(x) + 1


def second(x: torch.Tensor) -> torch.Tensor:
    x = x * 3
    x = log_value(x)
    x = x - 1
    torch._dynamo.graph_break()
    return x.exp()


def branchy(x: torch.Tensor) -> torch.Tensor:
    if x.max().item() > 10:
        return x / 10
    return x


def main() -> None:
    torch.manual_seed(0)
    f, s, b = torch.compile(first), torch.compile(second), torch.compile(branchy)
    with contextlib.redirect_stdout(io.StringIO()):
        f(torch.randn(4))
        s(torch.randn(4))
        s(torch.randn(4, 2))  # a new rank: recompiled, and it breaks at the same two lines again
        b(torch.randn(4))


if __name__ == "__main__":
    main()
