"""What the write path uses for facts: the LLM when one is configured, rules otherwise."""

from __future__ import annotations

import logging
from pathlib import Path

from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.facts.contradiction import ContradictionJudge, LLMJudge
from madeleine.facts.extract import Extractor
from madeleine.facts.rules import RuleExtractor
from madeleine.facts.slot_classifier import SlotClassifier, load_examples
from madeleine.llm.client import LLM, from_settings

log = logging.getLogger(__name__)


def build_llm(settings: Settings) -> LLM | None:
    llm = from_settings(settings)
    if llm is not None:
        log.info("facts: %s extracts and checks contradictions (rules as fallback)", llm.name)
    return llm


def build_extractor(settings: Settings, llm: LLM | None) -> Extractor:
    rules = RuleExtractor(open_cards=settings.facts.open_cards)
    if llm is None:
        return rules
    from madeleine.facts.llm_extractor import LLMExtractor

    return LLMExtractor(llm, fallback=rules, max_retries=settings.llm.max_retries)


def build_judge(settings: Settings, llm: LLM | None) -> ContradictionJudge | None:
    """None: the rules settle the contradiction band."""
    if llm is None:
        return None
    return LLMJudge(llm, max_retries=min(settings.llm.max_retries, 1))


def build_slot_classifier(
    settings: Settings, embedder: Embedder, cache_dir: Path | None = None
) -> SlotClassifier | None:
    """Slots for open cards by their vectors (None when open cards or the classifier are off).
    Nothing is embedded until the first open card needs it; the fitted model is kept in
    ``cache_dir`` (an embedded store's directory) for the next process."""
    if not (settings.facts.open_cards and settings.facts.slot_classifier):
        return None
    return SlotClassifier(embedder, load_examples(), cache_dir=cache_dir)
