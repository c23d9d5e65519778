"""Temporal expressions in English and Korean, resolved against a reference time.

"last Tuesday", "in May 2023", "three weeks ago", "지난주", "작년 5월", "3일 전" become a time
range; "recently", "최근" become a recency preference; "before the wedding" / "결혼식 전에"
become an anchor phrase that the searcher resolves against the user's own memories.

A question looks back, so days resolve to the last such day; the calendar words and the
arithmetic are the date engine's (``madeleine.text.dates``), shared with the fact rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from madeleine.text.dates.arithmetic import (
    month_end,
    nearest_weekday,
    shift_month,
    upcoming_month,
    week_monday,
    weekend_start,
)
from madeleine.text.dates.timestamps import to_utc
from madeleine.text.dates.words import (
    DAY_OFFSETS,
    MONTH_NAMES,
    MONTHS,
    UNIT_DAYS,
    WEEKDAYS,
    YEAR_OFFSETS,
    count,
    spaced,
    squeezed,
)

_NUMBER = (
    r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|"
    r"several|couple of)"
)

_EN_AGO = re.compile(rf"\b{_NUMBER}\s+(day|week|month|year)s?\s+ago\b", re.I)
_EN_REL = re.compile(
    r"\b(yesterday|today|tonight|last night|(last|this|past|previous) (week|month|year|weekend))\b",
    re.I,
)
_EN_WEEKDAY = re.compile(rf"\b(last|on|this past)\s+({'|'.join(WEEKDAYS)})\b", re.I)
_EN_MONTH_YEAR = re.compile(rf"\b(?:in\s+)?({MONTH_NAMES})\.?,?\s+((?:19|20)\d\d)\b", re.I)
_EN_MONTH = re.compile(rf"\bin\s+({MONTH_NAMES})\b", re.I)
_EN_YEAR = re.compile(r"\bin\s+((?:19|20)\d\d)\b", re.I)
_EN_RECENT = re.compile(r"\b(recently|lately|latest|most recent|these days|nowadays)\b", re.I)
_EN_ANCHOR = re.compile(
    r"\b(before|after)\s+((?:the|my|our|his|her|their)\s+[\w' -]{2,40}?)(?=[?.!,]|$)", re.I
)

_KO_AGO = re.compile(r"(\d+)\s*(일|주일|주|달|개월|년)\s*전")
_KO_REL = re.compile(
    r"(그저께|그제|어제|오늘|지난\s*주|이번\s*주|지난\s*달|이번\s*달|작년|올해|재작년)"
)
_KO_YEAR_MONTH = re.compile(r"((?:19|20)\d\d)\s*년\s*(\d{1,2})\s*월")
_KO_REL_YEAR_MONTH = re.compile(r"(작년|올해|재작년)\s*(\d{1,2})\s*월")
_KO_MONTH = re.compile(r"(?<![\d년])(\d{1,2})\s*월(?:에|달)?")
_KO_RECENT = re.compile(r"(최근|요즘|요새)")
_KO_ANCHOR = re.compile(r"(?<!\S)(\S+(?:\s\S+)?)\s*(전에|이전에|후에|이후에|다음에)")


@dataclass(frozen=True, slots=True)
class TimeHint:
    """What a query says about time; at most one of range / recency / anchor is set."""

    expression: str
    start: datetime | None = None
    end: datetime | None = None
    recency: bool = False
    anchor: str | None = None
    anchor_direction: str | None = None  # "before" / "after"

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {"expression": self.expression}
        if self.start is not None or self.end is not None:
            found["range"] = [
                None if self.start is None else self.start.isoformat(),
                None if self.end is None else self.end.isoformat(),
            ]
        if self.recency:
            found["recency"] = True
        if self.anchor is not None:
            found["anchor"] = {"phrase": self.anchor, "direction": self.anchor_direction}
        return found


def parse_time_hint(query: str, now: datetime) -> TimeHint | None:
    """The first temporal expression found in ``query``, resolved against ``now`` (UTC)."""
    today = to_utc(now).date()
    for parse in (_english, _korean):
        hint = parse(query, today)
        if hint is not None:
            return hint
    return None


_Span = tuple[datetime, datetime]


def _span(first: date, last: date) -> _Span:
    """From the first moment of ``first`` to the last of ``last``, in UTC."""
    start = datetime.combine(first, time(), tzinfo=UTC)
    after = datetime.combine(last, time(), tzinfo=UTC) + timedelta(days=1)
    return start, after - timedelta(microseconds=1)


def _month(year: int, month: int) -> _Span:
    return _span(date(year, month, 1), month_end(year, month))


def _year(year: int) -> _Span:
    return _span(date(year, 1, 1), date(year, 12, 31))


def _week(today: date, weeks: int) -> _Span:
    monday = week_monday(today, weeks)
    return _span(monday, monday + timedelta(days=6))


def _ago(amount: int, unit_days: int, today: date) -> _Span:
    """Around the moment that many units ago: ±half a unit (at least a day)."""
    center = today - timedelta(days=amount * unit_days)
    slack = timedelta(days=max(1, unit_days // 2))
    return _span(center - slack, center + slack)


def _hint(match: re.Match[str], span: _Span) -> TimeHint:
    return TimeHint(expression=match.group(0), start=span[0], end=span[1])


def _english(query: str, today: date) -> TimeHint | None:
    if match := _EN_AGO.search(query):
        return _hint(match, _ago(count(match.group(1)), UNIT_DAYS[match.group(2).lower()], today))
    if match := _EN_REL.search(query):
        phrase = spaced(match.group(1))
        if phrase in DAY_OFFSETS:  # today, tonight, yesterday, last night
            day = today + timedelta(days=DAY_OFFSETS[phrase])
            return _hint(match, _span(day, day))
        step = 0 if match.group(2).lower() == "this" else -1  # this / last (past, previous)
        unit = match.group(3).lower()
        if unit == "week":
            return _hint(match, _week(today, step))
        if unit == "weekend":
            saturday = weekend_start(today, step)
            return _hint(match, _span(saturday, saturday + timedelta(days=1)))
        if unit == "month":
            return _hint(match, _month(*shift_month(today.year, today.month, step)))
        return _hint(match, _year(today.year + step))
    if match := _EN_WEEKDAY.search(query):
        day = nearest_weekday(today, WEEKDAYS[match.group(2).lower()], past=True)
        return _hint(match, _span(day, day))
    if match := _EN_MONTH_YEAR.search(query):
        return _hint(match, _month(int(match.group(2)), MONTHS[match.group(1).lower()]))
    if match := _EN_YEAR.search(query):
        return _hint(match, _year(int(match.group(1))))
    if match := _EN_MONTH.search(query):
        month = MONTHS[match.group(1).lower()]
        return _hint(match, _month(upcoming_month(today, month, past=True).year, month))
    if match := _EN_ANCHOR.search(query):
        return TimeHint(
            expression=match.group(0),
            anchor=match.group(2).strip(),
            anchor_direction=match.group(1).lower(),
        )
    if match := _EN_RECENT.search(query):
        return TimeHint(expression=match.group(0), recency=True)
    return None


def _korean(query: str, today: date) -> TimeHint | None:
    if match := _KO_AGO.search(query):
        return _hint(match, _ago(int(match.group(1)), UNIT_DAYS[match.group(2)], today))
    if match := _KO_YEAR_MONTH.search(query):
        return _hint(match, _month(int(match.group(1)), int(match.group(2))))
    if match := _KO_REL_YEAR_MONTH.search(query):
        month = int(match.group(2))
        if 1 <= month <= 12:
            return _hint(match, _month(today.year + YEAR_OFFSETS[match.group(1)], month))
    if match := _KO_REL.search(query):
        phrase = squeezed(match.group(1))
        if phrase in DAY_OFFSETS:  # 오늘, 어제, 그저께, 그제
            day = today + timedelta(days=DAY_OFFSETS[phrase])
            return _hint(match, _span(day, day))
        if phrase in ("지난주", "이번주"):
            return _hint(match, _week(today, -1 if phrase == "지난주" else 0))
        if phrase in ("지난달", "이번달"):
            months = -1 if phrase == "지난달" else 0
            return _hint(match, _month(*shift_month(today.year, today.month, months)))
        return _hint(match, _year(today.year + YEAR_OFFSETS[phrase]))
    if match := _KO_MONTH.search(query):
        month = int(match.group(1))
        if 1 <= month <= 12:
            return _hint(match, _month(upcoming_month(today, month, past=True).year, month))
    if match := _KO_RECENT.search(query):
        return TimeHint(expression=match.group(0), recency=True)
    if match := _KO_ANCHOR.search(query):
        direction = "before" if match.group(2) in ("전에", "이전에") else "after"
        return TimeHint(
            expression=match.group(0), anchor=match.group(1), anchor_direction=direction
        )
    return None
