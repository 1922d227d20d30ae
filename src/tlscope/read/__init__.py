"""read: log lines to typed Records, streaming (see reader.LogReader)."""

from tlscope.read.reader import LogReader, rank_from_filename

__all__ = ["LogReader", "rank_from_filename"]
