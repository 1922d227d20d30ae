"""export_plain: export_failures' three torch.export.export calls under TORCH_TRACE alone, as most
users run them. Without TORCH_DTRACE torch logs none of export's own events (no `export`, no
`guard_on_data_dependent_error`, no `exported_program`): the data-dependent branch shows only
through its partial graph (`make_fx_fail_partial`), whose last node is the comparison export
could not decide; the specialised `Dim` through `symbolic_shape_specialization`; the good call
not at all."""

from __future__ import annotations

from export_failures import workload


def main() -> None:
    workload()


if __name__ == "__main__":
    main()
