"""A deterministic synthetic user (sessions, base sentences, queries), so runs are comparable."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

from madeleine.bench.scale.templates import (
    CLOSERS,
    DETAILS,
    OPENERS,
    PLANTED,
    QUERIES,
    SMALL_TALK,
    TOPIC_WEIGHTS,
    TOPICS,
    VOCAB,
)

USER_ID = "scale-user"
USER_NAME = "Dana"
_TIMELINE_START = datetime(2022, 1, 3, tzinfo=UTC)
_TIMELINE_DAYS = 3 * 365
_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def _number(rng: Random) -> str:
    return str(rng.choice((2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 45, 60, 90)))


def _clock(hour: int, minutes: str) -> str:
    return f"{hour % 12 or 12}:{minutes} {'am' if hour < 12 else 'pm'}"


_GENERATED: dict[str, Callable[[Random], str]] = {
    "number": _number,
    "number3": lambda rng: str(rng.randint(120, 290)),
    "number4": lambda rng: f"{rng.randint(0, 9999):04d}",
    "price": lambda rng: (
        rng.choice(("$", "€", "£"))
        + str(rng.choice((12, 18, 25, 40, 60, 85)) * rng.choice((1, 1, 2, 3, 5, 10, 20)))
    ),
    "percent": lambda rng: f"{rng.choice((3, 5, 8, 10, 12, 15, 20, 25, 30, 40))}%",
    "time": lambda rng: _clock(rng.randint(7, 21), rng.choice(("00", "15", "30", "45"))),
    "date": lambda rng: f"{rng.choice(VOCAB['month'])} {rng.randint(1, 28)}",
    "code": lambda rng: (
        "".join(rng.choice(_LETTERS) for _ in range(2)) + "-" + str(rng.randint(1000, 99999))
    ),
    "flight": lambda rng: (
        rng.choice(("LH", "KL", "TP", "KE", "OZ", "NH", "AY", "BA", "IB"))
        + " "
        + str(rng.randint(100, 9999))
    ),
    "gate": lambda rng: f"{rng.choice('ABCDEFG')}{rng.randint(1, 60)}",
}

_FIELD = re.compile(r"\{([a-z_]+?)(\d?)\}")
_KEEP_CAPITAL = re.compile(r"I\b|\{(?!relative\})")  # "I …", or a name: no lower-casing


def _fill(
    template: str,
    rng: Random,
    keep: Mapping[str, str] | None = None,
    keep_share: float = 0.0,
) -> tuple[str, dict[str, str]]:
    """Fill ``{field}``/``{field2}`` slots (one value per distinct slot); return the values too.

    With ``keep``, each slot reuses the value it had there with probability ``keep_share``
    and draws a fresh one otherwise: a sibling of the same base sentence.
    """
    values: dict[str, str] = {}

    def pick(match: re.Match[str]) -> str:
        key = match.group(0)
        if key not in values:
            name = match.group(1)
            if keep is not None and key in keep and rng.random() < keep_share:
                values[key] = keep[key]
            elif name + match.group(2) in _GENERATED:  # {number3} is its own generator
                values[key] = _GENERATED[name + match.group(2)](rng)
            elif name in _GENERATED:
                values[key] = _GENERATED[name](rng)
            else:
                taken = set(values.values())
                choices = VOCAB[name]
                value = rng.choice(choices)
                for _ in range(5):  # {city} and {city2} should differ
                    if value not in taken:
                        break
                    value = rng.choice(choices)
                values[key] = value
        return values[key]

    text = _FIELD.sub(pick, template)
    return text[:1].upper() + text[1:], values


def _text(template: str, rng: Random) -> str:
    return _fill(template, rng)[0]


# -- the synthetic user ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    role: str
    name: str | None
    content: str
    timestamp: datetime
    base: int | None  # index into the pool; None for planted facts (embedded for real)

    @property
    def speaker(self) -> str:
        return self.name or self.role

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "id": self.id,
            "timestamp": self.timestamp,
        }
        if self.name:
            message["name"] = self.name
        return message


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    turns: list[Turn]


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    kind: str  # 'planted' (has a target turn id) or 'general'
    target: str | None = None


@dataclass(slots=True)
class SyntheticUser:
    """A user's sessions, the base-sentence pool they were built from, and a query set.

    ``pool[i]`` is the episode body ("Speaker: sentence") whose real embedding stands in for
    every turn built from base ``i``; ``base_of`` maps a turn's body to its base.
    """

    user_id: str
    sessions: list[Session]
    pool: list[str]
    base_of: dict[str, int]
    queries: list[Query]
    now: datetime

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def pool_count(pool_size: int) -> int:
    """Base sentences in the pool: small talk plus at least one per topic and role."""
    return len(SMALL_TALK) + max(pool_size, 2 * len(TOPICS))


def generate_user(
    episodes: int, *, seed: int = 0, queries: int = 200, pool_size: int = 2000
) -> SyntheticUser:
    """A deterministic user with exactly ``episodes`` turns over ~3 years of sessions.

    Sessions of 10-30 turns alternate the user and an assistant on one or two topics. Turns
    are base sentences (filled templates) with optional openers, closers and freshly filled
    details, so texts stay lexically varied. A quarter of the queries ask about planted facts.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be positive, got {episodes}")
    rng = Random(seed)
    pool: list[str] = []
    sources: list[tuple[str, str, dict[str, str]]] = []  # (role, template, slot values)
    buckets: dict[tuple[str, str], list[int]] = {}
    for role, text in SMALL_TALK:
        buckets.setdefault(("small", role), []).append(len(pool))
        pool.append(_body(role, text))
        sources.append((role, text, {}))
    keys = [(topic, role) for topic in TOPICS for role in ("user", "assistant")]
    seen = set(pool)
    for i in range(pool_count(pool_size) - len(SMALL_TALK)):
        topic, role = keys[i % len(keys)]
        templates = TOPICS[topic][0 if role == "user" else 1]
        template, body, values = "", "", dict[str, str]()
        for _ in range(20):  # prefer distinct sentences; accept a repeat if the slots run dry
            template = rng.choice(templates)
            text, values = _fill(template, rng)
            body = _body(role, text)
            if body not in seen:
                break
        seen.add(body)
        buckets.setdefault((topic, role), []).append(len(pool))
        pool.append(body)
        sources.append((role, template, values))

    topics = list(TOPIC_WEIGHTS)
    weights = [TOPIC_WEIGHTS[t] for t in topics]
    lengths: list[int] = []
    while sum(lengths) < episodes:
        lengths.append(rng.randint(10, 30))
    lengths[-1] -= sum(lengths) - episodes
    starts = sorted(
        _TIMELINE_START
        + timedelta(days=rng.randrange(_TIMELINE_DAYS), minutes=rng.randint(7 * 60, 23 * 60))
        for _ in lengths
    )
    base_of: dict[str, int] = {}
    sessions: list[Session] = []
    counter = 0
    for number, (length, moment) in enumerate(zip(lengths, starts, strict=True)):
        main = rng.choices(topics, weights)[0]
        other = rng.choices(topics, weights)[0] if rng.random() < 0.3 else main
        role = "user"
        turns: list[Turn] = []
        for position in range(length):
            topic = other if position > length // 2 else main
            small = rng.random() < 0.1
            base = rng.choice(buckets[("small" if small else topic, role)])
            _, template, values = sources[base]
            if small:
                content = template
            else:
                # a sibling of the base sentence: about half of its slots drawn afresh
                content = _decorate(template, _fill(template, rng, values, 0.5)[0], role, rng)
            body = _body(role, content)
            base_of.setdefault(body, base)
            counter += 1
            turns.append(
                Turn(
                    id=f"m{counter:07d}",
                    role=role,
                    name=USER_NAME if role == "user" else None,
                    content=content,
                    timestamp=moment,
                    base=base_of[body],
                )
            )
            moment += timedelta(seconds=rng.randint(15, 240))
            if rng.random() > 0.1:  # mostly alternating, sometimes a double message
                role = "assistant" if role == "user" else "user"
        sessions.append(Session(f"s{number:05d}", turns))

    planted_queries = _plant(sessions, queries // 4, rng)
    general = [Query(_text(rng.choice(QUERIES), rng), "general") for _ in range(queries)]
    mixed = planted_queries + general[: queries - len(planted_queries)]
    rng.shuffle(mixed)
    now = _TIMELINE_START + timedelta(days=_TIMELINE_DAYS + 1)
    return SyntheticUser(USER_ID, sessions, pool, base_of, mixed, now)


def warmup_queries(count: int) -> list[str]:
    """General queries from a seed of their own, so warming up leaves the timed set as it is."""
    rng = Random(-1)
    return [_text(rng.choice(QUERIES), rng) for _ in range(count)]


def _body(role: str, text: str) -> str:
    """A turn's episode body ("Dana: …"), the key the pooled embedder finds its base by."""
    return f"{USER_NAME if role == 'user' else role}: {text}"


def _decorate(template: str, sentence: str, role: str, rng: Random) -> str:
    """Openers, closers and a freshly filled detail: the same base, said differently."""
    parts = [sentence]
    chatty = role == "user"
    if rng.random() < (0.25 if chatty else 0.05):
        lowered = not _KEEP_CAPITAL.match(template)
        parts[0] = f"{rng.choice(OPENERS)} {sentence[0].lower() if lowered else sentence[0]}"
        parts[0] += sentence[1:]
    if rng.random() < (0.35 if chatty else 0.15):
        parts.append(_text(rng.choice(DETAILS), rng))
    if chatty and rng.random() < 0.1:
        parts.append(rng.choice(CLOSERS))
    return " ".join(parts)


def _plant(sessions: list[Session], count: int, rng: Random) -> list[Query]:
    """Replace one user turn in ``count`` sessions spread over the timeline with a fact."""
    count = min(count, len(sessions))
    if count <= 0:
        return []
    chosen = sorted(rng.sample(range(len(sessions)), count))
    queries = []
    for n, index in enumerate(chosen):
        turns = sessions[index].turns
        positions = [i for i, t in enumerate(turns) if t.role == "user"] or [0]
        at = rng.choice(positions)
        statement, question = PLANTED[n % len(PLANTED)]
        filled = _fill(statement + "\x00" + question, rng)[0].split("\x00")
        old = turns[at]
        turns[at] = Turn(old.id, "user", USER_NAME, filled[0], old.timestamp, None)
        queries.append(Query(filled[1], "planted", old.id))
    return queries
