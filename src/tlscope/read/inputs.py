"""Which log(s) a PATH argument means: a file, a .gz file, a directory, or the rank logs of a job.

tlparse requires a file unless told otherwise and its `--latest` always fails; here a
directory holding one log just works, `--latest` picks the newest log, a directory of several
ranks' logs (or one muxed log) goes multi-rank, and every error is raised before the output
folder is touched.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from tlscope.format.errors import InputError
from tlscope.read.names import is_rank_log_name, looks_like_log, rank_of_rank_log


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
        raise InputError(f"No log files found in directory {path}{_subfolder_hint(path)}")
    if latest:
        # Newest by modification time; the name breaks ties so the choice is deterministic.
        return max(logs, key=lambda p: (p.stat().st_mtime, p.name))
    if len(logs) == 1:
        return logs[0]
    names = ", ".join(p.name for p in logs[:5]) + (", ..." if len(logs) > 5 else "")
    raise InputError(f"{path} holds {len(logs)} logs ({names}); pass --latest for the newest one, or name one file")


def _subfolder_hint(directory: Path, *, look: int = 200) -> str:
    """Where the logs are when they sit one folder down (a folder of runs, `run1/`, `run2/`).

    The user passed the folder above their runs; naming the ones that hold logs saves them a
    listing. Only the first `look` entries are looked at: a huge folder is not walked for a hint.
    """
    holding: list[str] = []
    for n, sub in enumerate(sorted(directory.iterdir())):
        if n >= look:
            break
        try:
            if sub.is_dir() and any(looks_like_log(p) for p in sub.iterdir()):
                holding.append(sub.name)
        except OSError:
            continue  # an unreadable sub-folder gives no hint, not an error
    if not holding:
        return ""
    names = ", ".join(holding[:5]) + (", ..." if len(holding) > 5 else "")
    return f"; its sub-folders {names} hold logs: pass one of them (for example {directory / holding[0]})"


class RankLog(msgspec.Struct, frozen=True):
    rank: int
    path: str


def discover(directory: Path) -> tuple[list[RankLog], list[str]]:
    """(rank logs sorted by rank, notes on skipped files); other files are ignored.

    Two files claiming one rank: the first by name is used and the other reported (tlparse
    parses both into the same rank_N folder, the second replacing the first).
    """
    found: dict[int, Path] = {}
    notes: list[str] = []
    for path in sorted(directory.iterdir()):
        rank = rank_of_rank_log(path.name)
        if rank is None or not path.is_file():
            if rank is None and is_rank_log_name(path.name) and path.is_file():
                notes.append(f"{path.name}: its rank is beyond 2**32 - 1 (ranks are u32); skipped")
            continue
        if rank in found:
            notes.append(f"{path.name}: rank {rank} already read from {found[rank].name}; skipped")
            continue
        found[rank] = path
    return [RankLog(r, str(found[r])) for r in sorted(found)], notes
