"""Running a scenario under TORCH_DTRACE (`export`, `export_failures`): dtrace-only events such as
`guard_added`, `export`, `guard_on_data_dependent_error` and the fake-kernel ones are written only
there. torch/_logging reads TORCH_DTRACE when torch is imported, so the scenario runs itself again
with the trace directory moved from TORCH_TRACE (which corpus/generate.py sets) to TORCH_DTRACE."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable


def run_under_dtrace(workload: Callable[[], None], script: str) -> None:
    """`workload()` when this process traces under TORCH_DTRACE; else `script` again under it."""
    if "TORCH_DTRACE" in os.environ:
        workload()
        return
    env = dict(os.environ)
    env["TORCH_DTRACE"] = env.pop("TORCH_TRACE")
    subprocess.run([sys.executable, script], env=env, check=True)
