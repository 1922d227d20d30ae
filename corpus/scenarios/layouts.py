"""layouts: one function called with the same sizes in other memory layouts, and a step whose
learning rate changes. `gram` gets a matrix, then its transpose (a stride recompile: torch makes
the changed strides dynamic), then every other column of a wider matrix (a view: its second stride
recompiles it again, and its base's size is a symbol whose guard is the view's bounds in the base,
no line of the code). `sgd_step` gets a new float each call: the second call recompiles with the
float dynamic, passed to the graph as a 0-d tensor (`L_lr_: f64[]`)."""

from __future__ import annotations

import torch


def gram(x: torch.Tensor) -> torch.Tensor:
    return x @ x.T + 1


def sgd_step(w: torch.Tensor, lr: float) -> torch.Tensor:
    return w - lr * w.sin()


def main() -> None:
    torch.manual_seed(0)
    f = torch.compile(gram, backend="eager")
    a = torch.randn(6, 6)
    wide = torch.randn(6, 12)
    f(a)
    f(a.t())  # same sizes, strides [1, 6]: recompiles, strides made dynamic
    f(wide[:, ::2])  # same sizes, strides [12, 2]: stride 0 changed again
    f(a.t())  # reuses a graph
    step = torch.compile(sgd_step, backend="eager")
    w = torch.randn(4)
    for i in range(4):
        w = step(w, 0.1 / (i + 1))  # the second call makes lr dynamic: one recompile


if __name__ == "__main__":
    main()
