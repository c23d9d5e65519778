"""Query analysis by rules: index terms and what kind of question this is. No LLM."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from madeleine.text.analyzer import Analyzer

# Questions that gather several memories ("which cities has John visited", "how many games",
# "what kinds of art") are answered by evidence spread over sessions: results are diversified
# across sessions for them.
_BROAD_EN = re.compile(
    r"\b(how many|how often|both|all the|every|what (?:kinds?|types?|sorts?) of|"
    r"(?:has|have)\s+(?:\w+\s+){0,3}?(?:been|done|read|seen|watched|visited|played|made|taken|"
    r"tried|gone|had|mentioned|attended|participated|owned|bought|used|worked|volunteered|"
    r"painted|written|learned|helped|shared|received|got|gotten|adopted|traveled|travelled|"
    r"joined|cooked|baked|recommended|faced|experienced))\b"
    r"|\b(?:what|which)\s+(?:\w+\s+)?\w+(?:s|es)\b(?<!\bis)(?<!\bwas)(?<!\bdoes)(?<!\bhas)",
    re.IGNORECASE,
)
_BROAD_KO = re.compile(r"(모두|전부|몇\s*번|몇\s*개|어떤\s*\S+들|무엇무엇|여러)")
_WHEN = re.compile(
    r"\b(when|what (?:date|day|time|year|month)|how long ago)\b|언제|며칠|몇\s*시", re.I
)


# Passages that carry a time reference: what a "when" question needs to be answered.
_DATED = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|the other day|"
    r"(?:last|this|next|past) (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"morning|evening|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|(?:19|20)\d\d|since|weeks?|months?|years?)\b"
    r"|어제|오늘|내일|그저께|지난\s*(?:주|달|해|번)|이번\s*(?:주|달)|작년|올해|내년|\d+\s*(?:일|주|달|개월|년)\s*전"
    r"|\d+월|\d+일|최근",
    re.IGNORECASE,
)


def mentions_time(text: str) -> bool:
    return bool(_DATED.search(text))


# Identifiers and numbers: order ids, account numbers, code names (SR-2023-052, 12345678,
# soul_server, getUserById). Bare years and single digits are left to the other stages.
_IDENTIFIER = re.compile(
    r"(?<![\w-])(?:[\w-]*\d[\w-]*|[A-Za-z]+(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)(?![\w-])"
)
_YEAR_OR_SMALL = re.compile(r"(?:19|20)\d\d|\d|\d+[\uac00-\ud7a3]+")  # "3일": a quantity
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def query_entities(query: str, analyzer: Analyzer) -> list[str]:
    """Names, identifiers, numbers and quoted phrases: things the user means literally."""
    found = [m.group(1).strip() for m in _QUOTED.finditer(query)]
    found += [
        m.group(0).strip("-_")
        for m in _IDENTIFIER.finditer(query)
        if not _YEAR_OR_SMALL.fullmatch(m.group(0))
    ]
    found += analyzer.proper_nouns(query)
    unique: dict[str, str] = {}
    for entity in found:
        key = entity.casefold()
        if entity and not any(key in other for other in unique):
            unique[key] = entity
    return list(unique.values())


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    terms: list[str]
    broad: bool
    asks_when: bool
    entities: list[str] = field(default_factory=list)
    rewritten: str | None = None  # the query as analyzed and embedded, when it was rewritten
    user_names: tuple[str, ...] = ()  # the user's own names, which seed nothing

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "terms": self.terms,
            "broad": self.broad,
            "asks_when": self.asks_when,
            "entities": self.entities,
        }
        if self.rewritten is not None:
            found["rewritten"] = self.rewritten
        return found


def analyze_query(
    query: str,
    analyzer: Analyzer,
    original: str | None = None,
    user_names: tuple[str, ...] = (),
) -> QueryAnalysis:
    """``original``: the query as asked, when ``query`` is its rewrite (``read/names.py``)."""
    return QueryAnalysis(
        terms=analyzer.terms(query),
        broad=bool(_BROAD_EN.search(query) or _BROAD_KO.search(query)),
        asks_when=bool(_WHEN.search(query)),
        entities=query_entities(query, analyzer),
        rewritten=None if original is None or original == query else query,
        user_names=user_names,
    )
