"""edited: one program run twice, before and after its author fixed a recompile, as `tlscope
diff` is used. before/train.py calls `gram` with a matrix and then its transpose (a stride
recompile); after/train.py is the same file with an import and a comment added at its top (every
line two lower) and the transpose made contiguous at the call: one compile. Each is written into
the scratch folder and run in its own process (run1/ before, run2/ after), so the traces name one
file, train.py, in two folders, its function at two lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BEFORE = '''import torch


def gram(x: torch.Tensor) -> torch.Tensor:
    return x @ x.T + 1


def main() -> None:
    torch.manual_seed(0)
    f = torch.compile(gram, backend="eager")
    a = torch.randn(6, 6)
    f(a)
    f(a.t())  # a transposed input: its strides differ, a recompile


if __name__ == "__main__":
    main()
'''

AFTER = "import math  # noqa: F401\n# gram's input made contiguous: one layout, one graph\n" + BEFORE.replace(
    "f(a.t())  # a transposed input: its strides differ, a recompile", "f(a.t().contiguous())  # one layout"
)


def main() -> None:
    trace_root = Path(os.environ["TORCH_TRACE"])
    for run, text in (("run1", BEFORE), ("run2", AFTER)):
        folder = trace_root.parent / ("before" if run == "run1" else "after")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "train.py").write_text(text)
        env = dict(os.environ, TORCH_TRACE=str(trace_root / run))
        subprocess.run([sys.executable, str(folder / "train.py")], env=env, check=True, cwd=folder)


if __name__ == "__main__":
    main()
