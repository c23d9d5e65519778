"""Instruction-like text inside retrieved content ("ignore previous instructions…").

Retrieved chunks are data, not instructions: the context labels them as reference data,
and a chunk that tries to instruct the model is flagged in ``hit.explain`` so the agent (or
its guard) can see it. Patterns cover the common English and Korean phrasings; a flag is a
signal, not a verdict, so nothing is removed."""

from __future__ import annotations

import re

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "override",
            r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:previous|prior|above|all|your|"
            r"earlier)\b.{0,20}\b(?:instructions?|prompts?|rules?|directions?|context)\b",
        ),
        ("role", r"\byou are now\b|\bact as (?:an?|the) (?:unrestricted|jailbroken|different)\b"),
        ("system", r"(?:^|\n)\s*(?:system|assistant)\s*:|<\s*/?\s*system\s*>|\[\s*system\s*\]"),
        (
            "exfiltrate",
            r"\b(?:reveal|print|show|output|send)\b.{0,30}\b(?:system prompt|your instructions|"
            r"api keys?|passwords?|secrets?)\b",
        ),
        (
            "ko_override",
            r"(?:이전|위의?|앞의|모든)\s*(?:지시|명령|지침|규칙)(?:을|를|은|는)?\s*(?:무시|잊)",
        ),
        ("ko_role", r"너는\s*이제|지금부터\s*너는"),
        (
            "ko_exfiltrate",
            r"(?:시스템\s*프롬프트|비밀번호|api\s*키)(?:를|을)?\s*(?:알려|출력|보여)",
        ),
    )
)


def injection_flags(text: str) -> list[str]:
    """Names of the instruction-like patterns found in ``text`` (empty when none)."""
    return [name for name, pattern in _PATTERNS if pattern.search(text)]
