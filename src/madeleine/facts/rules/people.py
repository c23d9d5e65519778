"""Builders for who the user's people are and where and as what the user lives and works:
relations, home and moves, workplace, employer, role."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words, ko
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


def district_of(raw: str | None) -> tuple[str, str | None] | None:
    """(neighbourhood, its city when known) for a place that is a part of a city: a known
    district ("Pudong" → Shanghai, "강남구" → Seoul) or a Korean 구 / 동 / 읍 / 면."""
    if not raw:
        return None
    name = raw.strip(" ,.;:'\"").removesuffix("'s")
    name = re.sub(r"^the\s+", "", name, flags=re.I)
    city = en_words.DISTRICTS.get(name.lower())
    if city is not None:
        return name, city
    if name in ko.DISTRICTS:
        return name, ko.DISTRICTS[name]
    if HANGUL.search(name) and re.fullmatch(r"[\uac00-\ud7a3]{1,6}(?:구|동|읍|면)", name):
        return name, None
    return None


def _area_facts(match: re.Match[str], said: Said, area: str, city: str | None) -> list[Fact]:
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    who = refer_to(subject, relationship, possessive=True)
    facts: list[Fact] = []
    attributes = [attr("area", area, "place")]
    if city is not None:
        attributes.append(attr("city", city, "place"))
        country = en_words.CITIES.get(city.lower())
        home = [attr("city", city, "place")]
        if country is not None:
            home.append(attr("country", country, "place"))
        facts.append(
            Fact(
                "home",
                "location.home",
                f"{refer_to(subject, relationship)} lives in {city}.",
                tuple(home),
                subject,
                relationship,
            )
        )
    where = f"{area}, {city}" if city else area
    facts.append(
        Fact(
            "home_area",
            "location.home_area",
            f"{who} home is in {where}.",
            tuple(attributes),
            subject,
            relationship,
        )
    )
    return facts


def _build_home_area(match: re.Match[str], said: Said) -> list[Fact]:
    raw = match.groupdict().get("place")
    district = district_of(raw)
    if district is not None:
        return _area_facts(match, said, *district)
    place = place_of(raw)
    if place is None:
        return []
    name, country, _is_country = place
    if country is not None:  # "my new flat is in Berlin": a city, not a neighbourhood
        return _location("home", "location.home", "lives in", "place")(match, said)
    return _area_facts(match, said, name, None)


def _location(slot: str, key: str, verb: str, group: str) -> Builder:
    def build(match: re.Match[str], said: Said) -> list[Fact]:
        raw = match.groupdict().get(group) or match.groupdict().get(f"{group}2")
        district = district_of(raw) if slot == "home" else None
        if district is not None:
            return _area_facts(match, said, *district)
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
    started = re.search(r"\b(?:started|joined|hired)\b|입사|이직|옮겼", match.group(0), re.I)
    return [
        Fact(
            "employer",
            "work.employer",
            f"{refer_to(subject, relationship)} works at {org}.",
            (attr("employer", org),),
            subject,
            relationship,
            valid_from=moved_since(said) if started else None,
        )
    ]


def _build_job(match: re.Match[str], said: Said) -> list[Fact]:
    """A new job named with its role: "I joined Google as a PM" → employer and role."""
    employer = _build_employer(match, said)
    if not employer or employer[0].slot != "employer":
        return employer
    org = employer[0].attributes[0].value
    return [*_build_role(match, said, org), *employer]


def _build_left_job(match: re.Match[str], said: Said) -> list[Fact]:
    """ "I left my job at Stripe", "I quit", "회사를 그만뒀어요": the employer card closes."""
    groups = match.groupdict()
    raw = (groups.get("org") or groups.get("org2") or "").strip(" .,;'")
    words = raw.split()
    while words and (words[-1] in en_words.NOT_NAMES or words[-1].lower() in ("now", "as")):
        words.pop()
    org = " ".join(words)
    if org and (org in _NOT_EMPLOYERS or words[0] in en_words.NOT_NAMES):
        org = ""
    if groups.get("org2") is not None and not org:
        return []
    place = place_of(org) if org else None
    if place is not None and place[1] is not None:
        return []  # "I left London": a place, not a job
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    attributes = [attr("status", "left")]
    if org:
        attributes.insert(0, attr("employer", org))
    where = f"their job at {org}" if org else "their job"
    return [
        Fact(
            "employer",
            "work.employer",
            f"{refer_to(subject, relationship)} left {where}.",
            tuple(attributes),
            subject,
            relationship,
            valid_from=moved_since(said),
        )
    ]


_NOT_ROLE_WORDS = frozenset(
    """good great bad big huge terrible little real total complete proud happy lucky really very
    pretty quite such typical bit kind sort""".split()
)


def _build_role(match: re.Match[str], said: Said, employer: str | None = None) -> list[Fact]:
    role = re.sub(r"\s+", " ", match["role"].strip(" .,")).strip()
    role = re.sub(r"^(?:an?|the)\s+", "", role, flags=re.I)
    if not role or any(w.lower() in _NOT_ROLE_WORDS for w in role.split()):
        return []
    if HANGUL.search(role) and (role in _NOT_EMPLOYERS or role in ko.NOT_ITEMS):
        return []
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    if role.isupper() or role.lower() in ("pm", "sre", "qa", "cto", "ceo", "cfo", "coo"):
        role = role.upper()
    employed = match.groupdict().get("org") and "student" not in role.lower()
    extra: list[Fact] = [] if not employed or employer else _build_employer(match, said)
    if employer is None and extra and extra[0].slot == "employer":
        employer = extra[0].attributes[0].value
    attributes = [attr("role", role)]
    if employer:
        attributes.append(attr("employer", employer))
    where = f" at {employer}" if employer else ""
    facts = [
        Fact(
            "role",
            "work.role",
            f"{refer_to(subject, relationship)} works as {_article(role)}{where}.",
            tuple(attributes),
            subject,
            relationship,
        )
    ]
    return facts + extra


def _article(role: str) -> str:
    if HANGUL.search(role):
        return role
    vowel = role[:1].lower() in "aeiou" or (role.isupper() and role[:1] in "AEFHILMNORSX")
    return f"{'an' if vowel else 'a'} {role}"


BUILDERS: dict[str, Builder] = {
    "relation": _build_relation,
    "home": _location("home", "location.home", "lives in", "place"),
    "moved": _location("home", "location.home", "moved to", "place"),
    "workplace": _location("workplace", "location.work", "works in", "place"),
    "employer": _build_employer,
    "role": _build_role,
    "job": _build_job,
    "left_job": _build_left_job,
    "home_area": _build_home_area,
}
