"""export_strict: export_failures' three calls with strict=True, under TORCH_TRACE alone. Strict
export traces with Dynamo, whose events carry compile ids (every call's are [0/0] again) and whose
metrics are logged outside any compile id, with the failure's type and reason: a data-dependent
branch (`if k > 2`, GuardOnDataDependentSymNode, raised as UserError) and a declared-dynamic
dimension the code specialises (ConstraintViolationError); the static call exports."""

from __future__ import annotations

import torch
from export_failures import Branchy, Spec
from torch.export import Dim


def main() -> None:
    torch.manual_seed(0)
    calls = [
        (
            "data-dependent branch",
            lambda: torch.export.export(Branchy(), (torch.randn(6, 3), torch.tensor(3)), strict=True),
        ),
        (
            "dynamic dim specialised",
            lambda: torch.export.export(Spec(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("b")},), strict=True),
        ),
        ("static", lambda: torch.export.export(Spec(), (torch.randn(4, 3),), strict=True)),
    ]
    for name, call in calls:
        try:
            call()
            print(name, "exported")
        except Exception as err:  # UserError (data-dependent), UserError (constraint violation)
            print(name, "failed:", type(err).__name__)


if __name__ == "__main__":
    main()
