"""Builders for what the user prefers: seats, diets, likes and dislikes, switches of
provider or habit, standing instructions for the assistant."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words, ko
from madeleine.facts.rules.common import (
    EXPLICIT,
    HANGUL,
    TIME_WORDS,
    Builder,
    Fact,
    Said,
    attr,
    moved_since,
    refer_to,
    subject_of,
)
from madeleine.facts.rules.items import NOT_ITEM_START, items_of
from madeleine.text.dates import english_stamps


def _build_seat(match: re.Match[str], said: Said) -> list[Fact]:
    raw = re.sub(r"[\s-]+", " ", match["seat"].lower())
    seat = (
        en_words.SEATS.get(raw) or ko.SEATS.get(match["seat"]) or ko.SEATS.get(raw.replace(" ", ""))
    )
    if seat is None:
        return []
    return [
        Fact("seat", "preference.seat", f"The user prefers {seat} seats.", (attr("seat", seat),))
    ]


def _build_diet(match: re.Match[str], said: Said) -> list[Fact]:
    raw = re.sub(r"\s+", " ", match["diet"].lower())
    diet = en_words.DIETS.get(raw) or ko.DIETS.get(raw) or ko.DIETS.get(raw.replace(" ", ""))
    squeezed = raw.replace(" ", "")
    if diet is None:
        diet = next((v for k, v in ko.DIETS.items() if k.replace(" ", "") == squeezed), None)
    subject, relationship = subject_of(match, said)
    if diet is None or not subject:
        return []
    who = refer_to(subject, relationship)
    if diet in ("vegetarian", "vegan", "pescatarian", "flexitarian"):
        statement = f"{who} is {diet}."
    elif diet in ("halal", "kosher"):
        statement = f"{who} eats {diet}."
    else:
        statement = f"{who} follows a {diet} diet."
    inferred = raw in ("meat", "any meat", "animal products", "고기", "육류")
    return [
        Fact(
            "diet",
            "preference.diet",
            statement,
            (attr("diet", diet),),
            subject,
            relationship,
            0.7 if inferred else EXPLICIT,
        )
    ]


def _preference(slot: str, verb: str) -> Builder:
    def build(match: re.Match[str], said: Said) -> list[Fact]:
        facts: list[Fact] = []
        for item, at in items_of(match, "item", said):
            subject, relationship = subject_of(match, said, at)
            if not subject:
                continue
            facts.append(
                Fact(
                    slot,
                    f"preference.{slot}",
                    f"{refer_to(subject, relationship)} {verb} {item}.",
                    (attr("item", item),),
                    subject,
                    relationship,
                )
            )
        return facts

    return build


_NOT_SWITCH_TOPICS = frozenset(
    """flight flights seat seats booking reservation appointment meeting ticket tickets order
    plan plans mind password name address number date time hotel room trip""".split()
)
_SWITCH_TAIL = re.compile(
    r"\s+(?:last|this|next|yesterday|today|recently|ago|in|on|since|for|a\s+few|earlier|after"
    r"|before|because|and|but|from|after|instead|now|already|a\s+while)\b.*$",
    re.I,
)


def _build_switch(match: re.Match[str], said: Said) -> list[Fact]:
    groups = match.groupdict()
    topic_raw = re.sub(r"\s+", " ", (groups.get("topic") or "").strip().lower())
    value = _SWITCH_TAIL.sub("", (groups.get("value") or "").strip(" .,'\"")).strip()
    value = re.sub(r"^(?:a|an|the|my)\s+", "", value, flags=re.I)
    if not value or len(value.split()) > 4 or value.lower() in NOT_ITEM_START:
        return []
    if topic_raw in _NOT_SWITCH_TOPICS or english_stamps(value, said.now.date()):
        return []
    if value in ko.PLACES or TIME_WORDS.search(value):
        return []
    diet = next((d for w, d in en_words.DIETS.items() if _has_word(value, w)), None)
    if diet is None:
        diet = next((d for w, d in ko.DIETS.items() if w in value), None)
    if diet is not None or topic_raw in ("diet", "diets"):
        if diet is None:
            return []
        return [
            Fact(
                "diet",
                "preference.diet",
                f"The user switched to a {diet} diet.",
                (attr("diet", diet),),
                valid_from=moved_since(said),
            )
        ]
    lowered = value.lower()
    previous = _SWITCH_TAIL.sub("", (groups.get("old") or "").strip(" .,'\"")).strip()
    previous = re.sub(r"^(?:a|an|the|my)\s+", "", previous, flags=re.I)
    topic = (
        en_words.SWITCH_TOPICS.get(topic_raw)
        or en_words.PREFERENCE_TOPICS.get(lowered)
        or en_words.PREFERENCE_TOPICS.get(previous.lower())
        or ko.SWITCH_TOPICS.get(topic_raw)
        or ko.SWITCH_TOPICS.get(topic_raw.replace(" ", ""))
        or en_words.BRAND_TOPICS.get(lowered)
        or ko.BRAND_TOPICS.get(lowered)
        or ("bank" if re.search(r"은행|뱅크", value) else None)
    )
    if topic is None and topic_raw and not HANGUL.search(topic_raw):
        return []  # "I changed my shampoo to …" is fine, but an unknown topic word is not one
    key = f"preference.{topic}" if topic else "preference.switched_to"
    what = f" {topic.replace('_', ' ')}" if topic else ""
    attributes = [attr("value", value)]
    statement = f"The user switched{what} to {value}."
    if previous and len(previous.split()) <= 4:
        attributes.append(attr("previous", previous))
        statement = f"The user switched from {previous} to {value}."
    return [
        Fact(
            "switch",
            key,
            statement,
            tuple(attributes),
            valid_from=moved_since(said),
        )
    ]


_HABIT_VERBS = {
    "drink": "drinks",
    "have": "has",
    "take": "takes",
    "use": "uses",
    "ride": "rides",
    "drive": "drives",
    "do": "practises",
    "doing": "practises",
    "go": "practises",
    "practice": "practises",
    "practise": "practises",
    "마시": "마신다",
    "먹": "먹는다",
    "타": "탄다",
}


def _build_habit(match: re.Match[str], said: Said) -> list[Fact]:
    """ "I drink coffee every morning", "매일 아침 커피를 마셔요": a standing preference of a
    known topic (drink, milk, commute...), so that a later switch supersedes it."""
    value = re.sub(r"\s+", " ", match["value"].strip(" .,'\"")).strip()
    value = re.sub(r"^(?:a|an|the|my|some)\s+", "", value, flags=re.I)
    topic = _preference_topic(value)
    if topic is None:
        return []
    verb = (match.groupdict().get("verb") or "do").lower()  # "my main sport is X": no verb
    when = re.sub(r"\s+", " ", (match.groupdict().get("when") or "").strip())
    if HANGUL.search(value):
        statement = f"The user {when} {value}".strip()  # restated in Korean by phrases.py
    else:
        tail = f" {when}" if when else ""
        statement = f"The user {_HABIT_VERBS.get(verb, verb + 's')} {value}{tail}."
    return [
        Fact(
            "habit",
            f"preference.{topic}",
            statement,
            (attr("value", value),),
            valid_from=moved_since(said),
        )
    ]


def _preference_topic(value: str) -> str | None:
    """The topic of a value, or of its head noun: "black coffee" is a drink as coffee is,
    "oat lattes" as a latte is."""
    lowered = value.lower()
    topics = en_words.PREFERENCE_TOPICS
    found = topics.get(lowered) or topics.get(value)
    if found is not None or " " not in lowered:
        return found
    head = lowered.rsplit(" ", 1)[1]
    return topics.get(head) or (topics.get(head[:-1]) if head.endswith("s") else None)


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.I) is not None


def _build_instruction(match: re.Match[str], said: Said) -> list[Fact]:
    instruction = re.sub(r"\s+", " ", match["instruction"]).strip(" .,!")
    if len(instruction) < 4:
        return []
    return [
        Fact(
            "instruction",
            "habit.instruction",
            f"The user asked the assistant: {instruction}.",
            (attr("instruction", instruction),),
        )
    ]


BUILDERS: dict[str, Builder] = {
    "seat": _build_seat,
    "diet": _build_diet,
    "like": _preference("like", "likes"),
    "dislike": _preference("dislike", "dislikes"),
    "switch": _build_switch,
    "habit": _build_habit,
    "instruction": _build_instruction,
}
