"""Builders for who the user is and how to reach them: labelled numbers (loyalty, bank,
documents, phone), e-mail, address, name and birthday. Secrets are never filed."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words, ko
from madeleine.facts.rules.common import (
    HANGUL,
    Builder,
    Fact,
    Said,
    attr,
    person_name,
    refer_to,
    slug,
    subject_of,
)
from madeleine.facts.rules.items import placeholder_category

_SECRET_CATEGORIES = frozenset(
    {"password", "pin", "cvv", "ssn", "resident_registration_number", "card_number"}
)


_LABEL_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), kind)
    for pattern, kind in (
        (r"\b(?:routing|aba)\b", "routing"),
        (
            r"\b(?:patient|medical\s+record|mrn|chart|health\s+insurance|insurance\s+member"
            r"|insurance\s+policy|insurance)\b|환자|진료|건강보험|보험",
            "care",
        ),
        (
            r"\b(?:ssn|social\s+security|resident|registration|cvv|cvc|pin|password|passcode"
            r"|credit|debit|card|tax|order|confirmation|booking|ticket|tracking|case|room"
            r"|reference|invoice|policy|license\s+plate|flight)\b|주민|카드|비밀번호",
            "skip",
        ),
        (r"\bpassport\b|여권", "passport"),
        (r"\bdriver'?s'?\b|\blicen[cs]e\b|운전|면허", "drivers_license"),
        (r"\bid\s+card\b|\bnational\s+id\b|신분증", "id_card"),
        (
            r"\b(?:phone|cell|mobile|telephone|contact|whatsapp)\b|전화|휴대폰|핸드폰|연락처",
            "phone",
        ),
        (r"\b(?:checking|current)\b|입출금|보통\s*예금", "checking"),
        (r"\bsavings?\b|적금|저축|예금", "savings"),
        (r"\biban\b", "iban"),
        (
            r"\b(?:frequent\s+fl[iy]er|loyalty|rewards?|membership|member|miles|mileage|points"
            r"|club|program|programme|skymiles|mileageplus|aadvantage|bonvoy|honors|avios"
            r"|krisflyer|skypass|known\s+traveler|global\s+entry|tsa)\b|회원|멤버십|마일리지|스카이패스",
            "loyalty",
        ),
        (r"\b(?:account|acct|bank)\b|계좌|은행|뱅크", "bank"),
    )
)
_PLACEHOLDER_KINDS = {
    "loyalty_number": "loyalty",
    "account_number": "bank",
    "iban": "iban",
    "phone": "phone",
    "email": "email",
}
_GENERIC_LABEL_WORDS = frozenset(
    """number no no. num id account acct membership member loyalty card my our the is
    checking savings current bank routing aba""".split()
)


def _care_id(label: str, noun: str, org: str, value: str) -> Fact:
    """ "my patient number at Mercy is 44821", "my insurance policy number is HX-22": what a
    clinic or an insurer asks for when the user books or confirms care."""
    insurance = bool(re.search(r"insurance|policy|보험", f"{label} {noun}", re.I))
    what = "health insurance number" if insurance else "patient number"
    where = f" at {org}" if org else ""
    attributes = [attr("number", value, "identifier")]
    if org:
        attributes.append(attr("provider", org))
    return Fact(
        "care_id",
        f"health.{'insurance' if insurance else 'patient_id'}.{slug(org) if org else 'main'}",
        f"The user's {what}{where} is {value}.",
        tuple(attributes),
    )


def _build_identifier(match: re.Match[str], said: Said) -> list[Fact]:
    value = match["value"].strip().rstrip(".,")
    label = re.sub(r"\s+", " ", (match["label"] or "").strip())
    noun = match.groupdict().get("noun") or ""
    org = (match.groupdict().get("org") or "").strip(" .,")
    described = f"{label} {noun}"
    category = placeholder_category(value)
    if category in _SECRET_CATEGORIES:
        return []
    kind = next((k for p, k in _LABEL_KINDS if p.search(described)), None)
    if kind == "skip":
        return []
    placeholder_kind = _PLACEHOLDER_KINDS.get(category or "")
    if placeholder_kind == "bank" and kind in ("checking", "savings", "routing"):
        placeholder_kind = kind
    kind = placeholder_kind or kind
    bare = match.groupdict().get("bare") is not None  # no "my": the label must say what
    if kind is None and not bare and re.search(r"[A-Z]", label) and not HANGUL.search(label):
        kind = "loyalty"  # "my United MileagePlus number …": a brand's number
    if kind is None:
        return []
    if kind == "phone":
        return [_contact("phone", value)]
    if kind == "email":
        return [_contact("email", value)]
    if kind in ("passport", "drivers_license", "id_card"):
        words = kind.replace("_", " ").replace("drivers", "driver's")
        return [
            Fact(
                "document",
                f"identity.{kind}",
                f"The user's {words} number is {value}.",
                (attr("number", value, "identifier"),),
            )
        ]
    if kind == "care":
        return [_care_id(label, noun, org, value)]
    if kind == "loyalty":
        programme = _programme(label, org)
        return [
            Fact(
                "loyalty",
                f"account.loyalty.{slug(programme)}",
                f"The user's {programme} number is {value}.",
                (attr("programme", programme), attr("number", value, "identifier")),
            )
        ]
    bank = _bank_name(label, org)
    bank_kind = {"checking": "checking", "savings": "savings", "routing": "routing"}.get(
        kind, "account"
    )
    what = "bank routing number" if bank_kind == "routing" else f"{bank_kind} account number"
    if kind == "iban":
        what = "IBAN"
    attributes = [attr("number", value, "identifier")]
    if bank:
        attributes.append(attr("bank", bank))
    return [
        Fact(
            "bank",
            f"account.bank.{bank_kind}",
            f"The user's {what} is {value}" + (f" ({bank})." if bank else "."),
            tuple(attributes),
        )
    ]


def _programme(label: str, org: str) -> str:
    if HANGUL.search(label):
        words = [w for w in label.split() if w not in ko.TOPIC_WORDS and w not in ("제", "내")]
        name = " ".join(words)
        for alias, canonical in ko.PROGRAMMES.items():
            if alias in name:
                return canonical
        return name or "membership"
    branded = [w for w in label.split() if w[:1].isupper() and w.lower() not in ("my", "our")]
    if branded:
        return " ".join(branded)
    if org:
        return org
    words = [w for w in label.split() if w.lower() not in _GENERIC_LABEL_WORDS]
    return " ".join(words) or "loyalty"


def _bank_name(label: str, org: str) -> str | None:
    if HANGUL.search(label):
        banks = [w for w in label.split() if re.search(r"은행|뱅크|농협", w)]
        return banks[-1] if banks else None
    branded = [
        w
        for w in label.split()
        if w[:1].isupper() and w.lower() not in _GENERIC_LABEL_WORDS | {"my", "our"}
    ]
    return " ".join(branded) or org or None


def _contact(kind: str, value: str) -> Fact:
    return Fact(
        "contact",
        f"contact.{kind}",
        f"The user's {kind} is {value}.",
        (attr("value", value, "identifier"),),
    )


def _build_email(match: re.Match[str], said: Said) -> list[Fact]:
    value = match["value"].rstrip(".")
    category = placeholder_category(value)
    if category is not None and category != "email":
        return []
    return [_contact("email", value)]


def _build_phone(match: re.Match[str], said: Said) -> list[Fact]:
    value = match["value"].strip()
    category = placeholder_category(value)
    if category is not None and category != "phone":
        return []
    return [_contact("phone", value)]


def _build_address(match: re.Match[str], said: Said) -> list[Fact]:
    value = match["value"].strip(" .,")
    if len(value) < 4:
        return []
    return [
        Fact(
            "contact",
            "contact.address",
            f"The user's address is {value}.",
            (attr("value", value, "place"),),
        )
    ]


def _build_name(match: re.Match[str], said: Said) -> list[Fact]:
    name = person_name(match["person"], said)
    if name is None:
        return []
    return [
        Fact(
            "name",
            "identity.name",
            f"The user's name is {name}.",
            (attr("name", name, "person"),),
        )
    ]


def _build_greeting_name(match: re.Match[str], said: Said) -> list[Fact]:
    """ "Hi, I'm Alex", "I'm Alex, nice to meet you", "저는 민수예요": a name said in an
    introduction. Only a capitalized, name-like word counts ("I'm tired", "I'm Korean",
    "I'm Christian" name no one), and a Korean one must not be a role, place or common word."""
    raw = (match["person"] or "").strip()
    if HANGUL.search(raw):
        name = ko.given_name(raw, said.text, match.groupdict().get("called") is not None)
    else:
        first = raw.split()[0] if raw.split() else ""
        lowered = raw.lower()
        if (
            first.lower() in en_words.NOT_GIVEN_NAMES
            or lowered in en_words.NOT_GIVEN_NAMES
            or lowered in en_words.CITIES
            or lowered in en_words.COUNTRIES
            or lowered in en_words.DEMONYMS
            or first.lower().endswith(en_words.NOT_NAME_ENDINGS)
            or re.fullmatch(rf"(?:{en_words.ROLES})s?", lowered) is not None
        ):
            return []
        name = person_name(raw, said)
    if name is None:
        return []
    return _build_name_value(name)


def _build_name_value(name: str) -> list[Fact]:
    return [
        Fact(
            "name",
            "identity.name",
            f"The user's name is {name}.",
            (attr("name", name, "person"),),
        )
    ]


def _build_birthday(match: re.Match[str], said: Said) -> list[Fact]:
    when = said.when(said.text[match.start() :], past=True)
    subject, relationship = subject_of(match, said)
    if when is None or when.precision != "day" or not subject:
        return []
    if when.has_year:
        attribute = attr("date", when.start.isoformat(), "date")
    else:  # a yearly date: ISO 8601 "--MM-DD", typed as text since it is no calendar day
        attribute = attr("date", f"--{when.start:%m-%d}")
    who = refer_to(subject, relationship, possessive=True)
    return [
        Fact(
            "birthday",
            "identity.birthday",
            f"{who} birthday is {attribute.value}.",
            (attribute,),
            subject,
            relationship,
        )
    ]


BUILDERS: dict[str, Builder] = {
    "identifier": _build_identifier,
    "email": _build_email,
    "phone": _build_phone,
    "address": _build_address,
    "name": _build_name,
    "greeting_name": _build_greeting_name,
    "birthday": _build_birthday,
}
