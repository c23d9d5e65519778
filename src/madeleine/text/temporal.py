"""Temporal expressions in English and Korean, resolved against a reference time.

"last Tuesday", "in May 2023", "three weeks ago", "지난주", "작년 5월", "3일 전" become a time
range; "recently", "최근" become a recency preference; "before the wedding" / "결혼식 전에"
become an anchor phrase that the searcher resolves against the user's own memories.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from madeleine.text.timeparse import MONTHS

# Counted words in relative time expressions ("three weeks ago"); shared with fact rules.
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple of": 2,
    "a couple of": 2,
    "few": 3,
    "a few": 3,
    "several": 3,
}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_KO_UNIT_DAYS = {"일": 1, "주": 7, "주일": 7, "달": 30, "개월": 30, "년": 365}
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUMBER = (
    r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|"
    r"several|couple of)"
)

_EN_AGO = re.compile(rf"\b{_NUMBER}\s+(day|week|month|year)s?\s+ago\b", re.I)
_EN_REL = re.compile(
    r"\b(yesterday|today|tonight|last night|(last|this|past|previous) (week|month|year|weekend))\b",
    re.I,
)
_EN_WEEKDAY = re.compile(rf"\b(last|on|this past)\s+({'|'.join(_WEEKDAYS)})\b", re.I)
_EN_MONTH_YEAR = re.compile(rf"\b(?:in\s+)?({_MONTH_NAMES})\.?,?\s+((?:19|20)\d\d)\b", re.I)
_EN_MONTH = re.compile(rf"\bin\s+({_MONTH_NAMES})\b", re.I)
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
_KO_ANCHOR = re.compile(r"(\S+(?:\s\S+)?)\s*(전에|이전에|후에|이후에|다음에)")


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
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for parse in (_english, _korean):
        hint = parse(query, now, today)
        if hint is not None:
            return hint
    return None


def _day(start: datetime, days: int = 1) -> tuple[datetime, datetime]:
    return start, start + timedelta(days=days) - timedelta(microseconds=1)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    return _day(start, calendar.monthrange(year, month)[1])


def _year(year: int) -> tuple[datetime, datetime]:
    start = datetime(year, 1, 1, tzinfo=UTC)
    return start, datetime(year + 1, 1, 1, tzinfo=UTC) - timedelta(microseconds=1)


def _week(today: datetime, weeks_back: int) -> tuple[datetime, datetime]:
    monday = today - timedelta(days=today.weekday() + 7 * weeks_back)
    return _day(monday, 7)


def _shift_month(year: int, month: int, back: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) - back
    return index // 12, index % 12 + 1


def _most_recent_month(month: int, today: datetime) -> int:
    return today.year if month <= today.month else today.year - 1


def _ago(amount: int, unit_days: int, today: datetime) -> tuple[datetime, datetime]:
    """Around the moment that many units ago: ±half a unit (at least a day)."""
    center = today - timedelta(days=amount * unit_days)
    slack = timedelta(days=max(1, unit_days // 2))
    return center - slack, center + slack + timedelta(days=1) - timedelta(microseconds=1)


def _hint(match: re.Match[str], span: tuple[datetime, datetime]) -> TimeHint:
    return TimeHint(expression=match.group(0), start=span[0], end=span[1])


def _english(query: str, now: datetime, today: datetime) -> TimeHint | None:
    if match := _EN_AGO.search(query):
        raw = match.group(1).lower()
        amount = int(raw) if raw.isdigit() else NUMBER_WORDS.get(raw, 1)
        return _hint(match, _ago(amount, _UNIT_DAYS[match.group(2).lower()], today))
    if match := _EN_REL.search(query):
        phrase = match.group(1).lower()
        if phrase in ("today", "tonight"):
            return _hint(match, _day(today))
        if phrase in ("yesterday", "last night"):
            return _hint(match, _day(today - timedelta(days=1)))
        which, unit = match.group(2).lower(), match.group(3).lower()
        back = 0 if which == "this" else 1
        if unit == "week":
            return _hint(match, _week(today, back))
        if unit == "weekend":
            # this weekend: the current or coming Saturday; last weekend: the one before it
            saturday = today + timedelta(days=(5 - today.weekday()) % 7)
            if today.weekday() == 6:
                saturday = today - timedelta(days=1)
            return _hint(match, _day(saturday - timedelta(days=7 * back), 2))
        if unit == "month":
            return _hint(match, _month(*_shift_month(today.year, today.month, back)))
        return _hint(match, _year(today.year - back))
    if match := _EN_WEEKDAY.search(query):
        target = _WEEKDAYS.index(match.group(2).lower())
        back = (today.weekday() - target) % 7 or 7
        return _hint(match, _day(today - timedelta(days=back)))
    if match := _EN_MONTH_YEAR.search(query):
        return _hint(match, _month(int(match.group(2)), MONTHS[match.group(1).lower()]))
    if match := _EN_YEAR.search(query):
        return _hint(match, _year(int(match.group(1))))
    if match := _EN_MONTH.search(query):
        month = MONTHS[match.group(1).lower()]
        return _hint(match, _month(_most_recent_month(month, today), month))
    if match := _EN_ANCHOR.search(query):
        return TimeHint(
            expression=match.group(0),
            anchor=match.group(2).strip(),
            anchor_direction=match.group(1).lower(),
        )
    if match := _EN_RECENT.search(query):
        return TimeHint(expression=match.group(0), recency=True)
    return None


def _korean(query: str, now: datetime, today: datetime) -> TimeHint | None:
    if match := _KO_AGO.search(query):
        return _hint(match, _ago(int(match.group(1)), _KO_UNIT_DAYS[match.group(2)], today))
    if match := _KO_YEAR_MONTH.search(query):
        return _hint(match, _month(int(match.group(1)), int(match.group(2))))
    if match := _KO_REL_YEAR_MONTH.search(query):
        back = {"올해": 0, "작년": 1, "재작년": 2}[match.group(1)]
        month = int(match.group(2))
        if 1 <= month <= 12:
            return _hint(match, _month(today.year - back, month))
    if match := _KO_REL.search(query):
        phrase = re.sub(r"\s+", "", match.group(1))
        if phrase == "오늘":
            return _hint(match, _day(today))
        if phrase == "어제":
            return _hint(match, _day(today - timedelta(days=1)))
        if phrase in ("그저께", "그제"):
            return _hint(match, _day(today - timedelta(days=2)))
        if phrase in ("지난주", "이번주"):
            return _hint(match, _week(today, 1 if phrase == "지난주" else 0))
        if phrase in ("지난달", "이번달"):
            back = 1 if phrase == "지난달" else 0
            return _hint(match, _month(*_shift_month(today.year, today.month, back)))
        back = {"올해": 0, "작년": 1, "재작년": 2}[phrase]
        return _hint(match, _year(today.year - back))
    if match := _KO_MONTH.search(query):
        month = int(match.group(1))
        if 1 <= month <= 12:
            return _hint(match, _month(_most_recent_month(month, today), month))
    if match := _KO_RECENT.search(query):
        return TimeHint(expression=match.group(0), recency=True)
    if match := _KO_ANCHOR.search(query):
        direction = "before" if match.group(2) in ("전에", "이전에") else "after"
        return TimeHint(
            expression=match.group(0), anchor=match.group(1), anchor_direction=direction
        )
    return None
