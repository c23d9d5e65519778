"""Which extractor the write path uses: the LLM when one is configured, rules otherwise."""

from __future__ import annotations

import logging

from madeleine.config import Settings
from madeleine.facts.extract import Extractor
from madeleine.facts.rules import RuleExtractor

log = logging.getLogger(__name__)


def build_extractor(settings: Settings) -> Extractor:
    rules = RuleExtractor()
    if not settings.llm_base_url or not settings.llm_model:
        return rules
    from madeleine.facts.llm_extractor import LLMExtractor
    from madeleine.llm.client import from_settings

    llm = from_settings(settings)
    if llm is None:
        return rules
    log.info("fact extraction: %s (rules as fallback)", settings.llm_model)
    return LLMExtractor(llm, fallback=rules, max_retries=settings.llm_max_retries)
