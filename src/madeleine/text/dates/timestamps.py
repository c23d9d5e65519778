"""User-supplied timestamps as timezone-aware UTC datetimes: everything stored or compared is
UTC, so naive input is taken as UTC rather than as the machine's local time."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from madeleine.inputs import shown_number
from madeleine.text.dates.words import MONTHS

_LOCOMO_STYLE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)
# Epoch seconds accepted: 1900-01-01 .. 2200-01-01.
_MIN_EPOCH = -2_208_988_800.0
_MAX_EPOCH = 7_258_118_400.0


def parse_timestamp(value: object, argument: str = "timestamp") -> datetime:
    """Accept a datetime, an ISO-8601 string, a "1:56 pm on 8 May, 2023" string or epoch seconds.

    Naive values are taken as UTC. Raises ``TypeError``/``ValueError`` naming ``argument``.
    """
    if isinstance(value, datetime):
        return _in_range(value, argument, value)
    if isinstance(value, bool):
        raise TypeError(
            f"{argument} must be a datetime, ISO-8601 string or epoch seconds, got bool"
        )
    if isinstance(value, int | float):
        if not _MIN_EPOCH <= value <= _MAX_EPOCH:  # NaN fails; 10**400 is compared, not float()ed
            raise ValueError(f"{argument} epoch seconds out of range: {shown_number(value)}")
        return datetime.fromtimestamp(float(value), tz=UTC)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError(f"{argument} is an empty string")
        try:
            parsed_iso = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            parsed_iso = None
        if parsed_iso is not None:
            return _in_range(parsed_iso, argument, value)
        parsed = _parse_spoken(text)
        if parsed is not None:
            return _in_range(parsed, argument, value)
        raise ValueError(
            f"{argument} is not a valid timestamp: {value!r} "
            "(use ISO-8601 such as '2024-09-15T10:00:00' or epoch seconds)"
        )
    raise TypeError(
        f"{argument} must be a datetime, ISO-8601 string or epoch seconds, "
        f"got {type(value).__name__}"
    )


def _in_range(moment: datetime, argument: str, raw: object) -> datetime:
    """The same window as epoch seconds (1900–2200): a moment at the edge of the calendar
    ("0001-01-01T00:00:00+14:00") cannot even be converted to UTC."""
    try:
        utc = to_utc(moment)
        seconds = utc.timestamp()
    except (OverflowError, ValueError):
        seconds = math.nan
    if not _MIN_EPOCH <= seconds <= _MAX_EPOCH:
        raise ValueError(f"{argument} is out of range (1900 to 2200): {raw!r}")
    return utc


def to_epoch(moment: datetime) -> float:
    return to_utc(moment).timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def to_utc(moment: datetime) -> datetime:
    """The moment in UTC; a naive one is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _parse_spoken(text: str) -> datetime | None:
    match = _LOCOMO_STYLE.match(text)
    if not match:
        return None
    hour, minute, meridiem, day, month_name, year = match.groups()
    month = MONTHS.get(month_name.lower())
    if month is None:
        return None
    hour_24 = int(hour) % 12 + (12 if meridiem.lower() == "pm" else 0)
    try:
        return datetime(int(year), month, int(day), hour_24, int(minute), tzinfo=UTC)
    except ValueError:
        return None
