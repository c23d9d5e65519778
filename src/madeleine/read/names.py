"""A name is not a topic: "where does Alex live?", asked of Alex's own memory, means "where do
I live?".

Left as it is, the user's name pulls the turns that only name them ("Hi, I'm Alex.", "Nice to
meet you, Alex!") to the top of every question about their life, by every channel at once: the
words match, the embeddings of short greetings sit close to any short question, the graph
seeds on the name. When the user told us their name (an ``identity.name`` card about the user),
the query is rewritten before analysis and embedding: "Alex's" becomes "my", "Alex" becomes
"I". Names of other people, and names that are speakers of the conversation (which tell two
people's turns apart), are never touched: only the user's own card names.
"""

from __future__ import annotations

import re

from madeleine.read.lru import UserLRU
from madeleine.store.ports import FactRepository

_CACHED_USERS = 256
_NAME_LIKE = re.compile(r"[^\W\d_]{2,20}")
# A query with these asks about names or greetings themselves: then a name is the topic.
_ABOUT_NAMES = ("name", "called", "call ", "greet", "introduc", "who am i", "이름", "불러")


def about_names(query: str) -> bool:
    lowered = query.casefold()
    return any(word in lowered for word in _ABOUT_NAMES)


class UserNames:
    """The names a user gave as their own, cached until the user's facts change."""

    def __init__(self, facts: FactRepository) -> None:
        self._facts = facts
        self._cache: UserLRU[tuple[int, tuple[str, ...]]] = UserLRU(_CACHED_USERS)

    def of(self, user_id: str) -> tuple[str, ...]:
        generation = self._facts.generation(user_id)
        cached = self._cache.get(user_id)
        if cached is not None and cached[0] == generation:
            return cached[1]
        names: list[str] = []
        for stored in self._facts.facts(user_id, category="identity"):
            card = stored.card
            if card.key != "identity.name" or card.subject.casefold() != "user":
                continue
            for attribute in card.attributes:
                if attribute.name == "name" and attribute.value.strip():
                    names.append(attribute.value.strip())
        if _NAME_LIKE.fullmatch(user_id):  # "alex": an id that is a first name is one
            names.append(user_id)
        found = tuple(dict.fromkeys(names))
        self._cache.put(user_id, (generation, found))
        return found


def rewrite(query: str, names: tuple[str, ...]) -> str:
    """The query with the user's own names turned into the first person."""
    if not names:
        return query
    text = query
    for name in sorted(names, key=len, reverse=True):
        escaped = re.escape(name)
        if re.search(r"[가-힣]", name):
            text = re.sub(rf"{escaped}(?:\s*씨)?(?:의)", "제", text)
            text = re.sub(rf"{escaped}(?:\s*씨)?(?:는|은|가|이)?", "제가", text)
            continue
        text = re.sub(rf"\b{escaped}(?:'s|’s)", "my", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{escaped}\b", "I", text, flags=re.IGNORECASE)
    return text if text.strip() else query
