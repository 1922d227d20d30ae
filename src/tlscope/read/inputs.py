"""Which log(s) a PATH argument means: a file, a .gz file, or a directory.

tlparse requires a file unless told otherwise and its `--latest` always fails; here a
directory holding one log just works, `--latest` picks the newest log, and every error is
raised before the output folder is touched.
"""

from __future__ import annotations

import re
from pathlib import Path

_LOG_NAME = re.compile(r"(\.log|\.txt)(\.gz)?$|^dedicated_log_torch_trace")


class InputError(Exception):
    """PATH does not name something tlscope can read."""


def looks_like_log(path: Path) -> bool:
    return path.is_file() and bool(_LOG_NAME.search(path.name))


def candidate_logs(directory: Path) -> list[Path]:
    """Log files directly in `directory`, sorted by name (deterministic)."""
    return sorted(p for p in directory.iterdir() if looks_like_log(p))


def resolve_input(path: Path, *, latest: bool) -> Path:
    """The single log to read for PATH, or InputError saying why not."""
    if not path.exists():
        raise InputError(f"{path} does not exist")
    if path.is_file():
        if latest:
            raise InputError(f"Input path {path} is not a directory (required when using --latest)")
        return path
    if not path.is_dir():
        raise InputError(f"{path} is neither a file nor a directory")
    logs = candidate_logs(path)
    if not logs:
        raise InputError(f"No log files found in directory {path}")
    if latest:
        # Newest by modification time; the name breaks ties so the choice is deterministic.
        return max(logs, key=lambda p: (p.stat().st_mtime, p.name))
    if len(logs) == 1:
        return logs[0]
    names = ", ".join(p.name for p in logs[:5]) + (", ..." if len(logs) > 5 else "")
    raise InputError(f"{path} holds {len(logs)} logs ({names}); pass --latest for the newest one, or name one file")
