"""Importance by rules: what must never be forgotten however rarely it comes up (safety,
health, legal and money obligations, credentials, yearly procedures). A separate axis from
strength: an important item keeps strength 1 and is never archived.

The caller's setting always wins (``Memory.set_importance``); an LLM's, when one rated the
item during maintenance, wins over the rules.
"""

from __future__ import annotations

import re

IMPORTANT = 0.9
SMALL_TALK = 0.1  # a turn that only greets, thanks or agrees

# English and Korean cues; a word boundary on the left only, so inflections match
_CUES = re.compile(
    r"(?i)(?:\b(?:allerg|anaphyla|epipen|inhaler|insulin|blood\s+type|medication|diagnos"
    r"|emergency|safety|hazard|never\s+(?:give|serve|use|let|leave|share)|must\s+not"
    r"|do\s+not\s+ever|legal|lawyer|attorney|contract|clause|lease|liabilit|court|lawsuit"
    r"|regulation|complian|tax|audit|insurance|warranty|policy\s+number|passport|visa"
    r"|password|passcode|pin\s+code|recovery\s+code|will\s+and\s+testament|custody"
    r"|annual(?:ly)?|every\s+year|once\s+a\s+year|yearly|renewal|renew)"
    r"|알레르기|알러지|응급|안전|비상|법적|변호사|계약|소송|세금|보험|여권|비자|비밀번호"
    r"|매년|해마다|연례|갱신)"
)


def rule_importance(text: str) -> float | None:
    """``IMPORTANT`` when the text carries a cue of something that must not be lost; None
    when the rules have nothing to say (the record's own importance stands)."""
    return IMPORTANT if _CUES.search(text) else None
