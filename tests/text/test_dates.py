"""The date engine shared by the fact rules and the query hints: tables, calendar arithmetic and
the English / Korean sentence parsers, including month ends, leap days and year rollover."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pytest

from madeleine.text import timeparse
from madeleine.text.dates import (
    add_months,
    count,
    day_of_month,
    english_clocks,
    english_stamps,
    english_when,
    korean_clocks,
    korean_stamps,
    korean_when,
    month_start,
    nearest_weekday,
    parse_timestamp,
    period_start,
    shift_month,
    upcoming_day,
    upcoming_month,
    week_monday,
    weekend_start,
)
from madeleine.text.temporal import parse_time_hint

WEDNESDAY = date(2025, 1, 8)
SUNDAY = date(2024, 9, 22)
NEW_YEARS_EVE = date(2024, 12, 31)  # a Tuesday


def _days(text: str, today: date, past: bool = False) -> list[str]:
    stamps = korean_stamps(text, today, past) + english_stamps(text, today, past)
    return [s.day.isoformat() for s in stamps]


# ------------------------------------------------------------------------- tables


def test_counted_words() -> None:
    assert [count(w) for w in ("3", "a", "A  couple  of", "few", "several", "twelve")] == [
        3,
        1,
        2,
        3,
        3,
        12,
    ]
    assert count("umpteen") == 1  # an unknown word counts as one


# --------------------------------------------------------------------- arithmetic


def test_month_shifts_cross_year_ends() -> None:
    assert shift_month(2024, 12, 1) == (2025, 1)
    assert shift_month(2025, 1, -1) == (2024, 12)
    assert shift_month(2024, 3, -15) == (2022, 12)
    assert month_start(NEW_YEARS_EVE, 1) == date(2025, 1, 1)
    assert month_start(date(2024, 1, 31), 0) == date(2024, 1, 1)


def test_calendar_months_clamp_to_the_month_end() -> None:
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)  # leap year
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)
    assert add_months(date(2024, 10, 31), 3) == date(2025, 1, 31)
    assert add_months(date(2024, 3, 31), -1) == date(2024, 2, 29)


def test_upcoming_days_and_months() -> None:
    assert upcoming_day(NEW_YEARS_EVE, 1, 3) == date(2025, 1, 3)
    assert upcoming_day(NEW_YEARS_EVE, 12, 31) == NEW_YEARS_EVE  # today counts
    assert upcoming_day(date(2025, 1, 2), 12, 30, past=True) == date(2024, 12, 30)
    # 29 February only exists in leap years: the next year is tried once, else no day
    assert upcoming_day(date(2025, 3, 1), 2, 29) is None
    assert upcoming_day(date(2023, 3, 1), 2, 29) == date(2024, 2, 29)
    assert upcoming_month(date(2024, 11, 20), 1) == date(2025, 1, 1)
    assert upcoming_month(WEDNESDAY, 1) == WEDNESDAY  # this month: from today
    assert upcoming_month(date(2025, 1, 8), 3, past=True) == date(2024, 3, 1)


def test_day_of_month_moves_to_next_month_when_gone_or_missing() -> None:
    assert day_of_month(date(2024, 12, 20), 15) == date(2025, 1, 15)
    assert day_of_month(date(2024, 12, 10), 15) == date(2024, 12, 15)
    assert day_of_month(date(2024, 12, 20), 15, past=True) == date(2024, 12, 15)
    assert day_of_month(date(2024, 4, 10), 31) == date(2024, 5, 31)  # no 31 April
    assert day_of_month(date(2024, 1, 31), 30) is None  # neither 30 Jan (gone) nor 30 Feb


def test_weekdays_both_directions() -> None:
    assert nearest_weekday(WEDNESDAY, 4) == date(2025, 1, 10)  # Friday
    assert nearest_weekday(WEDNESDAY, 2) == date(2025, 1, 15)  # strictly after
    assert nearest_weekday(WEDNESDAY, 2, strict=False) == WEDNESDAY
    assert nearest_weekday(WEDNESDAY, 1, past=True) == date(2025, 1, 7)
    assert nearest_weekday(WEDNESDAY, 2, past=True) == date(2025, 1, 1)
    assert nearest_weekday(NEW_YEARS_EVE, 4) == date(2025, 1, 3)  # across the year end
    assert week_monday(NEW_YEARS_EVE, 1) == date(2025, 1, 6)
    assert week_monday(date(2025, 1, 1), -1) == date(2024, 12, 23)


def test_weekend_on_a_sunday_is_the_one_under_way() -> None:
    assert weekend_start(SUNDAY, 0) == date(2024, 9, 21)
    assert weekend_start(SUNDAY, 1) == date(2024, 9, 28)
    assert weekend_start(WEDNESDAY, 0) == date(2025, 1, 11)
    assert period_start(SUNDAY, "weekend", ahead=False) == (SUNDAY, "week")
    assert period_start(WEDNESDAY, "weekend", ahead=True) == (date(2025, 1, 18), "week")


def test_period_starts() -> None:
    assert period_start(NEW_YEARS_EVE, "week", ahead=True) == (date(2025, 1, 6), "week")
    assert period_start(NEW_YEARS_EVE, "month", ahead=True) == (date(2025, 1, 1), "month")
    assert period_start(NEW_YEARS_EVE, "year", ahead=True) == (date(2025, 1, 1), "year")
    assert period_start(NEW_YEARS_EVE, "month", ahead=False) == (NEW_YEARS_EVE, "month")


# ------------------------------------------------------------------ sentences (en)


@pytest.mark.parametrize(
    ("text", "today", "expected"),
    [
        ("on 2024-09-17", WEDNESDAY, ["2024-09-17"]),
        ("on 2023-02-29", WEDNESDAY, []),  # no such day
        ("on 3/4", WEDNESDAY, ["2025-03-04"]),
        ("on 12/31/24", WEDNESDAY, ["2024-12-31"]),
        ("March 3", NEW_YEARS_EVE, ["2025-03-03"]),
        ("3rd of March", WEDNESDAY, ["2025-03-03"]),
        ("Dec 28 - 30", WEDNESDAY, ["2025-12-28", "2025-12-30"]),
        ("in 2026", WEDNESDAY, ["2026-01-01"]),
        ("in March", NEW_YEARS_EVE, ["2025-03-01"]),
        ("next Friday", WEDNESDAY, ["2025-01-10"]),
        ("this Wednesday", WEDNESDAY, ["2025-01-08"]),
        ("Friday next week", WEDNESDAY, ["2025-01-17"]),
        ("Friday after next", WEDNESDAY, ["2025-01-17"]),
        ("the day after tomorrow", NEW_YEARS_EVE, ["2025-01-02"]),
        ("tmrw", NEW_YEARS_EVE, ["2025-01-01"]),
        ("the 15th", date(2024, 12, 20), ["2025-01-15"]),
        ("the 31st of next month", date(2025, 1, 8), ["2025-02-01"]),  # no 31 February
        ("next month", NEW_YEARS_EVE, ["2025-01-01"]),
        ("next year", NEW_YEARS_EVE, ["2025-01-01"]),
        ("in a couple of weeks", NEW_YEARS_EVE, ["2025-01-14"]),
        ("in 2 months", date(2024, 12, 31), ["2025-02-28"]),  # calendar months, clamped
        ("3 days from now", NEW_YEARS_EVE, ["2025-01-03"]),
        ("I may go", WEDNESDAY, []),  # the verb, not the month
        ("on Sepember 5", WEDNESDAY, []),  # a misspelt month is no month
    ],
)
def test_english_stamps(text: str, today: date, expected: list[str]) -> None:
    assert _days(text, today) == expected


def test_english_past_dates_look_back() -> None:
    assert _days("born on March 3", WEDNESDAY, past=True) == ["2024-03-03"]
    assert _days("expired in March", WEDNESDAY, past=True) == ["2024-03-01"]


def test_english_when_settles_ranges_and_clocks() -> None:
    now = datetime(2024, 12, 30, 18, 0, tzinfo=UTC)
    when = english_when("from Dec 31 returning Jan 3", now)
    assert when is not None and (when.start, when.end) == (date(2024, 12, 31), date(2025, 1, 3))
    when = english_when("at 9am", now)  # already past today: tomorrow
    assert when is not None and (when.start, when.at) == (date(2024, 12, 31), time(9))
    assert [c.at for c in english_clocks("2:30 p.m. or at 14:00, or noon")] == [
        time(14, 30),
        time(14),
        time(12),
    ]
    assert english_when("no dates here", now) is None


# ------------------------------------------------------------------ sentences (ko)


@pytest.mark.parametrize(
    ("text", "today", "expected"),
    [
        ("2024년 9월 17일", WEDNESDAY, ["2024-09-17"]),
        ("2024.02.30", WEDNESDAY, []),
        ("3월 5일", NEW_YEARS_EVE, ["2025-03-05"]),
        ("12월 30일부터 1월 2일까지", date(2024, 12, 1), ["2024-12-30", "2025-01-02"]),
        ("내년 3월", NEW_YEARS_EVE, ["2025-03-01"]),
        ("다음 해 3월", NEW_YEARS_EVE, ["2025-03-01"]),
        ("3월에", NEW_YEARS_EVE, ["2025-03-01"]),
        ("15일에", date(2024, 12, 20), ["2025-01-15"]),
        ("내일 모레", NEW_YEARS_EVE, ["2025-01-02"]),
        ("글피", NEW_YEARS_EVE, ["2025-01-03"]),
        ("금요일에", WEDNESDAY, ["2025-01-10"]),
        ("다음 주 금요일", WEDNESDAY, ["2025-01-17"]),
        ("다다음주 월요일", WEDNESDAY, ["2025-01-20"]),
        ("이번 주 월요일", WEDNESDAY, ["2025-01-06"]),
        ("이번 주말", SUNDAY, ["2024-09-22"]),
        ("다음 달", NEW_YEARS_EVE, ["2025-01-01"]),
        ("내년", NEW_YEARS_EVE, ["2025-01-01"]),
        ("3개월 후", NEW_YEARS_EVE, ["2025-03-31"]),  # Korean counts a month as 30 days
        ("2주 뒤", NEW_YEARS_EVE, ["2025-01-14"]),
    ],
)
def test_korean_stamps(text: str, today: date, expected: list[str]) -> None:
    assert [s.day.isoformat() for s in korean_stamps(text, today)] == expected


def test_korean_when_and_clocks() -> None:
    now = datetime(2024, 12, 31, 10, 0, tzinfo=UTC)
    when = korean_when("1월 3일 오후 3시 반", now)
    assert when is not None and (when.start, when.at) == (date(2025, 1, 3), time(15, 30))
    assert [c.at for c in korean_clocks("오전 12시, 3시, 밤 9시, 정오")] == [
        time(0),
        time(15),
        time(21),
        time(12),
    ]


# ------------------------------------------------- queries share the same arithmetic


def _range(query: str, now: datetime) -> tuple[str, str]:
    hint = parse_time_hint(query, now)
    assert hint is not None and hint.start is not None and hint.end is not None, query
    return hint.start.isoformat(), hint.end.isoformat()


def test_query_ranges_at_month_and_year_ends() -> None:
    now = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)  # a Wednesday
    assert _range("last month", now) == (
        "2024-12-01T00:00:00+00:00",
        "2024-12-31T23:59:59.999999+00:00",
    )
    assert _range("last year", now)[0] == "2024-01-01T00:00:00+00:00"
    assert _range("지난주", now)[0] == "2024-12-23T00:00:00+00:00"
    assert _range("last Wednesday", now)[0] == "2024-12-25T00:00:00+00:00"
    assert _range("in February", datetime(2024, 3, 1, tzinfo=UTC))[1].startswith("2024-02-29")
    assert _range("그저께", now)[0] == "2024-12-30T00:00:00+00:00"


def test_query_weekend_and_fact_weekend_agree_on_a_sunday() -> None:
    now = datetime.combine(SUNDAY, time(12), tzinfo=UTC)
    assert _range("this weekend", now)[0] == "2024-09-21T00:00:00+00:00"
    assert _range("last weekend", now)[0] == "2024-09-14T00:00:00+00:00"
    assert _days("this weekend", SUNDAY) == [SUNDAY.isoformat()]  # a plan: from today on


def test_query_time_is_taken_in_utc() -> None:
    late = datetime.fromisoformat("2024-09-18T07:00:00+09:00")  # 22:00 UTC the day before
    assert _range("yesterday", late)[0] == "2024-09-16T00:00:00+00:00"
    assert _range("yesterday", datetime(2024, 9, 18, 7))[0] == "2024-09-17T00:00:00+00:00"


def test_timeparse_is_the_engine() -> None:
    assert timeparse.parse_timestamp is parse_timestamp
    assert parse_timestamp("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_timestamp("2024-09-15T10:00:00+09:00").hour == 1
