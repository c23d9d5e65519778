"""``madeleine bench extraction``: what the write path draws from a conversation, held against
LoCoMo's own observations (issue 31).

Each conversation is ingested once per speaker into a fresh store, with that speaker as the
user (role "user") and the other as the assistant (role "assistant"), one ``session_id`` per
LoCoMo session, every message at its session's date (turns ``TURN_GAP_SECONDS`` apart) with
its ``dia_id`` as message id and in ``metadata["dia_id"]``. The user's cards (current,
superseded and archived versions; session digests, keys ``digest.…``, left out and counted)
are traced back to turns through ``Memory.sources``, which returns each source message by
the id it was added with: the ``dia_id``.

Against the speaker's observations (``[statement, evidence dia_id(s)]``):

- **grounded**: share of observations with a card drawn from one of their evidence turns;
- **matched**: share of observations with a card drawn from one of their evidence turns that
  *states* the observation (so matched <= grounded; same denominator);
- **precision**: share of cards that state some observation of that speaker in that
  conversation, whatever turns they were drawn from.

A card *states* an observation when its statement holds at least half of the observation's
content words (``2 * shared >= content``). Content words: the project's English analysis
(``MultilingualAnalyzer``: lower-casing, punctuation and possessive "'s" dropped, its stop
words, Snowball stemming, so "adopted" ~ "adopt" and "kids" ~ "kid") minus name-like words:
both speakers' names and "user" (a card says "The user …" where an observation names the
speaker). Other names (friends, pets, authors) stay content words: a card that names the dog
"Max" states more of "Caroline adopted a dog named Max" than one that does not. An
observation with no content word left can never be matched.

Rates are micro-averaged: over observations (grounded, matched) or cards (precision) of every
speaker counted. ``cards / 100 user turns``: cards per hundred turns of the store's user;
``ingest turns/s``: every turn ingested (both roles, each conversation once per speaker) over
the wall time of ``add`` + ``wait``.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.locomo import load_locomo, parse_evidence
from madeleine.config import Settings
from madeleine.store.backends import is_url
from madeleine.text.analyzer import MultilingualAnalyzer
from madeleine.text.timeparse import parse_timestamp

TURN_GAP_SECONDS = 5
DIGEST_PREFIX = "digest."
NAME_LIKE: tuple[str, ...] = ("user",)  # what a card calls the speaker instead of a name
_ANALYZER = MultilingualAnalyzer(morphology=False)  # English; no MeCab load for LoCoMo
_NUMBER = re.compile(r"\d+")


# -- data ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observation:
    speaker: str
    session: int  # the LoCoMo session number ("S3" -> 3)
    statement: str
    evidence: frozenset[str]  # dia_ids


@dataclass(frozen=True, slots=True)
class Session:
    key: str  # "session_3": the session_id the turns are added under
    number: int
    start: datetime
    turns: tuple[Mapping[str, Any], ...]  # load_locomo's messages: name, content, id


@dataclass(frozen=True, slots=True)
class Dialogue:
    """One LoCoMo conversation with its two speakers and their observations."""

    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    observations: tuple[Observation, ...]

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def turns_of(self, speaker: str) -> int:
        return sum(1 for s in self.sessions for t in s.turns if t["name"] == speaker)


def evidence_of(raw: object) -> frozenset[str]:
    """An observation's evidence: one string ("D1:3", "D1:3; D1:5", "D:11:26") or a list of
    them, nested or not; anything unreadable yields no id."""
    if isinstance(raw, str):
        return parse_evidence([raw])
    if isinstance(raw, list | tuple):
        return frozenset().union(*(evidence_of(item) for item in raw))
    return frozenset()


def parse_observations(sample_id: str, raw: object) -> tuple[tuple[str, str], list[Observation]]:
    """One conversation's entry of the observations file: its speakers and observations."""
    if not isinstance(raw, dict) or not isinstance(raw.get("sessions"), dict):
        raise ValueError(f"observations of {sample_id}: expected speaker_a, speaker_b, sessions")
    speakers = (str(raw.get("speaker_a", "")), str(raw.get("speaker_b", "")))
    if not all(speakers):
        raise ValueError(f"observations of {sample_id}: speaker_a and speaker_b are required")
    found = []
    for key, session in raw["sessions"].items():
        number = _number(key)
        by_speaker = session.get("observations") if isinstance(session, dict) else None
        for speaker, entries in (by_speaker or {}).items():
            if speaker not in speakers:
                raise ValueError(f"observations of {sample_id} {key}: unknown speaker {speaker!r}")
            for entry in entries or []:
                statement, evidence = _entry(entry)
                if statement:
                    found.append(Observation(speaker, number, statement, evidence_of(evidence)))
    return speakers, found


