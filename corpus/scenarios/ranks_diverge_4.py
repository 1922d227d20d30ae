"""ranks_diverge_4: 4 ranks (gloo, CPU) each compiling a DDP model (optimize_ddp splits it into
one subgraph per bucket) for forward+backward and a function with a functional all_reduce;
ranks diverge: each rank uses a different batch size, a rank-dependent branch, and the last rank
compiles one extra function."""

from __future__ import annotations

import _ranks

if __name__ == "__main__":
    _ranks.launch(world=4, diverge=True)
