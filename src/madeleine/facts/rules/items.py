"""The things a match names: noun phrases of a clause ("hiking, swimming and reading"),
Korean nouns without their particles, places with their country, PII placeholders."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words, ko
from madeleine.facts.rules.common import HANGUL, Said, relation_of

_PLACEHOLDER = re.compile(r"\[pii:(?P<category>[a-z_]+)(?::[a-z0-9]+)?\]")


_LEADING = re.compile(
    r"^(?:the|a|an|some|all|any|most|many|certain|really|very|also|just)\s+", re.I
)
_TRAILING = re.compile(
    r"\s+(?:too|as\s+well|a\s+lot|so\s+much|very\s+much|the\s+most|best|anymore|now|lately"
    r"|these\s+days|in\s+general|though|actually|really|more|most|of\s+all)$",
    re.I,
)
_PREFERRED_OVER = re.compile(r"\s+(?:over|rather\s+than|instead\s+of|than|more\s+than)\s+.*$", re.I)
NOT_ITEM_START = frozenset(
    """it it's its that that's this these those your you you're how what when where which who
    why whether if him her them me us myself yourself everything anything nothing something
    everyone anyone everybody anybody both each there here so such getting being having doing
    talking his their every to""".split()
)
_NOT_ITEMS = frozenset(
    "things stuff one ones idea lot much more less better best thing way that to".split()
)
# a clause rather than a thing: "the way it turned out", "skill is awesome"
_CLAUSE_ITEM = re.compile(
    r"^the\s+(?:way|fact|idea|thought|feeling|moment|support|chance|opportunity|time)\b"
    r"|\b(?:is|are|was|were|been|will|would|can|could|should|has|had|does|did|makes?|keeps?"
    r"|brings?|gets?|helps?|turned|you|I|me|we|they|he|she)\b|'(?:ll|re|ve|d|s)\b",
    re.I,
)
_DULL_VERBS = frozenset(
    """think know say see ask make be have get go book try keep use hear check confirm do start
    remind add change tell let help find call mention point admit""".split()
)


_TIME_TAIL = re.compile(
    r"\s+(?:(?:last|this|next|past)\s+(?:year|month|week|summer|winter|spring|fall|autumn"
    r"|weekend|night|time)|\d+\s+\w+\s+ago|(?:a\s+)?(?:few|couple\s+of)\s+\w+\s+ago"
    r"|(?:a\s+)?(?:long\s+)?(?:while|time)\s+ago|recently|yesterday|today|as\s+a\s+(?:kid|child"
    r"|teenager|baby)|when\s+I\s+was|(?:in|since|back\s+in)\s+(?:\d{4}|(?:early|late|mid)\s+\d{4}"
    r"|high\s+school|college|childhood))\b.*$",
    re.I,
)


def english_items(raw: str) -> list[str]:
    """A clause's noun phrases: "hiking, swimming and reading" → three items."""
    raw = _PREFERRED_OVER.sub("", _TIME_TAIL.sub("", raw.strip(" ,;:-\"'")))
    items: list[str] = []
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|nor|plus)\s+", raw)
    for position, part in enumerate(parts):
        part = part.strip(" \"'")
        for _ in range(3):
            part = _TRAILING.sub("", _LEADING.sub("", part)).strip(" \"'")
        if part.lower().startswith("to "):
            verb = part[3:].split(" ", 1)[0].lower()
            part = "" if verb in _DULL_VERBS else part[3:]
        words = part.split()
        if (
            not words
            or len(words) > 6
            or words[0].lower() in NOT_ITEM_START
            or part.lower() in _NOT_ITEMS
            or _CLAUSE_ITEM.search(part)
        ):
            if position == 0:  # "I love how it shows X and Y": the rest belongs to that clause
                return []
            continue
        items.append(part)
    return items


_KOREAN_DEMONSTRATIVES = frozenset("그 이 저 그런 이런 저런 그거 이거 저거".split())


def korean_item(raw: str, said: Said) -> str | None:
    """The noun phrase before a particle, without the topic words in front of it; None for
    what cannot be resolved ("그 영화": which film?)."""
    words = raw.split()
    first_words = said.text.lstrip().startswith(raw)
    if len(words) > 1 and words[0] in ("저", "전", "난", "나") and first_words:
        words.pop(0)  # "저 땅콩 알레르기 있어요": at a sentence's start 저 is "I", not "that"
    if words and words[0] in _KOREAN_DEMONSTRATIVES:
        return None
    while len(words) > 1:
        head = words[0]
        base = ko.strip_particle(head)
        if (
            head in ko.TOPIC_WORDS
            or base in ko.TOPIC_WORDS
            or relation_of(base) is not None
            or base in said.people
            or head[-1] in "가를을도이"
            or head in ("제", "우리", "내", "저의", "저희")
        ):
            words.pop(0)
            continue
        break
    item = " ".join(words)
    if not item or item in ko.NOT_ITEMS or words[-1] in ko.NOT_ITEMS:
        return None
    if item in said.people or item in ko.TOPIC_WORDS or relation_of(item) is not None:
        return None  # "지수는 좋아해요": who likes, not what
    return item


def items_of(match: re.Match[str], group: str, said: Said) -> list[tuple[str, int]]:
    """Items of a match group with where each starts (for Korean subject lookup)."""
    raw = match.group(group)
    if raw is None:
        return []
    if HANGUL.search(raw):
        found = korean_item(raw, said)
        return [] if found is None else [(found, match.start(group) + raw.rfind(found))]
    items = english_items(raw)
    if items and not re.search(r"[A-Za-z]", said.text[: match.start(group)]):
        first = items[0]  # "Penicillin allergy.": capital only because it opens the sentence
        if first[:1].isupper() and first[1:2].islower():
            items[0] = first[0].lower() + first[1:]
    return [(item, match.start(group)) for item in items]


def place_of(raw: str | None) -> tuple[str, str | None, bool] | None:
    """(canonical name, country, is a country) for a place as written."""
    if not raw:
        return None
    words = raw.strip(" ,.;:'\"").removesuffix("'s").split()
    while words and (words[-1] in en_words.NOT_NAMES or words[-1].lower() in ("now", "soon")):
        words.pop()
    if not words or words[0] in en_words.NOT_NAMES:
        return None
    name = " ".join(words)
    lowered = name.lower()
    if name in ko.PLACES:
        canonical, country = ko.PLACES[name]
        return canonical, country, canonical == country
    if _KOREAN_DISTRICT.fullmatch(name):
        return name, "South Korea", False
    if lowered in en_words.COUNTRIES:
        country = en_words.COUNTRIES[lowered]
        return country, country, True
    if lowered in en_words.CITIES:
        return (name.title() if name.islower() else name), en_words.CITIES[lowered], False
    if lowered in en_words.BRAND_TOPICS:
        return None
    return name, None, False


_KOREAN_DISTRICT = re.compile(r"[\uac00-\ud7a3]{1,6}(?:시|군|구|동|읍|면|도)")


def placeholder_category(value: str) -> str | None:
    found = _PLACEHOLDER.fullmatch(value.strip())
    return None if found is None else found["category"]
