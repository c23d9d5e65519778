"""``madeleine bench lifecycle``: a year of one user's conversations, before and after
maintenance.

A seeded generator writes twelve months of sessions (about two a week) from templates:
stable facts said once or twice, preferences that change a few times and are restated while
they hold (the job mentioned in five sessions), small talk and trivia, rare but important
facts said once early in the year (an allergy, a lease's notice period, a yearly renewal),
and a procedure repeated in several sessions. Questions are asked one day after the last
session, before and after ``Memory.maintain``:

- **store size**: active (searchable) turns, facts and digests;
- **duplicate rate**: share of active turns, and of active cards, that repeat a value
  another active item of the same kind already carries;
- **current truth top-3**: the first of the top three hits that names any value of a
  changing slot names the current one;
- **rare-important top-5**: a rare fact's value is in the top five hits;
- **context precision @500**: share of the items of a 500-token context that carry the
  answer;
- maintenance time and LLM calls.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.scenarios import mean, mentions
from madeleine.maintain.consolidate import MaintenanceReport

DAY = 86_400.0
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
USER = "bench-user"


@dataclass(frozen=True, slots=True)
class Slot:
    """A preference or situation that changes during the year."""

    name: str
    values: tuple[str, ...]
    sentences: tuple[str, ...]  # each with {v}: how the user says (and restates) it
    question: str


SLOTS = (
    Slot(
        "employer",
        ("Acme Robotics", "Globex", "Initech"),
        (
            "I work at {v} as a data engineer.",
            "Like I said, I'm a data engineer at {v}.",
            "I still work at {v} as a data engineer.",
        ),
        "Where do I work now?",
    ),
    Slot(
        "city",
        ("Lyon", "Berlin"),
        ("I live in {v}.", "As you know, I live in {v}.", "I'm still living in {v}."),
        "Which city do I live in?",
    ),
    Slot(
        "drink",
        ("oat lattes", "black coffee", "matcha"),
        (
            "These days I mostly drink {v}.",
            "My usual drink is {v} right now.",
            "I keep drinking {v} every morning.",
        ),
        "What do I drink these days?",
    ),
    Slot(
        "sport",
        ("running", "swimming", "bouldering"),
        (
            "My main sport right now is {v}.",
            "I've been doing a lot of {v} lately.",
            "I still do {v} three times a week.",
        ),
        "Which sport do I do at the moment?",
    ),
)

STABLE = (
    ("My name is Camille Durand.", "What is my name?", "Camille"),
    ("My birthday is on the 14th of May.", "When is my birthday?", "14th of May"),
    ("I grew up in Nantes.", "Where did I grow up?", "Nantes"),
)

RARE_IMPORTANT = (
    (
        "I'm severely allergic to penicillin, please remember that.",
        "Am I allergic to any medicine?",
        "penicillin",
    ),
    (
        "My apartment lease requires 60 days notice before moving out.",
        "How much notice does my lease require?",
        "60 days",
    ),
    (
        "Every March I have to renew the car insurance with Mapfre.",
        "When do I renew my car insurance?",
        "March",
    ),
    (
        "In an emergency, call my sister Ines on her mobile.",
        "Who should be called in an emergency?",
        "Ines",
    ),
    (
        "Safety rule at my lab: never store solvents near the oven.",
        "What is the safety rule at my lab?",
        "solvents",
    ),
)

PROCEDURE = (
    "To book a work trip, first I check the travel policy, then I book the train, "
    "and finally I file the expense report.",
    "For the work trip I did it as usual: first the travel policy, then the train booking, "
    "then the expense report.",
    "Booked another work trip: first I checked the travel policy, then the train, finally "
    "the expense report.",
)
PROCEDURE_QUESTION = ("How do I usually book a work trip?", "travel policy")

SMALL_TALK = (
    "Good morning!",
    "Thanks, that's helpful.",
    "Haha okay.",
    "Great, thanks a lot!",
    "Cool, see you later.",
    "Hello again!",
    "Okay, sounds good.",
    "Thank you so much!",
)
TRIVIA = (
    "The weather was grey and rainy today.",
    "I had pasta with pesto for lunch.",
    "Traffic was terrible on the way home.",
    "I watched a documentary about {x} yesterday.",
    "My neighbour's dog barked all night.",
    "I tried a new bakery near the station.",
    "The train was ten minutes late this morning.",
    "I finished reading a novel about {x}.",
)
TOPICS = ("octopuses", "volcanoes", "the Roman empire", "jazz", "glaciers", "bees", "chess")


@dataclass(slots=True)
class Generated:
    sessions: list[tuple[str, datetime, list[str]]] = field(default_factory=list)
    current: dict[str, str] = field(default_factory=dict)  # slot -> value at the end
    end: datetime = START

    @property
    def turns(self) -> int:
        return sum(len(texts) for _, _, texts in self.sessions)


def generate(seed: int, months: int = 12, per_week: float = 2.0) -> Generated:
    rng = random.Random(seed)
    days = int(months * 30.5)
    count = max(4, int(days / 7 * per_week))
    starts = sorted(rng.sample(range(days), min(count, days)))
    # when each slot changes value: evenly across the year, jittered
    changes = {
        slot.name: sorted(rng.sample(range(30, days - 20), len(slot.values) - 1)) for slot in SLOTS
    }
    rare_sessions = set(rng.sample(range(min(10, count)), len(RARE_IMPORTANT)))
    procedure_sessions = set(rng.sample(range(count // 4, count), 4))
    out = Generated()
    rare = list(RARE_IMPORTANT)
    told: dict[str, str] = {}  # slot -> the value the user last said
    for n, day in enumerate(starts):
        at = START + timedelta(days=day, hours=rng.randint(0, 10))
        texts = [rng.choice(SMALL_TALK)]
        values = {
            slot.name: slot.values[sum(1 for c in changes[slot.name] if c <= day)] for slot in SLOTS
        }
        for slot in SLOTS:
            value = values[slot.name]
            # a change is told the next time the user talks; a value is restated while it holds
            if told.get(slot.name) != value or rng.random() < 0.3:
                texts.append(rng.choice(slot.sentences).format(v=value))
                told[slot.name] = value
        if n < len(STABLE):
            texts.append(STABLE[n][0])
        if n in rare_sessions and rare:
            texts.append(rare.pop(0)[0])
        if n in procedure_sessions:
            texts.append(PROCEDURE[len(procedure_sessions & set(range(n))) % len(PROCEDURE)])
        for _ in range(rng.randint(2, 5)):
            texts.append(rng.choice(TRIVIA).format(x=rng.choice(TOPICS)))
            if rng.random() < 0.6:
                texts.append(rng.choice(SMALL_TALK))
        texts.append(rng.choice(SMALL_TALK))
        out.sessions.append((f"s{n:03d}", at, texts))
        out.current = values
        out.end = at
    return out


@dataclass(frozen=True, slots=True)
class Snapshot:
    size: dict[str, int]
    duplicate_rate: float
    current_top3: float
    rare_top5: float
    context_precision: float


def measure(memory: Memory, data: Generated, now: float) -> Snapshot:
    facts = memory.facts(USER, include_digests=True)
    cards = [c.statement for c in facts if not c.key.startswith(("digest.", "procedure."))]
    digests = sum(1 for c in facts if c.key.startswith(("digest.", "procedure.")))
    turns = [h.text for h in memory.timeline(USER, limit=100_000).items if h.kind == "turn"]
    size = {"turns": len(turns), "facts": len(cards), "digests": digests}
    size["total"] = size["turns"] + size["facts"] + size["digests"]
    tracked = [v for slot in SLOTS for v in slot.values] + [s[2] for s in STABLE]
    repeats = carriers = 0
    for texts in (turns, cards):
        carried = Counter(v for text in texts for v in tracked if mentions(text, v))
        carriers += sum(carried.values())
        repeats += sum(c - 1 for c in carried.values())
    current = []
    precision = []
    for slot in SLOTS:
        hits = memory.search(slot.question, user_id=USER, limit=3, now=now)
        first = next((h for h in hits if any(mentions(h.text, v) for v in slot.values)), None)
        answer = data.current[slot.name]
        current.append(float(first is not None and mentions(first.text, answer)))
        precision.append(_precision(memory, slot.question, answer, now))
    rare = []
    asked = [(question, answer) for _, question, answer in RARE_IMPORTANT]
    for question, answer in (*asked, PROCEDURE_QUESTION):
        hits = memory.search(question, user_id=USER, limit=5, now=now)
        rare.append(float(any(mentions(h.text, answer) for h in hits)))
        precision.append(_precision(memory, question, answer, now))
    return Snapshot(
        size=size,
        duplicate_rate=repeats / carriers if carriers else 0.0,
        current_top3=mean(current),
        rare_top5=mean(rare),
        context_precision=mean(precision),
    )


def _precision(memory: Memory, question: str, answer: str, now: float) -> float:
    items = memory.context(question, user_id=USER, budget_tokens=500, now=now, kb=False).items
    if not items:
        return 0.0
    return sum(1 for item in items if mentions(item.text, answer)) / len(items)


@dataclass(slots=True)
class LifecycleResult:
    seed: int
    turns: int
    sessions: int
    before: Snapshot
    after: Snapshot
    report: MaintenanceReport
    ingest_seconds: float

    def rows(self) -> list[tuple[str, str, str, str]]:
        b, a = self.before, self.after

        def change(x: float, y: float) -> str:
            return "n/a" if not x else f"{(y - x) / x * 100:+.0f} %"

        return [
            (
                "store size (active items)",
                str(b.size["total"]),
                str(a.size["total"]),
                change(b.size["total"], a.size["total"]),
            ),
            (
                "  turns",
                str(b.size["turns"]),
                str(a.size["turns"]),
                change(b.size["turns"], a.size["turns"]),
            ),
            (
                "  facts",
                str(b.size["facts"]),
                str(a.size["facts"]),
                change(b.size["facts"], a.size["facts"]),
            ),
            ("  digests and procedures", str(b.size["digests"]), str(a.size["digests"]), ""),
            (
                "duplicate rate",
                f"{b.duplicate_rate:.3f}",
                f"{a.duplicate_rate:.3f}",
                change(b.duplicate_rate, a.duplicate_rate),
            ),
            ("current truth in top 3", f"{b.current_top3:.2f}", f"{a.current_top3:.2f}", ""),
            ("rare-important in top 5", f"{b.rare_top5:.2f}", f"{a.rare_top5:.2f}", ""),
            (
                "context precision @500 tokens",
                f"{b.context_precision:.3f}",
                f"{a.context_precision:.3f}",
                "",
            ),
        ]


def run_lifecycle(
    *,
    seed: int = 7,
    months: int = 12,
    per_week: float = 2.0,
    location: Path | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> LifecycleResult:
    """Generate, ingest, measure, maintain, measure again. ``location``: a directory or a
    postgresql:// URL (default: a temporary directory); ``options`` go to ``Memory``."""
    data = generate(seed, months, per_week)
    with tempfile.TemporaryDirectory(prefix="madeleine-lifecycle-") as scratch:
        where = location or Path(scratch) / "store"
        memory = Memory(where, **{**(options or {}), "background": False})
        try:
            started = time.perf_counter()
            for session_id, at, texts in data.sessions:
                memory.add(
                    [
                        {
                            "role": "user",
                            "content": text,
                            "timestamp": (at + timedelta(minutes=i)).isoformat(),
                        }
                        for i, text in enumerate(texts)
                    ],
                    user_id=USER,
                    session_id=session_id,
                )
                memory.index_pending()
                if progress:
                    progress("ingest", len(texts))
            ingest = time.perf_counter() - started
            now = (data.end + timedelta(days=1)).timestamp()
            lifecycle = memory._open().lifecycle
            before = measure(memory, data, now)
            lifecycle.recalls.drain()  # measuring is not using: no reinforcement from it
            report = memory.consolidate(USER, now=now)
            after = measure(memory, data, now)
            lifecycle.recalls.drain()
        finally:
            memory.close()
    return LifecycleResult(
        seed=seed,
        turns=data.turns,
        sessions=len(data.sessions),
        before=before,
        after=after,
        report=report,
        ingest_seconds=ingest,
    )


