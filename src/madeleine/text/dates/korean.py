"""Korean dates and times of day in a sentence, resolved forward from the message date like
the English ones. Korean writes the parts big to small ("2024년 9월 17일", "오후 3시 반")."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from madeleine.text.dates.arithmetic import (
    day_of_month,
    nearest_weekday,
    period_start,
    safe_date,
    upcoming_day,
    upcoming_month,
    weekday_in_week,
)
from madeleine.text.dates.mentions import Clock, Stamp, When, clean_stamps, settle
from madeleine.text.dates.words import (
    DAY_OFFSETS,
    KO_WEEKDAYS,
    UNIT_DAYS,
    YEAR_OFFSETS,
    squeezed,
)

_FULL = re.compile(
    r"(?P<y>(?:19|20)\d{2})\s*년\s*(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일"
    r"|(?<![\d.])(?P<y2>(?:19|20)\d{2})\s*[.]\s*(?P<m2>\d{1,2})\s*[.]\s*(?P<d2>\d{1,2})(?!\d)"
)
_RANGE = re.compile(
    r"(?<!\d)(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일\s*(?:부터|~|-|–|에서)\s*"
    r"(?:(?P<m2>\d{1,2})\s*월\s*)?(?P<d2>\d{1,2})\s*일"
)
_MONTH_DAY = re.compile(r"(?<![\d년])(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일")
_YEAR_MONTH = re.compile(r"(?P<y>(?:19|20)\d{2})\s*년\s*(?P<m>\d{1,2})\s*월(?!\s*\d)")
_REL_YEAR_MONTH = re.compile(r"(?P<q>내년|올해|다음\s*해)\s*(?P<m>\d{1,2})\s*월(?!\s*\d)")
_MONTH = re.compile(r"(?<![\d년])(?P<m>\d{1,2})\s*월(?!\s*\d)")
_DAY = re.compile(r"(?<![\d월])(?P<d>\d{1,2})\s*일(?=\s*(?:에|날|부터|까지|쯤|경))")
_DAY_WORD = re.compile(r"(?P<w>오늘|내일\s*모레|내일|모레|글피)")
_WEEKDAY = re.compile(
    r"(?:(?P<q>다다음\s*주|다음\s*주|담주|이번\s*주|다음|이번)\s*)?"
    rf"(?P<wd>[{''.join(KO_WEEKDAYS)}])요일"
)
_PERIOD = re.compile(r"(?P<q>다음|이번|담)\s*(?P<u>주말|주|달)|(?P<y>내년)(?!\s*\d{1,2}\s*월)")
_AFTER_N = re.compile(r"(?P<n>\d+)\s*(?P<u>일|주|주일|개월|달)\s*(?:후|뒤)")

# weeks from this one that a weekday's qualifier names; none: the next such day
_WEEK_OF = {"다음주": 1, "담주": 1, "다다음주": 2, "이번주": 0, "이번": 0}
_PERIOD_UNITS = {"주": "week", "주말": "weekend", "달": "month"}

_CLOCK = re.compile(
    r"(?P<ap>오전|오후|아침|저녁|밤|낮|새벽)?\s*(?P<h>\d{1,2})\s*시(?!간)"
    r"(?:\s*(?P<mi>\d{1,2})\s*분|\s*(?P<half>반))?"
)
_NOON = re.compile(r"정오")

# what between two dates makes the second one the end ("3월 5일부터 7일까지", "… 귀국")
KO_RANGE = re.compile(r"^\s*(?:부터|에서)?\s*(?:~|-|–|부터)?\s*$|까지|돌아|귀국|복귀")


def korean_stamps(text: str, today: date, past: bool = False) -> list[Stamp]:
    """Every Korean date expression of a sentence, resolved against ``today``."""
    found: list[Stamp] = []
    for match in _FULL.finditer(text):
        year, month = match["y"] or match["y2"], match["m"] or match["m2"]
        dom = match["d"] or match["d2"]
        day = safe_date(int(year), int(month), int(dom))
        if day is not None:
            found.append(Stamp(match.start(), match.end(), day, "day", True))
    for match in _RANGE.finditer(text):
        first = upcoming_day(today, int(match["m"]), int(match["d"]), past)
        if first is None:
            continue
        end_month = int(match["m2"] or match["m"])
        second = safe_date(first.year + (end_month < first.month), end_month, int(match["d2"]))
        found.append(Stamp(match.start(), match.end("d") + 1, first))
        if second is not None:
            start = match.start("m2") if match["m2"] else match.start("d2")
            found.append(Stamp(start, match.end(), second))
    for match in _MONTH_DAY.finditer(text):
        day = upcoming_day(today, int(match["m"]), int(match["d"]), past)
        if day is not None:
            found.append(Stamp(match.start(), match.end(), day))
    for match in _YEAR_MONTH.finditer(text):
        if 1 <= int(match["m"]) <= 12:
            first = date(int(match["y"]), int(match["m"]), 1)
            found.append(Stamp(match.start(), match.end(), first, "month", True))
    for match in _REL_YEAR_MONTH.finditer(text):
        if 1 <= int(match["m"]) <= 12:
            year = today.year + YEAR_OFFSETS[squeezed(match["q"])]
            found.append(Stamp(match.start(), match.end(), date(year, int(match["m"]), 1), "month"))
    for match in _MONTH.finditer(text):
        if 1 <= int(match["m"]) <= 12:
            month = upcoming_month(today, int(match["m"]), past)
            found.append(Stamp(match.start(), match.end(), month, "month"))
    found.extend(_relative(text, today, past))
    return clean_stamps(found)


def _relative(text: str, today: date, past: bool) -> list[Stamp]:
    found: list[Stamp] = []
    for match in _DAY.finditer(text):
        day = day_of_month(today, int(match["d"]), past)
        if day is not None:
            found.append(Stamp(match.start(), match.end(), day))
    for match in _DAY_WORD.finditer(text):
        offset = DAY_OFFSETS[squeezed(match["w"])]
        found.append(Stamp(match.start(), match.end(), today + timedelta(days=offset)))
    for match in _WEEKDAY.finditer(text):
        weekday = KO_WEEKDAYS[match["wd"]]
        weeks = _WEEK_OF.get(squeezed(match["q"] or ""))
        if weeks is None:  # "금요일에" / "다음 금요일": the next one
            day = nearest_weekday(today, weekday)
        else:  # "다음 주 금요일": the Friday of next week
            day = weekday_in_week(today, weeks, weekday)
        found.append(Stamp(match.start(), match.end(), day))
    for match in _PERIOD.finditer(text):
        if match["y"]:
            day, precision = period_start(today, "year", ahead=True)
        else:
            unit = _PERIOD_UNITS[match["u"]]
            day, precision = period_start(today, unit, ahead=match["q"] != "이번")
        found.append(Stamp(match.start(), match.end(), day, precision))
    for match in _AFTER_N.finditer(text):
        days = int(match["n"]) * UNIT_DAYS[match["u"]]
        found.append(Stamp(match.start(), match.end(), today + timedelta(days=days)))
    return found


def korean_clocks(text: str) -> list[Clock]:
    """Times of day ("오후 2시", "오전 10시 30분", "3시 반", "정오")."""
    found: list[Clock] = []
    for match in _CLOCK.finditer(text):
        hour = int(match["h"])
        minute = 30 if match["half"] else int(match["mi"] or 0)
        if not (0 <= hour <= 24 and minute < 60):
            continue
        marker = match["ap"]
        if marker in ("오후", "저녁", "밤") and hour < 12:
            hour += 12
        elif marker in ("오전", "새벽", "아침") and hour == 12:
            hour = 0
        elif marker is None and 1 <= hour < 8:  # "3시에 치과": afternoon
            hour += 12
        found.append(Clock(match.start(), match.end(), time(hour % 24, minute)))
    for match in _NOON.finditer(text):
        found.append(Clock(match.start(), match.end(), time(12)))
    return sorted(found, key=lambda c: c.start)


def korean_when(text: str, now: datetime, past: bool = False) -> When | None:
    today = now.date()
    return settle(korean_stamps(text, today, past), korean_clocks(text), text, now, KO_RANGE)
