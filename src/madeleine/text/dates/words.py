"""Calendar words of English and Korean, as tables: the parsers of both languages and the
query hints read one copy, so "next Friday" and "지난 금요일" count from the same weekday
numbers and "a few days" is three days everywhere."""

from __future__ import annotations

import re

# Month names and abbreviations -> month number.
MONTHS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
# A regex alternation of the month names, longest first so "june" is not read as "jun".
MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))

WEEKDAYS: dict[str, int] = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
KO_WEEKDAYS: dict[str, int] = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}

# Counted words in relative expressions ("three weeks ago", "in a couple of days").
NUMBER_WORDS: dict[str, int] = {
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
# Days in a counted unit; a month is 30 days unless the caller does calendar months.
UNIT_DAYS: dict[str, int] = {
    "day": 1,
    "week": 7,
    "month": 30,
    "year": 365,
    "일": 1,
    "주": 7,
    "주일": 7,
    "달": 30,
    "개월": 30,
    "년": 365,
}
# Days from today named by a word; English keys are spaced(), Korean keys squeezed().
DAY_OFFSETS: dict[str, int] = {
    "yesterday": -1,
    "last night": -1,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "tmrw": 1,
    "tmr": 1,
    "the day after tomorrow": 2,
    "그저께": -2,
    "그제": -2,
    "어제": -1,
    "오늘": 0,
    "내일": 1,
    "모레": 2,
    "내일모레": 2,
    "글피": 3,
}
# Years from this one named by a Korean word (keys squeezed()).
YEAR_OFFSETS: dict[str, int] = {"재작년": -2, "작년": -1, "올해": 0, "내년": 1, "다음해": 1}


def spaced(raw: str) -> str:
    """An English phrase as the tables key it: lower case, single spaces."""
    return re.sub(r"\s+", " ", raw.lower())


def squeezed(raw: str) -> str:
    """A Korean phrase as the tables key it: spacing varies ("다음 주", "다음주"), so none."""
    return re.sub(r"\s+", "", raw)


def count(raw: str) -> int:
    """The number a counted word or digits stand for; an unknown word counts as one."""
    word = spaced(raw)
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 1)
