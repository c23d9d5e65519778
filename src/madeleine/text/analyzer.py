"""Language-aware analysis into index terms for BM25.

English: lower-casing, stop words, Snowball stemming. Korean: morphological analysis with
MeCab-ko, keeping content morphemes (nouns, verb and adjective stems, roots, foreign words,
numbers) and dropping particles and endings, so "부산으로" and "부산에서" both index "부산".
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from typing import Protocol

import Stemmer

log = logging.getLogger(__name__)

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

ENGLISH_STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can could did didn't do does doesn't doing
    don't down during each few for from further had has have having he her here hers
    herself him himself his how i i'm i've i'd i'll if in into is isn't it it's its
    itself just let's me more most my myself no nor not of off on once only or other
    ought our ours ourselves out over own same she should so some such than that that's
    the their theirs them themselves then there there's these they they're this those
    through to too under until up very was wasn't we we're were what what's when where
    which while who whom why with won't would you you're your yours yourself yourselves
    s t ll ve re d m o y oh yeah yes ok okay hey hi wow really also got get
    """.split()
)

# Content-bearing MeCab-ko part-of-speech tags (Sejong tag set).
_KOREAN_KEEP = frozenset(
    {"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "XR", "SL", "SH", "SN", "MAG"}
)
_KOREAN_DROP_NOUNS = frozenset({"것", "수", "등", "때", "거", "데", "중", "뿐", "듯"})


class Analyzer(Protocol):
    """Turns text into index terms; the same analyzer must serve indexing and querying."""

    name: str

    def terms(self, text: str) -> list[str]: ...

    def proper_nouns(self, text: str) -> list[str]:
        """Names of people, places and things in ``text`` (surface forms)."""
        ...


class MultilingualAnalyzer:
    """English + Korean analyzer; Korean runs through MeCab-ko when it is installed."""

    name = "multi-v2"  # v2: Latin words inside Korean text are also indexed whole

    def __init__(self, morphology: bool = True) -> None:
        """``morphology=False`` indexes Korean by character bigrams even where MeCab-ko is
        installed (the benchmarks' "without morphology" row)."""
        self._local = threading.local()
        self._mecab_available = morphology and _mecab_importable()
        if not morphology:
            self.name = "multi-v2-bigram"
        elif not self._mecab_available:
            log.warning(
                "mecab-ko is not installed: Korean text is indexed by character bigrams, "
                "which is less precise (pip install mecab-ko)"
            )

    def terms(self, text: str) -> list[str]:
        if _HANGUL.search(text):
            return self._korean_terms(text)
        return self._english_terms(_WORD.findall(text))

    def proper_nouns(self, text: str) -> list[str]:
        names = _capitalized_spans(text)
        if _HANGUL.search(text) and self._mecab_available:
            parsed: str = self._tagger().parse(text)  # type: ignore[attr-defined]
            for line in parsed.splitlines():
                surface, _, features = line.partition("\t")
                if features.startswith("NNP"):
                    names.append(surface)
        return list(dict.fromkeys(names))

    def _stemmer(self) -> Stemmer.Stemmer:
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = Stemmer.Stemmer("english")
            self._local.stemmer = stemmer
        return stemmer

    def _english_terms(self, words: Iterable[str]) -> list[str]:
        kept: list[str] = []
        for word in words:
            lowered = word.lower().replace("’", "'")
            if lowered.endswith("'s"):
                lowered = lowered[:-2]
            if lowered in ENGLISH_STOP_WORDS or not lowered:
                continue
            kept.append(lowered.replace("'", ""))
        return [t for t in self._stemmer().stemWords(kept) if t]

    def _tagger(self) -> object:
        tagger = getattr(self._local, "tagger", None)
        if tagger is None:
            import mecab_ko

            tagger = mecab_ko.Tagger()
            self._local.tagger = tagger
        return tagger

    def _korean_terms(self, text: str) -> list[str]:
        if not self._mecab_available:
            return _bigram_terms(text) + self._english_terms(
                w for w in _WORD.findall(text) if not _HANGUL.search(w)
            )
        parsed: str = self._tagger().parse(text)  # type: ignore[attr-defined]
        terms: list[str] = []
        latin: list[str] = []
        for line in parsed.splitlines():
            if "\t" not in line:
                continue
            surface, features = line.split("\t", 1)
            fields = features.split(",")
            tag = fields[0]
            if tag == "SL":
                latin.append(surface)
                continue
            if fields[4:5] == ["Inflect"] and len(fields) > 7:
                # "갔" -> 가/VV/*+았/EP/*: index the stem, not the inflected form.
                for part in fields[7].split("+"):
                    pieces = part.split("/")
                    if len(pieces) >= 2 and pieces[1] in _KOREAN_KEEP:
                        terms.append(pieces[0])
                continue
            head = tag.split("+")[0]
            if head not in _KOREAN_KEEP or surface in _KOREAN_DROP_NOUNS:
                continue
            terms.append(surface.lower())
            if fields[4:5] == ["Compound"] and len(fields) > 7:
                for part in fields[7].split("+"):
                    piece = part.split("/")[0]
                    if len(piece) >= 2 and piece != surface:
                        terms.append(piece)
        english = self._english_terms(latin)
        # A word without Hangul is also indexed whole, as an English query analyzes it:
        # MeCab splits "SR2023abc" into sr / 2023 / abc, and "where is SR2023abc" must
        # still find the Korean sentence that names it.
        whole = self._english_terms(w for w in _WORD.findall(text) if not _HANGUL.search(w))
        seen = set(terms) | set(english)
        return terms + english + [t for t in dict.fromkeys(whole) if t not in seen]


_CAPITALIZED = re.compile(r"[A-Z][\w'’.-]*[\w]|[A-Z]")
_NAME_JOINERS = frozenset({"of", "de", "la", "van", "von", "del", "da"})


def _capitalized_spans(text: str) -> list[str]:
    """Runs of capitalized words ("New York", "Bank of America"), minus sentence-initial
    function words ("What", "When", "I")."""
    spans: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        words = sentence.split()
        current: list[str] = []
        for position, raw in enumerate(words):
            word = raw.strip("\"'“”‘’()[]{},;:!?.")
            lowered = word.lower()
            capital = bool(word) and _CAPITALIZED.fullmatch(word) is not None
            common = lowered in ENGLISH_STOP_WORDS or lowered in _QUESTION_WORDS
            if lowered in _CALENDAR_WORDS:  # time expressions are the time stage's job
                capital = False
            name_word = capital and not (common and (position == 0 or not current))
            if name_word or (current and lowered in _NAME_JOINERS):
                current.append(word)
            else:
                _close(current, spans)
                current = []
            if raw and raw[-1] in ",;:":
                _close(current, spans)
                current = []
        _close(current, spans)
    return spans


def _close(current: list[str], spans: list[str]) -> None:
    while current and current[-1].lower() in _NAME_JOINERS:
        current.pop()
    if current:
        spans.append(" ".join(current))


_CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
_QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how did does do is are was were can could would "
    "should will has have had tell please".split()
)


def _mecab_importable() -> bool:
    try:
        import mecab_ko

        mecab_ko.Tagger()
    except Exception as exc:
        log.debug("mecab-ko unavailable: %s", exc)
        return False
    return True


def _bigram_terms(text: str) -> list[str]:
    terms: list[str] = []
    for run in re.findall(r"[\uac00-\ud7a3]+", text):
        if len(run) == 1:
            terms.append(run)
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms
