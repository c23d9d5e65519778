"""Builders for who the user's people are and where and as what the user lives and works:
relations, home and moves, workplace, employer, role."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words
from madeleine.facts.rules.common import (
    HANGUL,
    Builder,
    Fact,
    Said,
    attr,
    moved_since,
    person_name,
    refer_to,
    relation_of,
    subject_of,
)
from madeleine.facts.rules.items import place_of


def _build_relation(match: re.Match[str], said: Said) -> list[Fact]:
    relation = relation_of(match["rel"])
    person = person_name(match["person"], said)
    if relation is None or person is None:
        return []
    words = relation.replace("_", " ")
    return [
        Fact(
            "relationship",
            f"relationship.{relation}",
            f"{person} is the user's {words}.",
            (attr("name", person, "person"),),
            subject=person,
            relationship=relation,
        )
    ]


def _location(slot: str, key: str, verb: str, group: str) -> Builder:
    def build(match: re.Match[str], said: Said) -> list[Fact]:
        raw = match.groupdict().get(group) or match.groupdict().get(f"{group}2")
        place = place_of(raw)
        if place is None:
            return []
        name, country, is_country = place
        if slot == "workplace" and country is None:
            return []  # "I work in marketing / Sales": a field, not a place
        subject, relationship = subject_of(match, said)
        if not subject:
            return []
        attributes = [] if is_country else [attr("city", name, "place")]
        if country is not None:
            attributes.append(attr("country", country, "place"))
        moved = verb == "moved to"
        return [
            Fact(
                slot,
                key,
                f"{refer_to(subject, relationship)} {verb} {name}.",
                tuple(attributes),
                subject,
                relationship,
                valid_from=moved_since(said) if moved else None,
            )
        ]

    return build


_NOT_EMPLOYERS = frozenset(
    """회사 집 여기 거기 저기 밖 카페 사무실 재택 학교 학원 대학 대학교 병원 은행 공장 가게 식당
    본사 지사 현장 시내 근처 동네 스타트업 중소기업 대기업 외국계 곳 데 거""".split()
)


def _build_employer(match: re.Match[str], said: Said) -> list[Fact]:
    raw = (match.groupdict().get("org") or "").strip(" .,;'")
    words = raw.split()
    while words and (words[-1] in en_words.NOT_NAMES or words[-1].lower() in ("now", "as")):
        words.pop()
    org = " ".join(words)
    if not org or org in _NOT_EMPLOYERS or (words and words[0] in en_words.NOT_NAMES):
        return []
    place = place_of(org)
    if place is not None and place[1] is not None:
        return _location("workplace", "location.work", "works in", "org")(match, said)
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    started = re.search(r"\b(?:started|joined|hired)\b", match.group(0), re.I)
    return [
        Fact(
            "employer",
            "work.employer",
            f"{refer_to(subject, relationship)} works at {org}.",
            (attr("name", org),),
            subject,
            relationship,
            valid_from=moved_since(said) if started else None,
        )
    ]


_NOT_ROLE_WORDS = frozenset(
    """good great bad big huge terrible little real total complete proud happy lucky really very
    pretty quite such typical bit kind sort""".split()
)


def _build_role(match: re.Match[str], said: Said) -> list[Fact]:
    role = re.sub(r"\s+", " ", match["role"].strip(" .,")).strip()
    if not role or any(w.lower() in _NOT_ROLE_WORDS for w in role.split()):
        return []
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    facts = [
        Fact(
            "role",
            "work.role",
            f"{refer_to(subject, relationship)} works as {_article(role)}.",
            (attr("name", role),),
            subject,
            relationship,
        )
    ]
    if match.groupdict().get("org") and "student" not in role.lower():
        facts.extend(_build_employer(match, said))
    return facts


def _article(role: str) -> str:
    if HANGUL.search(role):
        return role
    return f"{'an' if role[:1].lower() in 'aeiou' else 'a'} {role}"


BUILDERS: dict[str, Builder] = {
    "relation": _build_relation,
    "home": _location("home", "location.home", "lives in", "place"),
    "moved": _location("home", "location.home", "moved to", "place"),
    "workplace": _location("workplace", "location.work", "works in", "place"),
    "employer": _build_employer,
    "role": _build_role,
}
