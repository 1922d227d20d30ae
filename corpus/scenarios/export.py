"""export: torch.export.export of a module with a dynamic batch dimension and data-dependent
values (.item() checked with torch._check, nonzero()), then torch.export.draft_export of a module
whose control flow depends on tensor data, so the real-tensor fallback is logged
(propagate_real_tensors_provenance), and a draft_export of two custom ops, one with no fake
kernel and one whose fake kernel disagrees with the real one (missing_fake_kernel,
mismatched_fake_kernel). Runs under TORCH_DTRACE so dtrace-only events such as guard_added are
written."""

from __future__ import annotations

import torch
from _dtrace import run_under_dtrace
from torch.export import Dim


class DataDependent(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= x.shape[0])
        nz = torch.nonzero(x > 0)
        return x[:k].sum(0) + nz.shape[0]


class Branchy(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        if k > 2:  # guard on an unbacked symbol: draft_export falls back to the real value
            return x[:k] * 2
        return x[:1]


@torch.library.custom_op("corpus::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x.clone() * 2


@torch.library.custom_op("corpus::bad_fake", mutates_args=())
def bad_fake(x: torch.Tensor) -> torch.Tensor:
    return x[: x.shape[0] // 2].clone()


@bad_fake.register_fake
def _bad_fake_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)  # deliberately wrong: the real op halves dim 0


class CustomOps(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return no_fake(x).sum() + bad_fake(x).sum()


def workload() -> None:
    torch.manual_seed(0)
    x = torch.randn(6, 3)
    n = torch.tensor(3)
    batch = Dim("batch", min=2, max=64)
    ep = torch.export.export(DataDependent(), (x, n), dynamic_shapes=({0: batch}, None))
    ep.module()(x, n)
    draft = torch.export.draft_export(Branchy(), (x, n))
    draft.module()(x, n)
    torch.export.draft_export(CustomOps(), (torch.randn(4, 3),))


def main() -> None:
    run_under_dtrace(workload, __file__)


if __name__ == "__main__":
    main()
