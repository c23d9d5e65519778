"""Memory checks: deterministic rules over typed attributes, run after every fact update.

A check reads the user's current cards and returns alerts; an alert is stored once per
(rule, fingerprint) and dropped when one of its cards stops being current. Users register
their own checks with ``Memory(..., checks=[...])``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from madeleine.facts.cards import Card


@dataclass(frozen=True, slots=True)
class Alert:
    rule: str
    severity: str  # "info" | "warning" | "critical"
    message: str
    fact_ids: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        return ",".join(sorted(self.fact_ids))


Check = Callable[[Sequence[Card]], list[Alert]]

PASSPORT_MARGIN_DAYS = 180

# Drug classes for allergy cross-checks (generic names, lower case). Not medical advice: a
# prompt to ask, covering the classes behind most reported drug allergies.
DRUG_CLASSES: dict[str, str] = {
    **dict.fromkeys(
        "penicillin amoxicillin ampicillin augmentin amoxicillin-clavulanate dicloxacillin "
        "nafcillin oxacillin piperacillin penicillin-v".split(),
        "penicillins",
    ),
    **dict.fromkeys(
        "cephalexin cefazolin cefuroxime ceftriaxone cefdinir cefixime cefepime keflex".split(),
        "cephalosporins",
    ),
    **dict.fromkeys(
        "sulfamethoxazole bactrim sulfa sulfonamide sulfasalazine sulfadiazine".split(),
        "sulfonamides",
    ),
    **dict.fromkeys(
        "ibuprofen naproxen aspirin diclofenac ketorolac celecoxib meloxicam advil motrin "
        "aleve nsaid nsaids".split(),
        "nsaids",
    ),
    **dict.fromkeys(
        "codeine morphine oxycodone hydrocodone tramadol fentanyl opioid opioids".split(),
        "opioids",
    ),
    **dict.fromkeys(
        "erythromycin azithromycin clarithromycin zithromax macrolide".split(), "macrolides"
    ),
    **dict.fromkeys(
        "ciprofloxacin levofloxacin moxifloxacin fluoroquinolone".split(), "fluoroquinolones"
    ),
    **dict.fromkeys("tetracycline doxycycline minocycline".split(), "tetracyclines"),
    **dict.fromkeys(
        "페니실린 아목시실린 암피실린".split(),
        "penicillins",
    ),
    **dict.fromkeys("이부프로펜 아스피린 나프록센".split(), "nsaids"),
}


def drug_class(name: str) -> str | None:
    words = name.casefold().replace("/", " ").split()
    for candidate in [name.casefold().strip(), *words]:
        if candidate in DRUG_CLASSES:
            return DRUG_CLASSES[candidate]
    return None


def _attribute(card: Card, name: str) -> str | None:
    for attribute in card.attributes:
        if attribute.name == name:
            return attribute.value
    return None


def _as_date(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None


def _as_datetime(value: str | None) -> datetime | None:
    """Naive times are taken as UTC, so that every pair compares."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def passport_before_trip(cards: Sequence[Card]) -> list[Alert]:
    """An identity document expiring within 180 days of a planned international trip (many
    countries require six months of validity on entry)."""
    documents = [c for c in cards if c.key.startswith("identity.passport")]
    trips = [c for c in cards if c.key.startswith("plan.trip")]
    alerts: list[Alert] = []
    for document in documents:
        expires = _as_date(_attribute(document, "expires_on"))
        if expires is None:
            continue
        for trip in trips:
            if trip.subject.casefold() != document.subject.casefold():
                continue
            start = _as_date(_attribute(trip, "start_date"))
            international = (_attribute(trip, "international") or "").casefold() == "true" or (
                _attribute(trip, "travel_mode") or ""
            ).casefold() == "flight"
            if start is None or not international:
                continue
            if expires < start + timedelta(days=PASSPORT_MARGIN_DAYS):
                destination = _attribute(trip, "destination") or "the trip"
                whose = "Your" if document.subject == "user" else f"{document.subject}'s"
                alerts.append(
                    Alert(
                        "passport_expiry_before_trip",
                        "critical" if expires <= start else "warning",
                        f"{whose} passport expires on {expires.isoformat()}, within "
                        f"{PASSPORT_MARGIN_DAYS} days of the trip to {destination} on "
                        f"{start.isoformat()}: many countries refuse entry.",
                        (document.id, trip.id),
                    )
                )
    return alerts


def medication_allergy_class(cards: Sequence[Card]) -> list[Alert]:
    """A medication in the same drug class as a recorded allergy, for the same person."""
    allergies = [c for c in cards if c.key == "health.allergy"]
    medications = [c for c in cards if c.key == "health.medication"]
    alerts: list[Alert] = []
    for allergy in allergies:
        allergen = _attribute(allergy, "allergen") or ""
        allergy_class = drug_class(allergen)
        if allergy_class is None:
            continue
        for medication in medications:
            if medication.subject.casefold() != allergy.subject.casefold():
                continue
            name = _attribute(medication, "medication") or ""
            if drug_class(name) == allergy_class:
                alerts.append(
                    Alert(
                        "medication_allergy_class",
                        "critical",
                        f"{name} is in the same class ({allergy_class}) as the recorded "
                        f"allergy to {allergen}.",
                        (allergy.id, medication.id),
                    )
                )
    return alerts


def overlapping_appointments(cards: Sequence[Card]) -> list[Alert]:
    """Two appointments of one person whose times overlap (one hour when no end is given)."""
    slots: list[tuple[datetime, datetime, Card]] = []
    for card in cards:
        if not card.key.startswith("plan.appointment"):
            continue
        start_text = _attribute(card, "start")
        if not start_text:
            continue
        start = _as_datetime(start_text)
        if start is None:
            continue
        end = _as_datetime(_attribute(card, "end")) or start + timedelta(hours=1)
        slots.append((start, end, card))
    slots.sort(key=lambda s: (s[0], s[2].id))
    alerts: list[Alert] = []
    for i, (start, end, card) in enumerate(slots):
        for other_start, _other_end, other in slots[i + 1 :]:
            if other_start >= end:
                break
            if other.subject.casefold() != card.subject.casefold():
                continue
            alerts.append(
                Alert(
                    "overlapping_appointments",
                    "warning",
                    f"'{_attribute(card, 'title') or card.statement}' at {start:%Y-%m-%d %H:%M} "
                    f"overlaps '{_attribute(other, 'title') or other.statement}' at "
                    f"{other_start:%Y-%m-%d %H:%M}.",
                    (card.id, other.id),
                )
            )
    return alerts


BUILT_IN_CHECKS: tuple[Check, ...] = (
    passport_before_trip,
    medication_allergy_class,
    overlapping_appointments,
)
