"""MeCab-ko, when installed, for what Korean patterns alone cannot tell: whether a word is a
person's given name ("저는 민수예요") or a common noun ("저는 학생이에요")."""

from __future__ import annotations

import logging
import threading
from functools import lru_cache

log = logging.getLogger(__name__)
_LOCAL = threading.local()


def _tagger() -> object | None:
    tagger = getattr(_LOCAL, "tagger", False)
    if tagger is False:
        try:
            import mecab_ko

            tagger = mecab_ko.Tagger()
        except Exception as exc:  # not installed, or no dictionary
            log.debug("mecab-ko unavailable for names: %s", exc)
            tagger = None
        _LOCAL.tagger = tagger
    return tagger


@lru_cache(maxsize=4096)
def person_names(text: str) -> frozenset[str] | None:
    """The words MeCab-ko tags as person names (NNP, 인명) in ``text``; None without it."""
    tagger = _tagger()
    if tagger is None:
        return None
    parsed: str = tagger.parse(text)  # type: ignore[attr-defined]
    names: set[str] = set()
    for line in parsed.splitlines():
        surface, _, features = line.partition("\t")
        fields = features.split(",")
        if fields[:2] == ["NNP", "인명"]:
            names.add(surface)
    return frozenset(names)
