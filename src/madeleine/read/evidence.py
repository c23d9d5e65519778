"""Evidence packing: the sentences of a user's turns that carry what an agent acts on.

A long service conversation says the account number once, between "Perfect." and "Is there
anything else?". Whole turns spend a context budget on the second kind; this module ranks
**sentences** instead, by what they carry and how relevant their turn is:

- **Specifics** are the spans an agent cannot guess: numbers, amounts, dates, times,
  identifiers ("ADT-7789234"), and proper names said mid-sentence ("Bright Future Electric").
  Adjacent specific words form one span ("September 20", "$1,500").
- A sentence is **evidence** when it brings a specific the context does not hold yet or
  shares a word with the question; anything else (acknowledgements, pleasantries, "What do
  you mean?") is filler and never takes budget, however relevant its turn.
- Value per word: (1 + turn relevance + question words) × (new specifics + 2 × question
  words) over the square root of the sentence's length: a short sentence with three
  amounts beats a long one with one.
  Sentences are taken greedily by value; a sentence whose specifics are all already in the
  context adds nothing and is skipped (the assistant reading back what the user said).
- A bare answer ("March 15th, 1985.") keeps the question it answers as its label when the
  turn before it asked one ("…your date of birth?").

Nothing here knows a domain: no word lists of banking or travel, only the shape of what is
said. Korean has no capital letters; its numbers, codes and the question's words carry it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from madeleine.facts.rules.extractor import split_sentences
from madeleine.read.stages import spoken_words
from madeleine.records import Hit
from madeleine.text.analyzer import ENGLISH_STOP_WORDS

ELLIPSIS = "…"
_WORD = re.compile(r"\S+")
_EDGE = re.compile(r"^[^\w$€£₩#]+|[^\w%]+$")
_DIGIT = re.compile(r"\d")
_CODE = re.compile(r"[A-Z][A-Z0-9]+(?:[-/][A-Z0-9]+)*s?")  # "ADT", "VOCs", "H1B", "DL"
_TOKEN = re.compile(r"[^\W_]+")
_YEAR = re.compile(r"(?:19|20)\d\d")  # "2023" is said of many things; "2023 tesla model 3" is one
_GROUPED = re.compile(r"(?<=\d)[,.](?=\d{3}\b)")  # thousands separators
_BREAKS_SPAN = re.compile(r"[,;:.!?)]$")  # "$5,000, $3,500": two amounts
DISTINCT_DIGITS = 3  # digits enough to name one thing ("15000", "4429853327"); "20th" does not
PARSED_TURNS = 8192  # turns whose sentences and spans are remembered
FORMULAIC_SESSIONS = 2  # sessions needed to call a word formulaic (said in every one)
LABEL_MAX_WORDS = 4  # a label ends the question: "(…your date of birth?)" → "(date of birth?)"
LABEL_WORDS = 2  # a sentence with fewer words of its own besides its specifics is a bare answer
_SMALL_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"i", "i'm", "i'll", "i've", "i'd", "ok", "okay"}


@lru_cache(maxsize=PARSED_TURNS)
def parsed(body: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A turn's sentences, each with its specific spans. A turn's text never changes and the
    same turns feed every question about the user: parsed once per process."""
    return tuple((text, tuple(specifics(text))) for text in split_sentences(body) or [body])


def specifics(sentence: str) -> list[str]:
    """The sentence's specific spans, normalised (lower case, letters and digits)."""
    spans: list[str] = []
    run: list[str] = []
    for position, raw in enumerate(_WORD.findall(sentence)):
        core = _EDGE.sub("", raw)
        if core and _is_specific(core, position):
            run.append(core)
            if not _BREAKS_SPAN.search(raw):
                continue
        if run:
            spans.append(_normal(" ".join(run)))
            run = []
    if run:
        spans.append(_normal(" ".join(run)))
    return [span for span in spans if span]


def _is_specific(word: str, position: int) -> bool:
    if _DIGIT.search(word):
        return True
    if _CODE.fullmatch(word) and word not in {"I", "OK"}:
        return True
    return (
        position > 0
        and word[0].isupper()
        and word.casefold() not in _SMALL_WORDS
        and "'" not in word[1:]
    )


