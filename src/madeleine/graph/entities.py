"""Entities at index time, offline: names, identifiers, code names, and the user's dictionary.

Found by rules: capitalized spans in English and NNP in Korean (the analyzer's
``proper_nouns``), identifiers (``SR-2023-052``, ``#4521``, ``order 98765``), code names
(``soul_server``, ``getUserById``, ``auth/token.py``, ``TokenCache``), quoted phrases; and any
n-gram of the text that is already in the user's dictionary, whatever its case.

Merging is guarded: two surfaces are one entity only when their *key* is equal — case,
spacing, separators and diacritics removed, nothing else. Digits are never touched, so
``SR-2023-052`` and ``SR-2023-053`` stay apart; there is no fuzzy matching. Aliases come from
the text itself: "서울 (Seoul)" or "Robert ("Bob")" make the bracketed name an alias.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from madeleine.text.analyzer import Analyzer
from madeleine.text.pii import PLACEHOLDER

# identifiers: a token with a digit and a letter or separator (SR-2023-052, A1B2, #4521)
_IDENTIFIER = re.compile(r"(?<![\w/.-])#?(?=[\w-]*\d)(?=[\w-]*[A-Za-z_-])[A-Za-z0-9][\w-]*\w")
_TICKET = re.compile(r"(?<!\w)#\d{2,}\b")
# code names: snake_case, camelCase / PascalCase with an inner capital, dotted or slashed paths
_CODE = re.compile(
    r"(?<![\w/.])(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
    r"|[a-z]+(?:[A-Z][a-z0-9]+)+"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+"
    r"|[\w-]+(?:/[\w.-]+)+\.\w{1,5}|[\w-]+\.(?:py|js|ts|tsx|go|rs|java|rb|md|json|yaml|yml|toml|sql|sh|c|cpp|h))"
    r"(?![\w/])"
)
_QUOTED = re.compile(r"[\"“`]([^\"”`\n]{2,60})[\"”`]")
_ALIAS = re.compile(
    r"([^\s()\"“”]{2,40}(?:\s[^\s()\"“”]{2,40}){0,2})\s*\(\s*[\"“]?([^()\"“”]{2,40}?)[\"”]?\s*\)"
)
_NUMBER_OR_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d+(?:st|nd|rd|th|am|pm|s|k|kg|km|m|cm|mm|h|min)", re.IGNORECASE
)
_LONG_NUMBER = re.compile(r"(?<![\w.,-])\d{5,}(?![\w.,-])")  # order 98765, a loyalty number
# capitalized, but units and interjections, not names
_NOT_NAMES = frozenset(
    {"ok", "okay", "kb", "mb", "gb", "tb", "am", "pm", "lol", "omg", "btw", "tv", "usd", "eur"}
    | {"mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun"}
)
# words that start a sentence (and so carry a capital) in chat, glued to a following name
_SPAN_STARTERS = frozenset(
    (
        "thanks thank congrats congratulations bye hi hey hello wow woohoo yay yeah yes yep "
        "nope oh ooh aww aw sure great awesome cool nice haha yesterday today tonight tomorrow "
        "last next now since whenever wish here here's there's knowing realizing also plus "
        "anyway honestly totally absolutely definitely good happy glad sorry love lovely "
        "amazing dear welcome cheers omg hmm um well so and but"
    ).split()
)
_PRONOUNS_AND_STOPS = frozenset(
    "i i'm i've i'd i'll me my we we're you you're he she they it it's the a an".split()
)
_LEADING_NOISE = _SPAN_STARTERS | _PRONOUNS_AND_STOPS
_BRACKETS = re.compile(r"[()\[\]{}\"“”]")
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_SEPARATORS = re.compile(r"[\s_\-.·/]+")
_MAX_NGRAM = 3
_MAX_NAME_CHARS = 80


SPEAKER_TYPE = "speaker"
_SPEAKER_PREFIX = "@"  # entity_key strips it: no mention's key starts with it


def speaker_key(key: str) -> str:
    """The key of the node for a person as the one who speaks (not as someone mentioned),
    from the person's entity key."""
    return _SPEAKER_PREFIX + key


@dataclass(frozen=True, slots=True)
class Mention:
    surface: str
    key: str
    type: str  # name / identifier / code / quoted / known / pii / speaker
    alias_of: str | None = None  # key of the entity this surface is an alias of


