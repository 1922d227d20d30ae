"""`tlscope.timeline.read(path)`: the reference decoder of timeline.bin (docs/FORMAT.md section 17).

PATH is a timeline.bin or an output folder holding one (a job's folder holds every rank's).
Each event has `.rank`, `.name`, `.cat`, `.start_us`, `.dur_us`, `.compile_id` (display form or
None), `.depth` and `.kind`. The layout and the decoder live in `tlscope.format.timeline_bin`.

>>> from tlscope import timeline
>>> events = timeline.read(OUT)                                  # doctest: +SKIP
>>> e = events[0]; (e.rank, e.name, e.cat, e.start_us, e.dur_us, e.compile_id)  # doctest: +SKIP
(0, 'dynamo', 'dynamo_timed', 1795291054605924, 1298765, '[0/0]')
"""

from __future__ import annotations

from tlscope.format.timeline_bin import Header, TimelineError, TimelineEvent, iter_events, read, read_tables

__all__ = ["Header", "TimelineError", "TimelineEvent", "iter_events", "read", "read_tables"]
