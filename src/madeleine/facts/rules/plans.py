"""Builders for dated facts: appointments, trips and when identity documents expire. They
read the sentence's dates through the date engine, forward from the message time."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime

from madeleine.facts.cards import AttributeType
from madeleine.facts.rules import en_words, ko
from madeleine.facts.rules.common import (
    HANGUL,
    TIME_WORDS,
    Builder,
    Fact,
    Said,
    attr,
    attribute_value,
    refer_to,
    slug,
    subject_of,
)
from madeleine.facts.rules.items import place_of
from madeleine.text.dates import month_end

# a sentence that cancels a plan does not also make one ("I cancelled my trip to Lisbon")
CANCELLED = re.compile(r"\bcancel|\bcalled\s+off\b|\bscrapped\b|취소|캔슬", re.I)
_NOT_WHAT = frozenset("to lot few some of no any been got a an the this that".split())
_RESCHEDULED = re.compile(
    r"\b(?:moved|rescheduled|pushed|changed|postponed)\b.*?\bto\b|(?:으로|로)\s*(?:바뀌|변경|옮)",
    re.I,
)


def _build_appointment(match: re.Match[str], said: Said) -> list[Fact]:
    groups = match.groupdict()
    tail = said.text[match.start() :]
    moved = _RESCHEDULED.search(tail)
    when = said.when(tail[moved.end() :]) if moved else None
    when = when or said.when(tail) or said.when()
    if when is None or when.start < said.now.date():
        return []
    if CANCELLED.search(_clause(said.text, match)):
        return []  # the cancellation row files it
    if said.korean and HANGUL.search(match.group(0)):
        key, title = _korean_appointment(groups)
    else:
        found = _english_appointment(groups)
        if found is None:
            return []
        key, title = found
    start = when.start_value(said.now)
    kind: AttributeType = "datetime" if isinstance(start, datetime) else "date"
    attributes = [attr("title", title), attr("start", start.isoformat(), kind)]
    subject, relationship = subject_of(match, said)
    return [
        Fact(
            "appointment",
            f"plan.appointment.{slug(key)}",
            f"{refer_to(subject or 'user', relationship)} has {title} on {_spoken(start)}.",
            tuple(attributes),
            subject or "user",
            relationship,
        )
    ]


def _english_appointment(groups: Mapping[str, str | None]) -> tuple[str, str] | None:
    what = re.sub(r"'s\b", "", (groups.get("what") or "").strip().lower())
    if any(w in _NOT_WHAT for w in what.split()):
        return None
    noun = (groups.get("noun") or "").lower().replace("appt", "appointment").replace("-", "")
    who = re.sub(r"^(?:the|my|a|an)\s+", "", (groups.get("with") or "").strip(" .,"), flags=re.I)
    if not noun:  # "I'm seeing the dentist", "I'm getting a haircut"
        return (who or what), (f"{who.lower()} appointment" if who else what)
    if noun == "appointment":
        key = what or who.lower() or "appointment"
        title = f"{what} appointment" if what else f"appointment with {who}" if who else noun
        return key, title
    if what:
        return f"{what} {noun}", f"{what} {noun}" + (f" with {who}" if who else "")
    return (f"{noun} {who}" if who else noun), (f"{noun} with {who}" if who else noun)


def _korean_appointment(groups: Mapping[str, str | None]) -> tuple[str, str]:
    what = groups.get("what") or ""
    if TIME_WORDS.search(what):
        what = ""
    noun = re.sub(r"\s+", " ", groups.get("noun") or "")
    place = ko.APPOINTMENT_PLACES.get(what)
    title = f"{what} {noun}".strip()
    if place is not None:
        return place, title
    noun_key = ko.APPOINTMENT_NOUNS.get(noun) or ko.APPOINTMENT_NOUNS.get(noun.replace(" ", ""))
    if what:
        return f"{what} {noun_key or noun}", title
    return noun_key or noun, title


def _spoken(moment: date | datetime) -> str:
    if isinstance(moment, datetime):
        return moment.isoformat(sep=" ", timespec="minutes")
    return moment.isoformat()


_FLIGHT = re.compile(
    r"\bfl(?:y|ying|ight|ights|ew)\b|\bplane\b|\bair(?:fare|line)\b|비행|항공", re.I
)
_MODES = (
    (_FLIGHT, "flight"),
    (re.compile(r"\b(?:train|rail)\b|기차|KTX|SRT", re.I), "train"),
    (re.compile(r"\bbus\b|버스", re.I), "bus"),
    (re.compile(r"\bferry\b|페리|배편", re.I), "ferry"),
    (re.compile(r"\b(?:driving|drive|car|road\s+trip)\b|차\s*타고|운전", re.I), "car"),
)
_TRAVEL_BOOKINGS = re.compile(
    r"hotel|accommodation|trip|vacation|holiday|getaway|cruise|honeymoon|rental|여행|숙소|호텔",
    re.I,
)
_TRAVEL_VERBS = frozenset({"flying", "fly", "travelling", "traveling", "travel", "be flying"})


_PAST_TRIP = re.compile(
    r"\b(?:last\s+(?:year|month|week|weekend|summer|winter|spring|fall|autumn|night|time"
    r"|\w+day)|ago|yesterday|this\s+past|went|was|were|took|had|got\s+back|came\s+back"
    r"|returned|visited|snapped|loved|enjoyed)\b|지난|작년|어제|그저께|다녀왔|갔었|갔다|갔어",
    re.I,
)


def _clause(text: str, match: re.Match[str]) -> str:
    """The clause around a match: between the commas, semicolons or "but"s that bound it."""
    separators = (",", ";", " but ", " though ")
    start = max(text.rfind(s, 0, match.start()) for s in separators) + 1
    ends = [i for i in (text.find(s, match.end()) for s in separators) if i >= 0]
    return text[start : min(ends) if ends else len(text)]


def _build_trip(match: re.Match[str], said: Said) -> list[Fact]:
    place = place_of(match["dest"])
    if place is None or _PAST_TRIP.search(_clause(said.text, match)):
        return []  # "on my trip to the UK last Friday": a memory, not a plan
    if CANCELLED.search(_clause(said.text, match)):
        return []  # the cancellation row files it
    destination, country, _is_country = place
    groups = match.groupdict()
    mode_text = " ".join(filter(None, (groups.get("mode"), groups.get("verb"))))
    mode = next((m for p, m in _MODES if p.search(mode_text)), None)
    if mode is None and _FLIGHT.search(said.text):
        mode = "flight"
    booked = _TRAVEL_BOOKINGS.search(groups.get("mode") or "") is not None
    known = country is not None or mode is not None or booked
    if not known and (groups.get("verb") or "").lower() not in _TRAVEL_VERBS:
        return []  # "I'm going to Costco", "tickets to Hamilton": not a trip we can tell
    when = said.when()
    attributes = [attr("destination", destination, "place")]
    if when is not None and when.start >= said.now.date():
        attributes.append(attr("start_date", when.start.isoformat(), "date"))
        if when.end is not None:
            attributes.append(attr("end_date", when.end.isoformat(), "date"))
    if mode is not None:
        attributes.append(attr("travel_mode", mode))
    home = said.home_country or ("South Korea" if said.korean else None)
    if country is not None and home is not None and country == home:
        attributes.append(attr("international", "false"))
    elif mode == "flight" or country is not None:
        attributes.append(attr("international", "true"))
    start = attribute_value(attributes, "start_date")
    end = attribute_value(attributes, "end_date")
    statement = f"The user plans a trip to {destination}"
    statement += f" by {mode}" if mode in ("flight", "train", "bus", "ferry", "car") else ""
    statement += f" from {start}" if start else ""
    statement += f" to {end}" if end else ""
    return [
        Fact(
            "trip",
            f"plan.trip.{slug(destination)}",
            statement + ".",
            tuple(attributes),
        )
    ]


def _build_plan_move(match: re.Match[str], said: Said) -> list[Fact]:
    """ "I'm planning to move to Seoul next month", "다음 달에 서울로 이사 가요": a planned
    move, keyed by where to (``plan.move.seoul``); the home changes only once it happens."""
    place = place_of(match["dest"])
    if place is None or _PAST_TRIP.search(_clause(said.text, match)):
        return []
    if CANCELLED.search(_clause(said.text, match)):
        return []
    destination, country, _is_country = place
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    attributes = [attr("destination", destination, "place"), attr("status", "planned")]
    if country is not None and country != destination:
        attributes.append(attr("country", country, "place"))
    when = said.when()
    statement = f"{refer_to(subject, relationship)} plans to move to {destination}"
    if when is not None and when.start >= said.now.date():
        attributes.append(attr("start_date", when.start.isoformat(), "date"))
        statement += f" around {when.start.isoformat()}"
    return [
        Fact(
            "move",
            f"plan.move.{slug(destination)}",
            statement + ".",
            tuple(attributes),
            subject,
            relationship,
        )
    ]


_PLAN_NOUNS = (
    (
        re.compile(r"^(?:trip|flight|vacation|holiday|visit|여행|출장|휴가|비행기|항공권)$", re.I),
        "trip",
    ),
    (re.compile(r"^(?:move|이사)$", re.I), "move"),
)


_CANCELLED_WITH = re.compile(
    r"\s+(?:with|at)\s+(?:the\s+|my\s+)?(?P<with>(?:dr\.?\s+|doctor\s+)?[A-Za-z][\w'-]*)", re.I
)


def _build_cancel(match: re.Match[str], said: Said) -> list[Fact]:
    """ "We cancelled the trip to Lisbon", "I called off my dentist appointment", "리스본
    여행을 취소했어요": a card of the plan's own key with status cancelled, which closes the
    plan when it is on file."""
    groups = match.groupdict()
    noun = re.sub(r"\s+", " ", (groups.get("noun") or "").strip().lower())
    kind = next((k for p, k in _PLAN_NOUNS if p.search(noun)), "appointment")
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    who = refer_to(subject, relationship)
    if kind in ("trip", "move"):
        place = place_of(groups.get("dest")) or place_of(groups.get("what"))
        if place is None:
            return []
        destination = place[0]
        what = "trip to" if kind == "trip" else "move to"
        return [
            Fact(
                kind,
                f"plan.{kind}.{slug(destination)}",
                f"{who} cancelled the {what} {destination}.",
                (attr("destination", destination, "place"), attr("status", "cancelled")),
                subject,
                relationship,
            )
        ]
    if said.korean and HANGUL.search(match.group(0)):
        key, title = _korean_appointment(groups)
    else:
        after = _CANCELLED_WITH.match(said.text[match.end() :])
        met = after["with"] if after else groups.get("dest")
        found = _english_appointment({**groups, "with": met})
        if found is None:
            return []
        key, title = found
    return [
        Fact(
            "appointment",
            f"plan.appointment.{slug(key)}",
            f"{who} cancelled the {title}.",
            (attr("title", title), attr("status", "cancelled")),
            subject,
            relationship,
        )
    ]


_DOCUMENT_WORDS = (
    (re.compile(r"passport|여권", re.I), "passport"),
    (re.compile(r"driv|licen|운전|면허", re.I), "drivers_license"),
    (re.compile(r"\bid\b|national|신분증", re.I), "id_card"),
    (re.compile(r"visa|비자", re.I), "visa"),
    (re.compile(r"permit|green", re.I), "residence_permit"),
)


def _build_document(match: re.Match[str], said: Said) -> list[Fact]:
    """An identity document's expiry; a month alone ("in February 2025") means its last
    day, a year alone its 31 December — the latest day the document can still be valid."""
    raw = match["doc"]
    kind = next((k for p, k in _DOCUMENT_WORDS if p.search(raw)), "passport")
    expired = re.search(r"\bexpired\b|만료됐|만료되었", match.group(0), re.I) is not None
    when = said.when(said.text[match.start() :], past=expired) or said.when(past=expired)
    if when is None:
        return []
    expires = when.start
    if when.precision == "month":
        expires = month_end(expires.year, expires.month)
    elif when.precision == "year":
        expires = date(expires.year, 12, 31)
    attributes = [attr("expires_on", expires.isoformat(), "date")]
    nation = (match.groupdict().get("nation") or "").lower()
    if nation in en_words.DEMONYMS:
        attributes.append(attr("country", en_words.DEMONYMS[nation], "place"))
    words = kind.replace("_", " ").replace("drivers", "driver's")
    return [
        Fact(
            "document",
            f"identity.{kind}",
            f"The user's {words} expires on {expires.isoformat()}.",
            tuple(attributes),
        )
    ]


BUILDERS: dict[str, Builder] = {
    "appointment": _build_appointment,
    "trip": _build_trip,
    "trip_request": _build_trip,
    "document": _build_document,
    "plan_move": _build_plan_move,
    "cancel": _build_cancel,
}
