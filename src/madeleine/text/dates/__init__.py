"""The date engine: calendar words, calendar arithmetic and the parsers of dates in English
and Korean text, shared by the fact rules (``madeleine.facts.rules``), the query time hints
(``madeleine.text.temporal``) and timestamp input (``madeleine.text.timeparse``).

``words`` holds the tables, ``arithmetic`` the day computations, ``english`` / ``korean`` the
surface forms of a sentence, ``mentions`` how those settle into one "when", ``timestamps``
the parsing of timestamps given by callers.
"""

from madeleine.text.dates.arithmetic import (
    add_months,
    day_of_month,
    month_end,
    month_start,
    nearest_weekday,
    period_start,
    safe_date,
    shift_month,
    upcoming_day,
    upcoming_month,
    week_monday,
    weekday_in_week,
    weekend_start,
)
from madeleine.text.dates.english import EN_RANGE, english_clocks, english_stamps, english_when
from madeleine.text.dates.korean import KO_RANGE, korean_clocks, korean_stamps, korean_when
from madeleine.text.dates.mentions import Clock, Stamp, When, clean_stamps, settle
from madeleine.text.dates.timestamps import from_epoch, parse_timestamp, to_epoch, to_utc
from madeleine.text.dates.words import (
    DAY_OFFSETS,
    KO_WEEKDAYS,
    MONTH_NAMES,
    MONTHS,
    NUMBER_WORDS,
    UNIT_DAYS,
    WEEKDAYS,
    YEAR_OFFSETS,
    count,
    spaced,
    squeezed,
)

__all__ = [
    "DAY_OFFSETS",
    "EN_RANGE",
    "KO_RANGE",
    "KO_WEEKDAYS",
    "MONTHS",
    "MONTH_NAMES",
    "NUMBER_WORDS",
    "UNIT_DAYS",
    "WEEKDAYS",
    "YEAR_OFFSETS",
    "Clock",
    "Stamp",
    "When",
    "add_months",
    "clean_stamps",
    "count",
    "day_of_month",
    "english_clocks",
    "english_stamps",
    "english_when",
    "from_epoch",
    "korean_clocks",
    "korean_stamps",
    "korean_when",
    "month_end",
    "month_start",
    "nearest_weekday",
    "parse_timestamp",
    "period_start",
    "safe_date",
    "settle",
    "shift_month",
    "spaced",
    "squeezed",
    "to_epoch",
    "to_utc",
    "upcoming_day",
    "upcoming_month",
    "week_monday",
    "weekday_in_week",
    "weekend_start",
]
