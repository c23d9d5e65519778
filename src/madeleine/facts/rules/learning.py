"""What the user is learning: "I'm studying Japanese now", "스페인어 배우기 시작했어요".

One language at a time is the common case, so a new one supersedes the old ("I dropped
Spanish … I'm studying Japanese now"); the card is volatile like any current activity."""

from __future__ import annotations

import re

from madeleine.facts.rules.common import Builder, Fact, Said, attr, subject_of


def _build_learning(match: re.Match[str], said: Said) -> list[Fact]:
    language = match["lang"]
    subject, _ = subject_of(match, said)
    if subject != "user":
        return []
    return [
        Fact(
            "learning",
            "education.language",
            f"The user is learning {language}.",
            (attr("language", language),),
        )
    ]


BUILDERS: dict[str, Builder] = {"learning": _build_learning}
