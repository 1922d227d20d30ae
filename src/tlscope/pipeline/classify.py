"""What a PATH (or URL) argument is, decided once for every command.

`tlscope PATH`, the ranks pipeline, `tlscope.load`, `serve`, `run` and `pack` all ask
`classify`: a store URL, a tlscope output folder, a log (plain or .gz), a muxed log (one file
holding several ranks' lines, or a folder holding only that file), a job's rank logs (a folder of
`dedicated_log_torch_trace_rank_N_*.log`), or a folder of logs (one, or several unrelated ones).
The muxed-log sniff reads the head of the log (read/log_ranks.py), so it is asked for only by those
that parse (`sniff=True`); the others need to know only whether PATH is already an output folder.
"""

from __future__ import annotations

import enum
from pathlib import Path

import msgspec

from tlscope.format.folder import is_output_folder
from tlscope.read.inputs import candidate_logs, discover
from tlscope.read.log_ranks import sniff_several_ranks


class InputKind(enum.Enum):
    STORE_URL = "store URL"
    OUTPUT_FOLDER = "output folder"
    LOG = "log"
    MUXED_LOG = "muxed log"
    RANK_LOGS = "rank logs"
    FOLDER_OF_LOGS = "folder of logs"
    #: Nothing there (or neither a file nor a folder): the command that reads it says so.
    MISSING = "missing"


class Input(msgspec.Struct, frozen=True):  # a Struct, not a dataclass: see format/layout.py's probes
    kind: InputKind
    #: The argument as given (a URL stays a string).
    source: str
    #: The local path (None for a URL).
    path: Path | None = None
    #: The logs it holds: the file itself, or a folder's logs by name (none for an output folder;
    #: which of a folder's logs are a job's ranks is read/inputs.py's `discover`).
    logs: tuple[Path, ...] = ()

    @property
    def multi_rank(self) -> bool:
        """Parsed as a job's ranks: a folder of several ranks' logs, or a muxed log."""
        return self.kind in (InputKind.RANK_LOGS, InputKind.MUXED_LOG)

    @property
    def muxed(self) -> Path | None:
        """The muxed log itself (a folder holding one is that log)."""
        return self.logs[0] if self.kind is InputKind.MUXED_LOG else None


def classify(source: str | Path, *, sniff: bool = True) -> Input:
    """What `source` is (see the module doc). Without `sniff`, a log is never called muxed."""
    if isinstance(source, str) and "://" in source:
        return Input(InputKind.STORE_URL, source)
    path = Path(source)
    text = str(source)
    if path.is_file():
        muxed = sniff and sniff_several_ranks(path)
        return Input(InputKind.MUXED_LOG if muxed else InputKind.LOG, text, path, (path,))
    if not path.is_dir():
        return Input(InputKind.MISSING, text, path)
    if is_output_folder(path):
        return Input(InputKind.OUTPUT_FOLDER, text, path)
    logs = tuple(candidate_logs(path))
    if len(discover(path)[0]) > 1:
        return Input(InputKind.RANK_LOGS, text, path, logs)
    # A folder holding one log is that log: a muxed one goes multi-rank too.
    muxed = sniff and len(logs) == 1 and sniff_several_ranks(logs[0])
    return Input(InputKind.MUXED_LOG if muxed else InputKind.FOLDER_OF_LOGS, text, path, logs)
