"""Dates and times as a sentence mentions them, and how one sentence's mentions settle into
one "when": the language parsers find the mentions, this part is the same for all."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta


@dataclass(frozen=True, slots=True)
class Stamp:
    """A calendar day named in a sentence, with how precisely the text pinned it down."""

    start: int
    end: int
    day: date
    precision: str = "day"  # "day", "week", "month" (first day of it) or "year"
    has_year: bool = False


@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day named in a sentence."""

    start: int
    end: int
    at: time


@dataclass(frozen=True, slots=True)
class When:
    """What a sentence says about when something happens: a start, maybe an end and a time."""

    start: date
    end: date | None
    at: time | None
    precision: str
    has_year: bool = True

    def start_value(self, now: datetime) -> date | datetime:
        if self.at is not None and self.precision == "day":
            return datetime.combine(self.start, self.at, tzinfo=now.tzinfo)
        return self.start


def clean_stamps(found: list[Stamp]) -> list[Stamp]:
    """Drop stamps overlapping an earlier, longer one; keep reading order."""
    kept: list[Stamp] = []
    for stamp in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if kept and stamp.start < kept[-1].end:
            continue
        kept.append(stamp)
    return kept


def settle(
    stamps: list[Stamp],
    clocks: list[Clock],
    text: str,
    now: datetime,
    joins_range: re.Pattern[str],
) -> When | None:
    """Turn the stamps and clocks of a sentence into one start (+ end, + time of day).

    The second stamp is the end when the text between the two joins a range ("to", "-",
    "부터", "returning on"); a lone time of day means today, or tomorrow if already past.
    """
    clock = clocks[0].at if clocks else None
    if not stamps:
        if clock is None:
            return None
        today = now.date()
        day = today if clock > now.time() else today + timedelta(days=1)
        return When(day, None, clock, "day", True)
    first = stamps[0]
    end: date | None = None
    if len(stamps) > 1:
        between = text[first.end : stamps[1].start]
        if joins_range.search(between) and stamps[1].day >= first.day:
            end = stamps[1].day
    return When(first.day, end, clock, first.precision, first.has_year)
