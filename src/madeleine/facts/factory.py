"""What the write path uses for facts: the LLM when one is configured, rules otherwise."""

from __future__ import annotations

import logging

from madeleine.config import Settings
from madeleine.facts.contradiction import ContradictionJudge, LLMJudge
from madeleine.facts.extract import Extractor
from madeleine.facts.rules import RuleExtractor
from madeleine.llm.client import LLM, from_settings

log = logging.getLogger(__name__)


def build_llm(settings: Settings) -> LLM | None:
    llm = from_settings(settings)
    if llm is not None:
        log.info("facts: %s extracts and checks contradictions (rules as fallback)", llm.name)
    return llm


def build_extractor(settings: Settings, llm: LLM | None) -> Extractor:
    rules = RuleExtractor()
    if llm is None:
        return rules
    from madeleine.facts.llm_extractor import LLMExtractor

    return LLMExtractor(llm, fallback=rules, max_retries=settings.llm.max_retries)


def build_judge(settings: Settings, llm: LLM | None) -> ContradictionJudge | None:
    """None: the rules settle the contradiction band."""
    if llm is None:
        return None
    return LLMJudge(llm, max_retries=min(settings.llm.max_retries, 1))