def entity_key(surface: str) -> str:
    """The guarded merge key: NFKC, case-folded, diacritics and separators removed,
    a leading article and a trailing possessive dropped. Digits and letters are never
    changed otherwise."""
    text = unicodedata.normalize("NFKC", surface).strip()
    text = re.sub(r"['’]s$", "", text)
    text = re.sub(r"^(?:the|a|an)\s+(?=\S)", "", text, flags=re.IGNORECASE)
    decomposed = unicodedata.normalize("NFD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SEPARATORS.sub("", unicodedata.normalize("NFC", stripped)).strip("'’\"@")


def ngram_keys(text: str) -> set[str]:
    """Keys of every 1–3 word n-gram: what a dictionary lookup can match."""
    words = _WORD.findall(text)
    keys: set[str] = set()
    for size in range(1, _MAX_NGRAM + 1):
        for start in range(len(words) - size + 1):
            key = entity_key(" ".join(words[start : start + size]))
            if len(key) >= 2:
                keys.add(key)
    return keys


class EntityExtractor:
    """Rules over one text; ``known`` is the user's dictionary (key -> entity name)."""

    def __init__(self, analyzer: Analyzer) -> None:
        self._analyzer = analyzer

    def extract(self, text: str, known: dict[str, str] | None = None) -> list[Mention]:
        found: dict[str, Mention] = {}
        # a vaulted value is one entity under its placeholder (the same number links the
        # turns that mention it, without revealing it); masked values carry no identity
        for match in PLACEHOLDER.finditer(text):
            if match.group("token"):
                placeholder = match.group(0)
                found.setdefault(placeholder, Mention(placeholder, placeholder, "pii"))
        text = PLACEHOLDER.sub(" ", text)

        def add(surface: str, kind: str, alias_of: str | None = None) -> None:
            surface = surface.strip(" \t\"'“”‘’()[]{},;:!?.")
            key = entity_key(surface)
            if len(key) < 2 or len(surface) > _MAX_NAME_CHARS or (key.isdigit() and len(key) < 4):
                return
            if key not in found:
                found[key] = Mention(surface, key, kind, alias_of)

        for match in _TICKET.finditer(text):
            add(match.group(0), "identifier")
        for match in _IDENTIFIER.finditer(text):
            token = match.group(0)
            if not _is_plain_number_or_date(token):
                add(token, "identifier")
        for match in _LONG_NUMBER.finditer(text):
            add(match.group(0), "identifier")
        for match in _CODE.finditer(text):
            add(match.group(0), "code")
        for match in _QUOTED.finditer(text):
            add(match.group(1), "quoted")
        literal = list(found)  # identifiers and code names: a name span never swallows one
        names = [n for part in _BRACKETS.split(text) for n in self._analyzer.proper_nouns(part)]
        initial = _sentence_initial_words(text)
        for raw_name in names:
            name = _trim_span(raw_name)
            if not name:
                continue
            key = entity_key(name)
            single = " " not in name.strip()
            if single and name in initial and (known is None or key not in known):
                continue  # "Wow", "Thanks": a capital only because a sentence starts there
            if key in _NOT_NAMES:
                continue
            if any(other in key for other in literal if other != key):
                continue  # "Fixed SR-2023-052": the identifier is the entity
            add(name, "name")
        for match in _ALIAS.finditer(text):
            words, alias = match.group(1).split(), match.group(2).strip()
            alias_key = entity_key(alias)
            for start in range(len(words)):  # the longest known name just before the bracket
                main_key = entity_key(" ".join(words[start:]))
                if main_key in found and len(alias_key) >= 2 and alias_key != main_key:
                    found[alias_key] = Mention(alias, alias_key, found[main_key].type, main_key)
                    break
        if known:
            for key in ngram_keys(text) & known.keys():
                if key not in found:
                    found[key] = Mention(known[key], key, "known")
        return list(found.values())


def _trim_span(name: str) -> str:
    """Drop what a capital letter wrongly glued to a name: a greeting or adverb before it
    ("Congrats Caroline", "Yesterday I"), a pronoun after it ("Now I'm")."""
    words = name.split()
    while words and _plain(words[-1]) in _PRONOUNS_AND_STOPS:
        words.pop()
    while words and _plain(words[0]) in _LEADING_NOISE:
        words.pop(0)
    return " ".join(words)


def _plain(word: str) -> str:
    return word.casefold().replace("’", "'").strip(".,!?;:")


def _sentence_initial_words(text: str) -> set[str]:
    starts: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        words = sentence.split()
        if words:
            starts.add(words[0].strip("\"'“”‘’()[]{},;:!?."))
    return starts


def _is_plain_number_or_date(token: str) -> bool:
    """2024-05-01, 10:30, 3pm, 1st, 50kg: times and quantities, not identifiers."""
    return bool(
        re.fullmatch(
            r"\d{4}-\d{2}-\d{2}|\d+(?:st|nd|rd|th|am|pm|s|k|kg|km|m|cm|mm|h|min)", token, re.I
        )
    )


def unique_keys(mentions: Iterable[Mention]) -> list[str]:
    return list(dict.fromkeys(m.alias_of or m.key for m in mentions))
