"""Calendar arithmetic on days, shared by the fact rules (which resolve forward from the
message date: "Friday" in a plan is the next one) and the query hints (which look back:
"Friday" in a question is the last one). Every function takes the reference day and returns
days, so both directions use one definition of a week, a month shift and a weekend."""

from __future__ import annotations

import calendar
from datetime import date, timedelta


def safe_date(year: int, month: int, day: int) -> date | None:
    """The day, or None when it does not exist (30 February)."""
    try:
        return date(year, month, day)
    except ValueError:
        return None


def month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def shift_month(year: int, month: int, months: int) -> tuple[int, int]:
    """(year, month) that many months later (earlier if negative), across year ends."""
    index = year * 12 + month - 1 + months
    return index // 12, index % 12 + 1


def month_start(today: date, months: int) -> date:
    """First day of the month that many months after today's."""
    return date(*shift_month(today.year, today.month, months), 1)


def add_months(today: date, months: int) -> date:
    """The same day of the month that many months later, clamped to that month's end
    (31 January + 1 month is 29 February in a leap year)."""
    year, month = shift_month(today.year, today.month, months)
    return date(year, month, min(today.day, calendar.monthrange(year, month)[1]))


def upcoming_day(today: date, month: int, day: int, past: bool = False) -> date | None:
    """The next ``month``/``day`` on or after today (the last one on or before, if ``past``)."""
    found = safe_date(today.year, month, day)
    if found is None:
        found = safe_date(today.year + (-1 if past else 1), month, day)
        return found
    if not past and found < today:
        return safe_date(today.year + 1, month, day)
    if past and found > today:
        return safe_date(today.year - 1, month, day)
    return found


def upcoming_month(today: date, month: int, past: bool = False) -> date:
    """First day of the next occurrence of ``month`` (the last one, if ``past``); in the
    current month, today (a plan for "January" said on 8 January starts no earlier)."""
    year = today.year
    if not past and month < today.month:
        year += 1
    if past and month > today.month:
        year -= 1
    first = date(year, month, 1)
    return first if past or first > today else max(first, today)


def day_of_month(today: date, day: int, past: bool = False) -> date | None:
    """ "the 15th" / "15일에": this month's, or next month's once this month's has passed
    (or does not exist)."""
    found = safe_date(today.year, today.month, day)
    if found is None or (found < today and not past):
        start = month_start(today, 1)
        found = safe_date(start.year, start.month, day)
    return found


def nearest_weekday(today: date, weekday: int, past: bool = False, strict: bool = True) -> date:
    """The next ``weekday`` (the last one, if ``past``); today counts only if not ``strict``."""
    gap = (today.weekday() - weekday if past else weekday - today.weekday()) % 7
    if gap == 0 and strict:
        gap = 7
    return today - timedelta(days=gap) if past else today + timedelta(days=gap)


def week_monday(today: date, weeks: int) -> date:
    """Monday of the week that many weeks after this one (before it, if negative)."""
    return today - timedelta(days=today.weekday()) + timedelta(weeks=weeks)


def weekday_in_week(today: date, weeks: int, weekday: int) -> date:
    """That weekday of the week ``weeks`` from this one ("Friday next week", "다음 주 금요일")."""
    return week_monday(today, weeks) + timedelta(days=weekday)


def weekend_start(today: date, weeks: int) -> date:
    """Saturday of the weekend ``weeks`` from this one; on a Sunday, "this weekend" is the
    one under way, so it began yesterday."""
    return weekday_in_week(today, weeks, 5)


def period_start(today: date, unit: str, ahead: bool) -> tuple[date, str]:
    """Where "this/next week|weekend|month|year" starts, and the precision it gives. What is
    left of the current period starts today; the next one starts on its first day."""
    precision = "week" if unit == "weekend" else unit
    if unit == "weekend":
        return max(weekend_start(today, 1 if ahead else 0), today), precision
    if not ahead:
        return today, precision
    if unit == "week":
        return week_monday(today, 1), precision
    if unit == "month":
        return month_start(today, 1), precision
    return date(today.year + 1, 1, 1), precision
