"""export_failures: three torch.export.export calls under TORCH_DTRACE, the first two failing as
users meet them. `Branchy` branches on a value read from tensor data (`k = n.item()`, then
`if k > 2`): export cannot decide the branch and raises (guard_on_data_dependent_error, then the
partial graph). `Spec` is exported with dimension 0 declared dynamic (`Dim("b")`) but branches
on its exact size: export evaluates `Eq(s77, 4)`, specialises the dimension and raises a
constraint violation. The third call exports `Spec` with static shapes and succeeds
(exported_program), the fourth (`MatMul`, below) fails. Each failure is caught; torch logs no error."""

from __future__ import annotations

import torch
from _dtrace import run_under_dtrace
from torch.export import Dim


class Branchy(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        if k > 2:  # a branch on tensor data: export cannot decide it
            return x[:k] * 2
        return x[:1]


class Spec(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 4:  # the code compares a declared-dynamic size with 4
            return x + 1
        return x - 1


class MatMul(torch.nn.Module):
    """Exported with a Dim for each side of its inner dimension (`Dim("k")`, `Dim("k2")`): the code
    needs them equal (`Eq(s27, s17)`), so export raises a constraint violation; the fix is one Dim
    for both. (Below the classes other scenarios import, whose lines their traces name.)"""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ y  # dim 1 of x and dim 0 of y must be equal


def workload() -> None:
    torch.manual_seed(0)
    calls = [
        ("data-dependent branch", lambda: torch.export.export(Branchy(), (torch.randn(6, 3), torch.tensor(3)))),
        (
            "dynamic dim specialised",
            lambda: torch.export.export(Spec(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("b")},)),
        ),
        ("static", lambda: torch.export.export(Spec(), (torch.randn(4, 3),))),
        (
            "two Dims for one size",
            lambda: torch.export.export(
                MatMul(),
                (torch.randn(4, 3), torch.randn(3, 5)),
                dynamic_shapes={"x": {1: Dim("k")}, "y": {0: Dim("k2")}},
            ),
        ),
    ]
    for name, call in calls:
        try:
            call()
            print(name, "exported")
        except Exception as err:  # GuardOnDataDependentSymNode, UserError (constraint violations)
            print(name, "failed:", type(err).__name__)


def main() -> None:
    run_under_dtrace(workload, __file__)


if __name__ == "__main__":
    main()
