"""English dates and times of day in a sentence, resolved *forward* from the message date
("March 3" or "Friday" in a plan is the next such day, not the last one) unless ``past``
(a birthday, an expiry already gone)."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from madeleine.text.dates.arithmetic import (
    add_months,
    day_of_month,
    nearest_weekday,
    period_start,
    safe_date,
    shift_month,
    upcoming_day,
    upcoming_month,
    weekday_in_week,
)
from madeleine.text.dates.mentions import Clock, Stamp, When, clean_stamps, settle
from madeleine.text.dates.words import (
    DAY_OFFSETS,
    MONTH_NAMES,
    MONTHS,
    UNIT_DAYS,
    WEEKDAYS,
    count,
    spaced,
)

_MON = rf"(?P<mon>{MONTH_NAMES})\.?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>(?:19|20)\d{2})"
_NUM = (
    r"(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|a\s+couple\s+of|couple\s+of|a\s+few|few)"
)
_WEEKDAY_STEMS = "|".join(name.removesuffix("day") for name in WEEKDAYS)

_ISO = re.compile(r"(?<![\d-])(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d-])")
_NUMERIC = re.compile(
    r"(?:\bon\s+(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?"
    r"|(?<![\d/])(?P<m2>\d{1,2})/(?P<d2>\d{1,2})/(?P<y2>\d{4}))(?![\d/])",
    re.I,
)
_MONTH_DAY_RANGE = re.compile(
    rf"\b{_MON}\s+(?P<d>\d{{1,2}}){_ORD}\s*(?:-|–|—|to|through|thru|until|till)\s*"
    rf"(?P<d2>\d{{1,2}}){_ORD}\b(?!\s*(?::|am\b|pm\b|a\.m|p\.m))(?:,?\s+{_YEAR})?",
    re.I,
)
_MONTH_DAY = re.compile(
    rf"\b{_MON}\s+(?P<d>\d{{1,2}}){_ORD}\b(?!\s*(?::\d|am\b|pm\b|a\.m|p\.m|%))"
    rf"(?:,?\s+{_YEAR}\b)?",
    re.I,
)
_DAY_MONTH = re.compile(
    rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON}(?![a-z])(?:,?\s+{_YEAR}\b)?", re.I
)
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}\b", re.I)
_YEAR_ONLY = re.compile(
    rf"\b(?:in|by|until|till|through|during|since)\s+{_YEAR}\b(?!\s*[-/])", re.I
)
_MONTH_ONLY = re.compile(
    r"\b(?:in|during|by|until|till|through|this|next|coming|early|late|mid|end\s+of"
    rf"|beginning\s+of|start\s+of)\s*-?\s*(?:early\s+|late\s+|mid-?\s*)?{_MON}(?![a-z])"
    r"(?!\s*\d)",
    re.I,
)
_DAY_OF_MONTH = re.compile(
    rf"\bthe\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{_MON})(?:\s+of\s+"
    r"(?P<which>this|next)\s+month)?",
    re.I,
)
_DAY_WORD = re.compile(
    r"\b(?P<w>the\s+day\s+after\s+tomorrow|today|tonight|tomorrow|tmrw|tmr)\b", re.I
)
_WEEKDAY = re.compile(
    r"(?<!last\s)(?<!past\s)(?<!previous\s)\b(?:(?P<q>next\s+week(?:\s+on)?|this\s+coming"
    rf"|next|this|coming|on)\s+)?(?P<wd>{_WEEKDAY_STEMS})day\b"
    r"(?:\s+(?P<after>next\s+week|after\s+next|of\s+next\s+week))?",
    re.I,
)
_PERIOD = re.compile(r"\b(?P<q>next|this|coming)\s+(?P<u>week|weekend|month|year)\b", re.I)
_IN_N = re.compile(
    rf"\b(?:in\s+{_NUM}\s+(?P<u>day|week|month)s?\b|{_NUM.replace('<n>', '<n2>')}\s+"
    r"(?P<u2>day|week|month)s?\s+from\s+(?:now|today)\b)",
    re.I,
)

_CLOCK_AMPM = re.compile(
    r"(?<![\d:])(?P<h>\d{1,2})(?::(?P<mi>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?![a-z])", re.I
)
_CLOCK_24 = re.compile(r"\bat\s+(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)\b", re.I)
_CLOCK_BARE = re.compile(
    r"\bat\s+(?P<h>\d{1,2})(?:\s*o'clock\b|(?=\s*(?:$|[,.;!?]|\s(?:on|tomorrow|today|tonight"
    r"|next|this|in|with|for|and)\b)))",
    re.I,
)
_CLOCK_WORD = re.compile(r"\b(?P<w>noon|midday|midnight)\b", re.I)

# what between two dates makes the second one the end ("May 3 to May 7", "returning on …")
EN_RANGE = re.compile(
    r"^\s*(?:-|–|—|to|until|till|through|thru|and)\s*$|\b(?:return\w*|back|until|till"
    r"|through|thru|coming\s+back|flying\s+back|home)\b",
    re.I,
)


def _month(raw: str) -> int:
    return MONTHS[raw.lower().rstrip(".")]


def _may_is_a_verb(match: re.Match[str]) -> bool:
    """Lower-case "may" is the verb ("I may go"); only "May" names the month."""
    raw: str = match.group("mon")
    return raw.lower() == "may" and not raw.startswith("M")


def _year_of(raw: str | None) -> int | None:
    if raw is None:
        return None
    year = int(raw)
    return year + 2000 if year < 100 else year


def _calendar_day(today: date, month: int, day: int, year: int | None, past: bool) -> date | None:
    if year is not None:
        return safe_date(year, month, day)
    return upcoming_day(today, month, day, past)


def english_stamps(text: str, today: date, past: bool = False) -> list[Stamp]:
    """Every date expression of an English sentence, resolved against ``today``."""
    found: list[Stamp] = []
    for match in _ISO.finditer(text):
        day = safe_date(int(match["y"]), int(match["m"]), int(match["d"]))
        if day is not None:
            found.append(Stamp(match.start(), match.end(), day, "day", True))
    for match in _NUMERIC.finditer(text):
        month, dom = int(match["m"] or match["m2"]), int(match["d"] or match["d2"])
        year = _year_of(match["y"] or match["y2"])
        if 1 <= month <= 12 and (day := _calendar_day(today, month, dom, year, past)):
            found.append(Stamp(match.start(), match.end(), day, "day", year is not None))
    for match in _MONTH_DAY_RANGE.finditer(text):
        if _may_is_a_verb(match):
            continue
        month, year = _month(match["mon"]), _year_of(match["y"])
        first = _calendar_day(today, month, int(match["d"]), year, past)
        if first is None:
            continue
        second = safe_date(first.year, month, int(match["d2"]))
        found.append(Stamp(match.start(), match.end("d"), first, "day", year is not None))
        if second is not None:
            found.append(Stamp(match.start("d2"), match.end(), second, "day", year is not None))
    for pattern in (_MONTH_DAY, _DAY_MONTH):
        for match in pattern.finditer(text):
            if _may_is_a_verb(match):
                continue
            year = _year_of(match["y"])
            day = _calendar_day(today, _month(match["mon"]), int(match["d"]), year, past)
            if day is not None:
                found.append(Stamp(match.start(), match.end(), day, "day", year is not None))
    for match in _MONTH_YEAR.finditer(text):
        if not _may_is_a_verb(match):
            start = date(int(match["y"]), _month(match["mon"]), 1)
            found.append(Stamp(match.start(), match.end(), start, "month", True))
    for match in _YEAR_ONLY.finditer(text):
        found.append(Stamp(match.start(), match.end(), date(int(match["y"]), 1, 1), "year", True))
    for match in _MONTH_ONLY.finditer(text):
        if not _may_is_a_verb(match):
            start = upcoming_month(today, _month(match["mon"]), past)
            found.append(Stamp(match.start(), match.end(), start, "month"))
    found.extend(_relative_stamps(text, today, past))
    return clean_stamps(found)


def _relative_stamps(text: str, today: date, past: bool) -> list[Stamp]:
    found: list[Stamp] = []
    for match in _DAY_OF_MONTH.finditer(text):
        dom = int(match["d"])
        if match["which"] == "next":
            day = safe_date(*shift_month(today.year, today.month, 1), dom)
        else:
            day = day_of_month(today, dom, past)
        if day is not None:
            found.append(Stamp(match.start(), match.end(), day))
    for match in _DAY_WORD.finditer(text):
        offset = DAY_OFFSETS[spaced(match["w"])]
        found.append(Stamp(match.start(), match.end(), today + timedelta(days=offset)))
    for match in _WEEKDAY.finditer(text):
        weekday = WEEKDAYS[f"{match['wd'].lower()}day"]
        which = spaced(match["q"] or "")
        after = (match["after"] or "").lower()
        if which.startswith("next week") or "next week" in after:
            day = weekday_in_week(today, 1, weekday)
        else:
            strict = which not in ("this", "coming", "this coming")
            day = nearest_weekday(today, weekday, strict=strict)
            if after == "after next":
                day += timedelta(days=7)
        found.append(Stamp(match.start(), match.end(), day))
    for match in _PERIOD.finditer(text):
        ahead = match["q"].lower() != "this"
        day, precision = period_start(today, match["u"].lower(), ahead)
        found.append(Stamp(match.start(), match.end(), day, precision))
    for match in _IN_N.finditer(text):
        amount = count(match["n"] or match["n2"])
        unit = (match["u"] or match["u2"]).lower()
        if unit == "month":  # "in 3 months": calendar months, not 90 days
            day = add_months(today, amount)
        else:
            day = today + timedelta(days=amount * UNIT_DAYS[unit])
        found.append(Stamp(match.start(), match.end(), day))
    return found


def english_clocks(text: str) -> list[Clock]:
    """Times of day ("at 2pm", "2:30 p.m.", "at 14:00", "at 10", "noon")."""
    found: list[Clock] = []
    for match in _CLOCK_AMPM.finditer(text):
        hour, minute = int(match["h"]), int(match["mi"] or 0)
        if 1 <= hour <= 12:
            hour = hour % 12 + (12 if match["ap"].lower().startswith("p") else 0)
            found.append(Clock(match.start(), match.end(), time(hour, minute)))
    for match in _CLOCK_24.finditer(text):
        found.append(Clock(match.start(), match.end(), time(int(match["h"]), int(match["mi"]))))
    for match in _CLOCK_BARE.finditer(text):
        hour = int(match["h"])
        if 1 <= hour <= 12:  # "at 3" for an appointment is 3 pm; "at 9" is 9 am
            found.append(Clock(match.start(), match.end(), time(hour + 12 if hour < 8 else hour)))
    for match in _CLOCK_WORD.finditer(text):
        hour = 0 if match["w"].lower() == "midnight" else 12
        found.append(Clock(match.start(), match.end(), time(hour)))
    found.sort(key=lambda c: c.start)
    kept: list[Clock] = []
    for clock in found:
        if not kept or clock.start >= kept[-1].end:
            kept.append(clock)
    return kept


def english_when(text: str, now: datetime, past: bool = False) -> When | None:
    today = now.date()
    return settle(english_stamps(text, today, past), english_clocks(text), text, now, EN_RANGE)
