"""The log-to-log rewrites behind `tlscope split` and `tlscope redact` (read/split.py, read/redact.py).

They rewrite a log into logs, never into the format: no record is typed and no sink runs. Here
they get what a parse gets around it: an input checked before anything is written, an output
folder written atomically (split), and the muxed log's process-to-rank map computed once and
handed to the split.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tlscope.format.errors import InputError
from tlscope.pipeline.single import no_events_text
from tlscope.read.reader import first_event
from tlscope.read.redact import Mapping, Redactor, Stats, auto_mappings, redact_file, redact_in_place
from tlscope.read.split import process_ranks, split_log
from tlscope.write.outdir import OutputDir

#: (OLD, NEW) pairs of a rewrite: path prefixes, user names or host names.
Pairs = Sequence[tuple[str, str]]


def split(log: Path, out: Path, *, overwrite: bool = False) -> dict[str, int]:
    """One log per rank of `log` into the folder `out`; file name -> lines written."""
    if not log.is_file():
        raise InputError("is not a file", path=log)
    target = OutputDir(out, overwrite=overwrite)
    target.check()  # an existing OUT is refused before the log is read, as by a parse
    found, lines = first_event(log)
    if found is None:
        # Nothing to split: a copy of the file in unranked.log would look like a split log.
        raise InputError(f"{no_events_text(str(log), lines)} Nothing written.")
    owners = process_ranks(log)
    with target:
        return split_log(log, target.root, owners)


def redactor(paths: Pairs, users: Pairs, hosts: Pairs, *, auto: bool) -> Redactor | None:
    """The rewrites asked for (with `auto`, this machine's too); None when there is nothing to map."""
    mapped = [[Mapping(old, new) for old, new in pairs] for pairs in (paths, users, hosts)]
    if auto:
        for found, extra in zip(mapped, auto_mappings(), strict=True):
            found += extra
    return Redactor(*mapped) if any(mapped) else None


def redact(src: Path, dst: Path | None, rewrites: Redactor, *, in_place: bool) -> Stats:
    """Rewrite `src` into `dst` (stdout when None), or into itself with `in_place`."""
    return redact_in_place(src, rewrites) if in_place else redact_file(src, dst, rewrites)