def _normal(text: str) -> str:
    """Lower case, letters and digits; "$15,000" and "15000" are one number."""
    return " ".join(token.casefold() for token in _TOKEN.findall(_GROUPED.sub("", text)))


def _keys(span: str) -> list[str]:
    """What makes a span new: its distinctive numbers when it has any ("Apple 15000" read
    back after "15000" says nothing new), else the whole span ("december 20th" is not
    "november 20th"; a year is no distinctive number)."""
    numbers = [
        t
        for t in span.split()
        if sum(c.isdigit() for c in t) >= DISTINCT_DIGITS and not _YEAR.fullmatch(t)
    ]
    return numbers or [span]


def new_spans(spans: Iterable[str], covered: set[str]) -> int:
    """How many of ``spans`` hold a key the context does not have yet."""
    return sum(1 for span in spans if not covered.issuperset(_keys(span)))


def cover(spans: Iterable[str], covered: set[str]) -> None:
    for span in spans:
        covered.update(_keys(span))


@dataclass(slots=True)
class Sentence:
    turn: int  # index of its turn in the pool
    index: int  # its place in the turn
    text: str
    spans: frozenset[str]
    matched: float  # share of the question's words it holds
    words: int
    label: str = ""  # the question a bare answer replies to

    def cost(self, count: Callable[[str], int]) -> int:
        # "…" marks a gap inside a word, at no word's cost
        return count(f"{self.label} {self.text}" if self.label else self.text)


@dataclass(slots=True)
class Pool:
    """Candidate turns (in session order where known) and how relevant each one is."""

    hits: list[Hit] = field(default_factory=list)
    relevance: list[float] = field(default_factory=list)

    def add(self, hit: Hit, relevance: float) -> None:
        self.hits.append(hit)
        self.relevance.append(relevance)


@dataclass(frozen=True, slots=True)
class Chosen:
    """One turn's chosen sentences, rendered with "…" where text was left out."""

    hit: Hit
    text: str
    value: float


def choose(
    pool: Pool,
    terms: set[str],
    analyze: Callable[[str], Iterable[str]],
    covered: set[str],
    budget: int,
    count: Callable[[str], int],
    costs: tuple[int, int],
    open_sessions: set[str],
    previous: Callable[[Hit], Hit | None] | None = None,
) -> list[Chosen]:
    """The sentences worth their words, greedily by value, within ``budget`` tokens.
    ``covered`` (the span keys the context already holds, ``spans_of``) grows as sentences
    are taken.
    ``costs``: what a turn's line and a session's heading cost besides the sentences;
    ``open_sessions`` (those the context already has a heading for) grows too."""
    line_cost, section_cost = costs
    sentences, bodies = _sentences(pool, terms, analyze, previous)
    ranked = sorted(
        sentences,
        key=lambda s: -_value(s, pool.relevance[s.turn], new_spans(s.spans, covered)),
    )
    taken: dict[int, list[Sentence]] = {}
    opened: set[int] = set()
    spent = 0
    for sentence in ranked:
        if not new_spans(sentence.spans, covered) and sentence.matched == 0:
            continue  # everything it says is already there
        cost = sentence.cost(count)
        hit = pool.hits[sentence.turn]
        if sentence.turn not in opened:
            cost += line_cost
            if hit.session_id not in open_sessions:
                cost += section_cost
        if spent + cost > budget:
            continue
        spent += cost
        opened.add(sentence.turn)
        open_sessions.add(hit.session_id)
        cover(sentence.spans, covered)
        taken.setdefault(sentence.turn, []).append(sentence)
    chosen = []
    for turn, picked in taken.items():
        hit = pool.hits[turn]
        value = sum(_value(s, pool.relevance[turn], len(s.spans)) for s in picked)
        chosen.append(Chosen(hit, _render(hit, bodies[turn], picked), value))
    chosen.sort(key=lambda c: -c.value)
    return chosen


