"""tlscope-corpus: real TORCH_TRACE logs for viewers' tests. `TRACES` is their folder (see README.md)."""

from pathlib import Path

#: One subfolder per trace, holding its log(s), gzipped.
TRACES = Path(__file__).resolve().parent / "traces"