def format_result(result: LifecycleResult) -> str:
    lines = [
        f"Memory lifecycle — one simulated user, seed {result.seed}: {result.sessions} "
        f"sessions, {result.turns} turns over 12 months",
        "| metric | before | after | change |",
        "|---|---|---|---|",
    ]
    lines += [f"| {m} | {b} | {a} | {c} |" for m, b, a, c in result.rows()]
    counts = ", ".join(f"{n} {k}" for k, n in sorted(result.report.counts().items()))
    lines.append(
        f"maintenance: {result.report.seconds:.2f} s, {result.report.llm_calls} LLM calls "
        f"({counts})"
    )
    lines.append(f"ingest: {result.ingest_seconds:.1f} s")
    return "\n".join(lines)


def targets_met(result: LifecycleResult) -> dict[str, bool]:
    b, a = result.before, result.after
    return {
        "duplicates -80 %": b.duplicate_rate > 0 and a.duplicate_rate <= 0.2 * b.duplicate_rate,
        "current truth top-3 >= 0.95": a.current_top3 >= 0.95,
        "rare-important top-5 = 1.0": a.rare_top5 == 1.0,
        "store size -30 %": a.size["total"] <= 0.7 * b.size["total"],
    }


__all__: Sequence[str] = ["format_result", "generate", "run_lifecycle", "targets_met"]
