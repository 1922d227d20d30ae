"""Turning glog's year-less local times into honest ISO-8601 timestamps.

glog writes `MMDD HH:MM:SS.uuuuuu` in local time with no year and no zone. tlparse guesses the
current year and appends `Z`, which is wrong twice. tlscope fits the year and the UTC offset
from an epoch timestamp found in the same log (a chromium event's `ts`, in epoch microseconds,
logged at nearly the same moment as its glog prefix). Without one it falls back to the input
file's modification time for the year and leaves the offset out, and says so in manifest.json.
"""

from __future__ import annotations

import datetime as dt

import msgspec

from tlscope.model.record import GlogPrefix

_QUARTER_HOUR = 15 * 60
_MAX_OFFSET = 14 * 3600


class ClockInfo(msgspec.Struct, frozen=True):
    """How timestamps were completed: documented in FORMAT.md, written to manifest.json."""

    year: int | None
    #: `chromium_event` (year and offset fitted), `file_mtime` (year only) or `none`.
    source: str
    utc_offset_minutes: int | None


class ClockFit:
    def __init__(self) -> None:
        self.year: int | None = None
        self.offset_s: int | None = None
        self.anchor_month = 1
        self.source = "none"

    @property
    def fitted(self) -> bool:
        return self.offset_s is not None

    def observe(self, prefix: GlogPrefix, epoch_s: float) -> None:
        """Fit year and offset from one (local glog time, epoch seconds) pair; first good one wins."""
        if self.fitted or not (0 < epoch_s < 2**33):
            return
        utc = dt.datetime.fromtimestamp(epoch_s, dt.timezone.utc).replace(tzinfo=None)
        best: tuple[float, int] | None = None
        for year in (utc.year - 1, utc.year, utc.year + 1):
            local = _naive(prefix, year)
            if local is None:
                continue
            delta = (local - utc).total_seconds()
            if best is None or abs(delta) < abs(best[0]):
                best = (delta, year)
        if best is None or abs(best[0]) > _MAX_OFFSET:
            return
        self.offset_s = round(best[0] / _QUARTER_HOUR) * _QUARTER_HOUR
        self.year, self.anchor_month, self.source = best[1], prefix.month, "chromium_event"

    def fallback_year(self, mtime_s: float, last_month: int | None) -> None:
        """Year from the file's modification time: the log ended around then."""
        if self.year is not None:
            return
        self.year = dt.datetime.fromtimestamp(mtime_s).year
        self.anchor_month = last_month or dt.datetime.fromtimestamp(mtime_s).month
        self.source = "file_mtime"

    def info(self) -> ClockInfo:
        minutes = None if self.offset_s is None else self.offset_s // 60
        return ClockInfo(year=self.year, source=self.source, utc_offset_minutes=minutes)

    def iso(self, prefix: GlogPrefix) -> str:
        """`2024-12-06T15:18:15.925000-08:00` (offset only when fitted)."""
        year = self._year_for(prefix.month)
        text = (
            f"{year:04d}-{prefix.month:02d}-{prefix.day:02d}T{prefix.hour:02d}:"
            f"{prefix.minute:02d}:{prefix.second:02d}.{prefix.microsecond:06d}"
        )
        return text + _offset_text(self.offset_s)

    def _year_for(self, month: int) -> int:
        # A log that spans New Year: months far from the anchor belong to the next/previous year.
        year = self.year if self.year is not None else 0
        if month - self.anchor_month > 6:
            return year - 1
        if self.anchor_month - month > 6:
            return year + 1
        return year


def _naive(prefix: GlogPrefix, year: int) -> dt.datetime | None:
    try:
        return dt.datetime(
            year,
            prefix.month,
            prefix.day,
            prefix.hour,
            prefix.minute,
            prefix.second,
            prefix.microsecond,
        )
    except ValueError:
        return None


def _offset_text(offset_s: int | None) -> str:
    if offset_s is None:
        return ""
    sign = "+" if offset_s >= 0 else "-"
    hours, rest = divmod(abs(offset_s), 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}"