def _entry(entry: object) -> tuple[str, object]:
    """``[statement, evidence]`` as the file has it; a bare statement has no evidence."""
    if isinstance(entry, str):
        return entry.strip(), None
    if isinstance(entry, list | tuple) and entry and isinstance(entry[0], str):
        return entry[0].strip(), list(entry[1:])
    return "", None


def load_dialogues(locomo_path: Path, observations_path: Path) -> list[Dialogue]:
    """Both files joined by sample id; a clear ValueError when either is not what it should be."""
    try:
        conversations = load_locomo(locomo_path)
    except (KeyError, AttributeError, IndexError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{locomo_path}: not a LoCoMo file ({problem})") from None
    labels = json.loads(Path(observations_path).read_text(encoding="utf-8"))
    if not isinstance(labels, dict):
        raise ValueError(f"{observations_path}: expected an object keyed by conversation id")
    dialogues = []
    for convo in conversations:
        if convo.sample_id not in labels:
            raise ValueError(f"{observations_path} has no observations of {convo.sample_id}")
        speakers, observations = parse_observations(convo.sample_id, labels[convo.sample_id])
        sessions = tuple(
            Session(key, _number(key), _start(convo.sample_id, key, date), tuple(messages))
            for key, date, messages in convo.sessions
        )
        dialogues.append(Dialogue(convo.sample_id, speakers, sessions, tuple(observations)))
    return dialogues


def select(
    dialogues: Sequence[Dialogue],
    conversations: Sequence[str] | None = None,
    limit_sessions: int | None = None,
) -> list[Dialogue]:
    """The chosen conversations, cut to their first ``limit_sessions`` sessions and the
    observations of those sessions."""
    if limit_sessions is not None and limit_sessions < 1:
        raise ValueError(f"--limit-sessions must be at least 1, got {limit_sessions}")
    known = {d.sample_id for d in dialogues}
    unknown = [c for c in conversations or () if c not in known]
    if unknown:
        raise ValueError(f"unknown conversation(s) {', '.join(unknown)}; known: {sorted(known)}")
    chosen = [d for d in dialogues if not conversations or d.sample_id in conversations]
    if not chosen:
        raise ValueError("no conversations selected")
    if limit_sessions is None:
        return chosen
    cut = []
    for dialogue in chosen:
        sessions = dialogue.sessions[:limit_sessions]
        kept = {s.number for s in sessions}
        observations = tuple(o for o in dialogue.observations if o.session in kept)
        cut.append(Dialogue(dialogue.sample_id, dialogue.speakers, sessions, observations))
    return cut


def _number(key: str) -> int:
    match = _NUMBER.search(key)
    if match is None:
        raise ValueError(f"session key {key!r} has no number")
    return int(match.group())


def _start(sample_id: str, key: str, date: str) -> datetime:
    if not date:
        raise ValueError(f"{sample_id} {key} has no date_time")
    return parse_timestamp(date, f"{sample_id} {key} date_time")


# -- matching (pure) --------------------------------------------------------------------------


def dropped_words(names: Iterable[str]) -> frozenset[str]:
    """The analyzed forms of the names and of ``NAME_LIKE``: left out of content words."""
    return frozenset(t for name in (*names, *NAME_LIKE) for t in _ANALYZER.terms(name))


def content_words(text: str, dropped: frozenset[str]) -> frozenset[str]:
    """Stemmed words of ``text`` without stop words and without ``dropped``."""
    return frozenset(t for t in _ANALYZER.terms(text) if t not in dropped)


def states(statement: frozenset[str], observation: frozenset[str]) -> bool:
    """A statement states an observation when it holds at least half of its content words."""
    return bool(observation) and 2 * len(statement & observation) >= len(observation)


# -- scoring (pure) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractedCard:
    key: str
    statement: str
    status: str  # current, superseded, flagged
    extractor: str  # "rules" or "llm:<model>"
    turns: frozenset[str]  # the dia_ids it was drawn from


@dataclass(frozen=True, slots=True)
class SpeakerRun:
    """What one store yielded: the speaker's observations and cards, and the ingest cost."""

    conversation: str
    speaker: str
    names: tuple[str, ...]  # dropped from content words: both speakers
    observations: tuple[Observation, ...]
    cards: tuple[ExtractedCard, ...]
    digests: int = 0
    turns: int = 0  # ingested, both roles
    user_turns: int = 0
    seconds: float = 0.0  # add + wait
    failed: int = 0  # messages the indexer gave up on


@dataclass(frozen=True, slots=True)
class Counts:
    """Sums that add up across speakers and conversations; rates are micro-averages."""

    observations: int = 0
    grounded: int = 0
    matched: int = 0
    cards: int = 0
    superseded: int = 0
    stating: int = 0  # cards that state some observation
    digests: int = 0
    user_turns: int = 0
    turns: int = 0
    seconds: float = 0.0
    failed: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def grounded_rate(self) -> float:
        return _share(self.grounded, self.observations)

    @property
    def matched_rate(self) -> float:
        return _share(self.matched, self.observations)

    @property
    def precision(self) -> float:
        return _share(self.stating, self.cards)

    @property
    def cards_per_100(self) -> float:
        return _share(100 * self.cards, self.user_turns)

    @property
    def turns_per_second(self) -> float:
        return _share(self.turns, self.seconds)

    def to_json(self) -> dict[str, Any]:
        rates = {
            "grounded_rate": self.grounded_rate,
            "matched_rate": self.matched_rate,
            "precision": self.precision,
            "cards_per_100_user_turns": self.cards_per_100,
            "ingest_turns_per_second": self.turns_per_second,
        }
        return asdict(self) | {k: None if v != v else round(v, 4) for k, v in rates.items()}


def _share(part: float, whole: float) -> float:
    return part / whole if whole else float("nan")


@dataclass(frozen=True, slots=True)
class Verdicts:
    """Per observation: (grounded, matched); per card: whether it states some observation."""

    observations: tuple[tuple[bool, bool], ...]
    cards: tuple[bool, ...]


def judge(
    observations: Sequence[Observation], cards: Sequence[ExtractedCard], names: Iterable[str]
) -> Verdicts:
    """The metrics' definitions, card by observation."""
    dropped = dropped_words(names)
    wanted = [content_words(o.statement, dropped) for o in observations]
    said = [content_words(c.statement, dropped) for c in cards]
    outcomes = []
    for observation, words in zip(observations, wanted, strict=True):
        drawn = [i for i, c in enumerate(cards) if c.turns & observation.evidence]
        outcomes.append((bool(drawn), any(states(said[i], words) for i in drawn)))
    stating = tuple(any(states(s, w) for w in wanted) for s in said)
    return Verdicts(tuple(outcomes), stating)


def count(run: SpeakerRun, verdicts: Verdicts) -> Counts:
    return Counts(
        observations=len(run.observations),
        grounded=sum(g for g, _ in verdicts.observations),
        matched=sum(m for _, m in verdicts.observations),
        cards=len(run.cards),
        superseded=sum(c.status == "superseded" for c in run.cards),
        stating=sum(verdicts.cards),
        digests=run.digests,
        user_turns=run.user_turns,
        turns=run.turns,
        seconds=run.seconds,
        failed=run.failed,
    )


# -- result and table -----------------------------------------------------------------------


@dataclass(slots=True)
class ExtractionResult:
    extractor: str  # what the settings configure: "rules" or "llm:<model>"
    runs: list[SpeakerRun] = field(default_factory=list)

    def verdicts(self, run: SpeakerRun) -> Verdicts:
        return judge(run.observations, run.cards, run.names)

    def speaker_counts(self) -> list[tuple[SpeakerRun, Counts]]:
        return [(run, count(run, self.verdicts(run))) for run in self.runs]

    def by_conversation(self) -> dict[str, Counts]:
        totals: dict[str, Counts] = {}
        for run, counts in self.speaker_counts():
            totals[run.conversation] = totals.get(run.conversation, Counts()) + counts
        return totals

    def total(self) -> Counts:
        return sum(self.by_conversation().values(), Counts())

    def producers(self) -> Counter[str]:
        """Which extractor produced the cards (an LLM's fallback to rules shows here)."""
        return Counter(c.extractor for run in self.runs for c in run.cards)

    def table(self, per_speaker: bool = False) -> str:
        lines = [
            "| conversation | observations | grounded | matched | cards | superseded "
            "| precision | cards / 100 user turns | ingest turns/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        speakers = self.speaker_counts()
        for conversation, counts in self.by_conversation().items():
            lines.append(_row(conversation, counts))
            if per_speaker:
                for run, own in speakers:
                    if run.conversation == conversation:
                        lines.append(_row(f"{conversation} {run.speaker}", own))
        lines.append(_row("all", self.total()))
        return "\n".join(lines)

    def summary(self) -> str:
        total = self.total()
        made = ", ".join(f"{name} {n}" for name, n in self.producers().most_common()) or "none"
        lines = [
            f"extractor: {self.extractor} (cards by extractor: {made})",
            f"ingest: {total.turns} turns (both roles, each conversation once per speaker) in "
            f"{total.seconds:.1f} s; {total.digests} session digests excluded from the cards",
        ]
        if total.failed:
            lines.append(f"WARNING: {total.failed} messages could not be indexed")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The numbers, and every card and observation with its verdict (for reading misses)."""
        conversations: dict[str, Any] = {
            name: {"counts": counts.to_json(), "speakers": {}}
            for name, counts in self.by_conversation().items()
        }
        for run, counts in self.speaker_counts():
            verdicts = self.verdicts(run)
            conversations[run.conversation]["speakers"][run.speaker] = {
                "counts": counts.to_json(),
                "observations": [
                    {
                        "statement": o.statement,
                        "session": o.session,
                        "evidence": sorted(o.evidence),
                        "grounded": grounded,
                        "matched": matched,
                    }
                    for o, (grounded, matched) in zip(
                        run.observations, verdicts.observations, strict=True
                    )
                ],
                "cards": [
                    asdict(c) | {"turns": sorted(c.turns), "states_an_observation": ok}
                    for c, ok in zip(run.cards, verdicts.cards, strict=True)
                ],
            }
        return {
            "extractor": self.extractor,
            "cards_by_extractor": dict(self.producers()),
            "total": self.total().to_json(),
            "conversations": conversations,
        }


def _row(label: str, c: Counts) -> str:
    cells = [
        str(c.observations),
        _rate(c.grounded_rate),
        _rate(c.matched_rate),
        str(c.cards),
        str(c.superseded),
        _rate(c.precision),
        _rate(c.cards_per_100, 1),
        _rate(c.turns_per_second, 1),
    ]
    return f"| {label} | " + " | ".join(cells) + " |"


def _rate(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


# -- running ----------------------------------------------------------------------------------


def configured_extractor(settings: Settings) -> str:
    """The name cards of the configured extractor carry: the LLM's when one is configured
    (``madeleine.llm.from_settings``' condition), else rules."""
    if settings.llm.base_url and settings.llm.model:
        return f"llm:{settings.llm.model}"
    return "rules"


def memory_options(embedder: str | None) -> dict[str, Any]:
    """Options of every store the bench opens: the settings decide, but for ``--embedder``."""
    return {"embedder": embedder} if embedder else {}


def speaker_messages(session: Session, speaker: str) -> list[dict[str, Any]]:
    """A session's turns as ``speaker`` (the user) and the other speaker (the assistant) say
    them: timed from the session's date, ``dia_id`` as id and in metadata."""
    return [
        {
            "role": "user" if turn["name"] == speaker else "assistant",
            "name": turn["name"],
            "content": turn["content"],
            "id": turn["id"],
            "timestamp": session.start + timedelta(seconds=TURN_GAP_SECONDS * index),
            "metadata": {"dia_id": turn["id"]},
        }
        for index, turn in enumerate(session.turns)
    ]


def ingest(memory: Memory, user_id: str, dialogue: Dialogue, speaker: str) -> tuple[float, int]:
    """Add every session, wait for indexing: (wall seconds, messages that failed to index)."""
    started = time.perf_counter()
    for session in dialogue.sessions:
        memory.add(speaker_messages(session, speaker), user_id=user_id, session_id=session.key)
    done = memory.wait()
    seconds = time.perf_counter() - started
    return seconds, 0 if done else int(memory.stats()["failed_jobs"])


def read_cards(memory: Memory, user_id: str) -> tuple[list[ExtractedCard], int]:
    """Every version of the user's cards but digests, each with the dia_ids it was drawn from
    (``Memory.sources`` returns the source messages by the ids they were added with); and how
    many digests were left out."""
    every = memory.facts(user_id, include_history=True, include_archived=True, include_digests=True)
    cards = [
        ExtractedCard(
            card.key,
            card.statement,
            card.status,
            card.extractor,
            frozenset(str(m["id"]) for m in memory.sources(card.id, user_id=user_id)),
        )
        for card in every
        if not card.key.startswith(DIGEST_PREFIX)
    ]
    return cards, len(every) - len(cards)


def run_speaker(memory: Memory, dialogue: Dialogue, speaker: str) -> SpeakerRun:
    user_id = f"{dialogue.sample_id}-{speaker}"
    seconds, failed = ingest(memory, user_id, dialogue, speaker)
    cards, digests = read_cards(memory, user_id)
    return SpeakerRun(
        conversation=dialogue.sample_id,
        speaker=speaker,
        names=dialogue.speakers,
        observations=tuple(o for o in dialogue.observations if o.speaker == speaker),
        cards=tuple(cards),
        digests=digests,
        turns=dialogue.turns,
        user_turns=dialogue.turns_of(speaker),
        seconds=seconds,
        failed=failed,
    )


@contextmanager
def _locations(location: Path | str | None) -> Iterator[Callable[[str], Path | str]]:
    """Where each fresh store goes: a directory per store under ``location`` (or a temporary
    directory, removed afterwards); on PostgreSQL the same schema, one user per store."""
    if isinstance(location, str) and is_url(location):
        url = location
        yield lambda name: url
        return
    with tempfile.TemporaryDirectory(prefix="madeleine-extraction-") as scratch:
        base = Path(location) if location is not None else Path(scratch)
        yield lambda name: base / name


def run_extraction(
    dialogues: Sequence[Dialogue],
    *,
    location: Path | str | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> ExtractionResult:
    """Per conversation and speaker: a fresh store, the whole conversation ingested, the
    user's cards read back."""
    result = ExtractionResult("rules")
    with _locations(location) as where:
        for dialogue in dialogues:
            for index, speaker in enumerate(dialogue.speakers):
                store = where(f"{dialogue.sample_id}-{index}")
                with Memory(store, **(options or {})) as memory:
                    result.extractor = configured_extractor(memory.settings)
                    result.runs.append(run_speaker(memory, dialogue, speaker))
                if progress is not None:
                    progress("ingest", dialogue.turns)
    return result
