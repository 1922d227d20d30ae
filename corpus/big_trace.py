"""Generate a realistic large TORCH_TRACE log (>= 100 MB by default) from a real workload.

Why: synthetic traces (corpus/scale.py) only repeat a small log; they never show what a long
training job with many distinct graphs looks like. This script runs a real torch.compile
(Inductor, CPU) workload with the things that make production traces big and messy:

* a deep residual MLP (``--depth`` blocks), trained with a backward pass, so every compile has
  joint/forward/backward graphs and two generated C++ wrappers;
* explicit graph breaks between its 4 stages, so one step is several frames and resume
  functions;
* recompiles from shape changes (automatic dynamic shapes off, so every new batch size is a new
  static compile) and from dtype changes (float32 / bfloat16 / float64 inputs and weights);
* rounds of fresh shapes until the trace directory reaches ``--target-mb`` or the time budget
  ``--max-minutes`` runs out, whichever comes first. Size comes from real compiles, never padding;
* Inductor provenance tracking on (what users enable for ``tlparse -i``; ``--no-provenance``
  turns it off). In torch 2.13 the provenance kept in ``bwd_compilation_metrics`` and the
  ``inductor_provenance_tracking_kernel_stack_traces`` artifact accumulates over the process,
  so late records are single envelope lines of over 1 MB: a real-world stress case for line
  handling, and the reason the trace grows faster than linearly per round.

Measured (torch 2.13.0+cpu, 2 shared cores, defaults): 136 MB in 7 minutes, 60 compile ids
(4 frames x 15 recompiles: 5 batch sizes x 3 dtypes), 45 graph breaks. Two thirds of the bytes
are the accumulated provenance. Without provenance a round adds ~10 MB in ~80 s, so 110 MB
takes ~15 minutes.

Usage (takes several minutes on 2 cores; the output is git-ignored and regenerated on demand):

    python corpus/big_trace.py                 # writes corpus/big/dedicated_log_torch_trace_*.log
    python corpus/big_trace.py /tmp/bigtrace --target-mb 150 --max-minutes 14

The trace is written by torch itself (TORCH_TRACE=<dir>), one file per process.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_DIR = Path(__file__).resolve().parent / "big"
TRACE_GLOB = "dedicated_log_torch_trace_*.log"
STAGES = 4  # the model is 4 stages of depth/4 blocks, with a graph break between stages


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("out_dir", nargs="?", type=Path, default=DEFAULT_DIR)
    p.add_argument("--target-mb", type=float, default=110.0, help="stop once the trace is this big")
    p.add_argument("--max-minutes", type=float, default=14.0, help="time budget for compiling")
    p.add_argument("--depth", type=int, default=24, help="residual blocks in the model")
    p.add_argument("--width", type=int, default=64, help="hidden size")
    p.add_argument("--no-provenance", action="store_true", help="leave Inductor provenance tracking off")
    p.add_argument("--keep-old", action="store_true", help="keep earlier trace files in out_dir")
    return p.parse_args(argv)


def clear_old_traces(out_dir: Path) -> None:
    # TORCH_TRACE names files randomly, so reruns would pile up logs in the same directory.
    for old in out_dir.glob(TRACE_GLOB):
        old.unlink()


def trace_bytes(out_dir: Path) -> int:
    return sum(p.stat().st_size for p in out_dir.glob(TRACE_GLOB))


def shape_schedule(start: int) -> Iterator[int]:
    """Distinct batch sizes forever: each one is a fresh static compile."""
    batch = start
    while True:
        yield batch
        batch += 1


def build_model(torch: Any, depth: int, width: int) -> Any:
    nn = torch.nn
    stage_depth = max(1, depth // STAGES)

    class Block(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.norm = nn.LayerNorm(width)
            self.up = nn.Linear(width, 2 * width)
            self.down = nn.Linear(2 * width, width)

        def forward(self, x: Any) -> Any:
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    def stage() -> Any:
        return nn.Sequential(*(Block() for _ in range(stage_depth)))

    class Deep(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.s0, self.s1, self.s2, self.s3 = stage(), stage(), stage(), stage()
            self.head = nn.Linear(width, 1)

        def forward(self, x: Any) -> Any:
            # Straight-line graph breaks (like a print or .item() between stages of user code):
            # dynamo compiles a partial graph plus a resume function per break. Breaks inside a
            # loop would instead make dynamo skip the whole frame, leaving tiny per-block graphs.
            x = self.s0(x)
            torch._dynamo.graph_break()
            x = self.s1(x)
            torch._dynamo.graph_break()
            x = self.s2(x)
            torch._dynamo.graph_break()
            x = self.s3(x)
            return self.head(x).sum()

    return Deep()


def configure(torch: Any, provenance: bool) -> None:
    dynamo_config = torch._dynamo.config
    # Every new shape becomes a static recompile instead of one dynamic graph.
    dynamo_config.automatic_dynamic_shapes = False
    for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(dynamo_config, limit):
            setattr(dynamo_config, limit, 100_000)
    # Cache hits would shrink the trace to cache-hit records; we want real compiles.
    torch._inductor.config.fx_graph_cache = False
    if hasattr(torch._inductor.config, "autotune_local_cache"):
        torch._inductor.config.autotune_local_cache = False
    if provenance:
        # What users turn on for `tlparse -i`; adds real node<->kernel mapping artifacts at
        # almost no compile cost (measured: +40% trace per batch, same wall time).
        torch._inductor.config.trace.provenance_tracking_level = 1


def run_workload(args: argparse.Namespace) -> None:
    import torch  # imported after TORCH_TRACE is set: torch reads it at import time

    configure(torch, provenance=not args.no_provenance)
    torch.manual_seed(0)
    dtypes = [torch.float32, torch.bfloat16, torch.float64]
    deadline = time.monotonic() + args.max_minutes * 60
    target = args.target_mb * 1e6
    shapes = shape_schedule(3)
    step = 0
    # One model per dtype, compiled once: recompiles then come only from guards failing on
    # new input shapes/dtypes, as in a real job.
    models: dict[Any, Any] = {
        dtype: torch.compile(build_model(torch, args.depth, args.width).to(dtype)) for dtype in dtypes
    }
    while trace_bytes(args.out_dir) < target and time.monotonic() < deadline:
        batch = next(shapes)
        for dtype, compiled in models.items():
            x = torch.randn(batch, args.width, dtype=dtype)
            compiled(x).backward()
            step += 1
        size_mb = trace_bytes(args.out_dir) / 1e6
        print(f"batch {batch}: {step} compiled steps, trace {size_mb:.1f} MB", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if not args.keep_old:
        clear_old_traces(args.out_dir)
    os.environ["TORCH_TRACE"] = str(args.out_dir.resolve())
    # A private Inductor cache so earlier runs on this machine cannot turn compiles into hits.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlscope-big-trace-")
    started = time.monotonic()
    run_workload(args)
    size_mb = trace_bytes(args.out_dir) / 1e6
    minutes = (time.monotonic() - started) / 60
    for path in sorted(args.out_dir.glob(TRACE_GLOB)):
        print(path)
    print(f"trace: {size_mb:.1f} MB in {minutes:.1f} min", flush=True)
    if size_mb < args.target_mb:
        print(f"warning: below the {args.target_mb} MB target; raise --depth or --max-minutes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
