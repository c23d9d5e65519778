"""Builders for health facts: allergies, medications and conditions, of the user or of
the user's people ("my daughter is allergic to peanuts")."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words, ko
from madeleine.facts.rules.common import HANGUL, Builder, Fact, Said, attr, refer_to, subject_of
from madeleine.facts.rules.items import NOT_ITEM_START, english_items, items_of, korean_item

_ALLERGY_FILLER = frozenset(
    """really very bad severe mild serious slight major minor known deadly life-threatening
    pretty quite super extreme extremely terrible awful horrible strong little small big also
    a an the some""".split()
)
_NOT_ALLERGENS = frozenset(
    """seasonal food drug skin any no known environmental spring multiple several many lots
    other certain an a the my his her some mild severe it that this them anything everything
    nothing something""".split()
)


def _build_allergy(match: re.Match[str], said: Said) -> list[Fact]:
    facts: list[Fact] = []
    for item, at in items_of(match, "allergen", said):
        words = item.split()
        while len(words) > 1 and words[0].lower() in _ALLERGY_FILLER:
            words.pop(0)
        allergen = " ".join(words)
        if allergen.lower() in _NOT_ALLERGENS or allergen.lower().endswith("allergy"):
            continue
        subject, relationship = subject_of(match, said, at)
        if not subject:
            continue
        facts.append(
            Fact(
                "allergy",
                "health.allergy",
                f"{refer_to(subject, relationship)} is allergic to {allergen}.",
                (attr("allergen", allergen),),
                subject,
                relationship,
            )
        )
    return facts


_MEDICATION_STOP = re.compile(
    r"\s+(?:for|since|because|every|daily|twice|once|in|at|to|and|with|now|each|as|when"
    r"|after|before|right|still|too|regularly|again)\b.*$",
    re.I,
)


def _build_medication(match: re.Match[str], said: Said) -> list[Fact]:
    raw = match["med"].strip()
    dose = (match.groupdict().get("dose") or "").strip()
    verb = (match.groupdict().get("verb") or "").lower()
    if HANGUL.search(raw):
        medication = korean_item(raw, said) or ""
        known = (
            medication in ko.MEDICATIONS
            or medication.endswith(("약", "제", "린", "정"))
            or bool(dose)
            or not verb.startswith("먹")
        )
    else:
        medication = _MEDICATION_STOP.sub("", raw).strip()
        lowered = medication.lower()
        known = (
            bool(dose)
            or "prescribed" in verb
            or "put" in match.group(0).lower()
            or any(w in en_words.MEDICATIONS for w in lowered.split())
            or lowered in en_words.MEDICATIONS
            or any(en_words.MEDICATION_SUFFIX.search(w) for w in lowered.split())
        )
    if not medication or not known or medication.lower() in NOT_ITEM_START:
        return []
    subject, relationship = subject_of(match, said, match.start("med"))
    if not subject:
        return []
    attributes = [attr("medication", medication)]
    if dose:
        attributes.append(attr("dose", dose))
    taken = f" {dose}" if dose else ""
    return [
        Fact(
            "medication",
            "health.medication",
            f"{refer_to(subject, relationship)} takes {medication}{taken}.",
            tuple(attributes),
            subject,
            relationship,
        )
    ]


def _build_condition(match: re.Match[str], said: Said) -> list[Fact]:
    groups = match.groupdict()
    if groups.get("adjective"):
        raw = re.sub(r"\s+", " ", groups["adjective"].lower())
        conditions = [en_words.CONDITION_ADJECTIVES.get(raw, raw)]
    elif HANGUL.search(groups.get("condition") or ""):
        found = korean_item(groups["condition"], said)
        conditions = [found] if found else []
    else:
        conditions = [
            re.sub(r"^(?:an?|the)\s+", "", c, flags=re.I)
            for c in english_items(groups["condition"])
        ]
    subject, relationship = subject_of(match, said)
    facts: list[Fact] = []
    for condition in conditions:
        if not subject or not condition:
            continue
        facts.append(
            Fact(
                "condition",
                "health.condition",
                f"{refer_to(subject, relationship)} has {condition}.",
                (attr("condition", condition),),
                subject,
                relationship,
            )
        )
    return facts


BUILDERS: dict[str, Builder] = {
    "allergy": _build_allergy,
    "medication": _build_medication,
    "condition": _build_condition,
}