def _sentences(
    pool: Pool,
    terms: set[str],
    analyze: Callable[[str], Iterable[str]],
    previous: Callable[[Hit], Hit | None] | None,
) -> tuple[list[Sentence], list[list[str]]]:
    sentences: list[Sentence] = []
    bodies: list[list[str]] = []
    for turn, hit in enumerate(pool.hits):
        sentences_of = parsed(spoken_words(hit.text, hit.speaker))
        body = [text for text, _ in sentences_of]
        bodies.append(body)
        for index, (text, found) in enumerate(sentences_of):
            spans = frozenset(found)
            said = set(analyze(text))
            matched = len(terms & said) / len(terms) if terms else 0.0
            if not spans and not matched:
                continue  # filler: nothing specific, nothing asked about
            sentence = Sentence(turn, index, text, spans, matched, len(text.split()))
            if previous is not None and spans and _bare(text, spans):
                asked = previous(hit)
                if asked is not None:
                    sentence.label = _question_of(asked)
            sentences.append(sentence)
    return sentences, bodies


def _value(sentence: Sentence, relevance: float, new: int) -> float:
    return (
        (1 + relevance + sentence.matched)
        * (new + 2 * sentence.matched)
        / math.sqrt(sentence.words + 2)
    )


def _bare(text: str, spans: frozenset[str]) -> bool:
    """An answer that names nothing but its values: "March 15th, 1985.", "Yes, 4429."."""
    inside = {t for span in spans for t in span.split()}
    own = [
        t
        for t in (token.casefold() for token in _TOKEN.findall(text))
        if t not in inside and t not in _SMALL_WORDS and t not in {"yes", "no", "it", "its"}
    ]
    return len(own) < LABEL_WORDS


def _question_of(hit: Hit) -> str:
    """The last question the turn asks, as a label ("date of birth?"), or nothing."""
    for sentence, _ in reversed(parsed(spoken_words(hit.text, hit.speaker))):
        if sentence.rstrip().endswith("?"):
            words = sentence.split()[-LABEL_MAX_WORDS:]
            while len(words) > 1 and _EDGE.sub("", words[0]).casefold() in _SMALL_WORDS:
                words.pop(0)
            return f"({' '.join(words)})"
    return ""


def _render(hit: Hit, body: Sequence[str], picked: Sequence[Sentence]) -> str:
    speaker = hit.speaker or ""
    prefix = f"{speaker}: " if speaker and hit.text.startswith(f"{speaker}: ") else ""
    parts: list[str] = []
    last = -1
    label = next((s.label for s in picked if s.label), "")
    if label:
        parts.append(label)
    for sentence in sorted(picked, key=lambda s: s.index):
        gap = sentence.index != last + 1
        parts.append(f"{ELLIPSIS}{sentence.text}" if gap else sentence.text)
        last = sentence.index
    if last < len(body) - 1:
        parts[-1] += ELLIPSIS
    return prefix + " ".join(parts)


def spans_of(texts: Iterable[str]) -> set[str]:
    """The keys of every specific span the texts hold: what the context says already."""
    found: set[str] = set()
    for text in texts:
        for _, spans in parsed(text):
            cover(spans, found)
    return found


def formulaic_words(
    turns: Sequence[Hit], analyze: Callable[[str], Iterable[str]]
) -> frozenset[str]:
    """The words every session of ``turns`` says (at least two sessions): "thank", "help",
    "anything" in a user's service calls. A turn of these alone, with nothing specific, is a
    formula, whatever its words share with the question. One session tells nothing apart."""
    per_session: dict[str, set[str]] = {}
    for hit in turns:
        per_session.setdefault(hit.session_id, set()).update(
            analyze(spoken_words(hit.text, hit.speaker))
        )
    if len(per_session) < FORMULAIC_SESSIONS:
        return frozenset()
    return frozenset(set.intersection(*per_session.values()))


def numeric_share(turns: Sequence[Hit]) -> float:
    """The share of the turns' sentences that hold a number, a date, a time or a code: near
    0 for casual chat, 0.1–0.4 for calls about accounts, bookings, bills and treatments."""
    sentences = numeric = 0
    for hit in turns:
        for _, spans in parsed(spoken_words(hit.text, hit.speaker)):
            sentences += 1
            numeric += any(_DIGIT.search(span) for span in spans)
    return numeric / sentences if sentences else 0.0
