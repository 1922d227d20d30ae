"""Trace file names: which files are logs, and the rank PyTorch puts in a rank log's name.

Distributed jobs write `dedicated_log_torch_trace_rank_<N>_<random>.log`, one per rank; a plain
run writes `dedicated_log_torch_trace_<random>.log`.
"""

from __future__ import annotations

import re
from pathlib import Path

_RANK_LOG_STEM = "dedicated_log_torch_trace_rank_"
#: tlparse's discovery pattern: dedicated_log_torch_trace_rank_<u32>[_anything].log (a .gz copy too).
_RANK_LOG = re.compile(rf"^{_RANK_LOG_STEM}\+?(\d+)(?:_[^/]*)?\.log(?:\.gz)?$")
#: The rank anywhere in a name (manifest.json's `name_rank`): looser than discovery, which must
#: follow tlparse, so that a renamed copy (`job3_dedicated_log_torch_trace_rank_2.txt`) still
#: says which rank it came from.
_RANK_IN_NAME = re.compile(rf"{_RANK_LOG_STEM}(\d+)(?:_|\.)")
#: Files a directory argument may mean: logs by extension, or by PyTorch's name.
_LOG_NAME = re.compile(r"(\.log|\.txt)(\.gz)?$|^dedicated_log_torch_trace")
U32_MAX = 2**32 - 1


def as_u32(digits: str | bytes) -> int | None:
    """ASCII digits as a u32 (a rank), None beyond 2**32 - 1; never int() of thousands of digits."""
    text = digits.decode("ascii") if isinstance(digits, bytes) else digits
    value = text.lstrip("0")
    number = int(value or "0") if len(value) <= 10 else U32_MAX + 1
    return number if number <= U32_MAX else None


def rank_of_rank_log(name: str) -> int | None:
    """The rank of a rank log found by multi-rank discovery (tlparse's rule), else None."""
    match = _RANK_LOG.match(name)
    return None if match is None else as_u32(match.group(1))


def is_rank_log_name(name: str) -> bool:
    """A rank log's name by tlparse's rule, whatever its rank (discovery skips one beyond u32)."""
    return _RANK_LOG.match(name) is not None


def rank_in_name(path: Path) -> int | None:
    """The rank PyTorch put in the file name, if any (see _RANK_IN_NAME); a rank is a u32."""
    match = _RANK_IN_NAME.search(path.name)
    return None if match is None else as_u32(match.group(1))


def rank_log_name(rank: int) -> str:
    """The name PyTorch gives a rank's log (split writes these, so discovery finds them)."""
    return f"{_RANK_LOG_STEM}{rank}.log"


def looks_like_log(path: Path) -> bool:
    return path.is_file() and bool(_LOG_NAME.search(path.name))
