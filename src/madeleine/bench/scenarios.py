"""Madeleine's own development suites: scenarios of dated conversation sessions, in English
and Korean, shipped as package data (``madeleine/bench/suites/*.json``).

A suite file holds one suite in one language::

    {"suite": "truth", "language": "en",
     "scenarios": [{"id": "en-move-denver", "split": "dev", "user": "Alex",
                    "sessions": [{"id": "s1", "time": "2024-01-10T09:00:00",
                                  "messages": [{"role": "user", "content": "..."}, ...]}],
                    "questions": [...]}]}

Each scenario is one user (its ``id`` is the user id; the user's own turns are named after
``user``). Its questions are read by the suite's runner (``truth.py``, ``keyfacts.py``).
Every scenario belongs to the ``dev`` or the ``test`` half: tune on ``dev``, report ``test``.

``distractors_<language>.json`` holds small-talk and off-topic sessions (``{name}`` stands for
the user's name, so greetings name the user: "Nice to meet you, {name}!"); each scenario gets
``distractors_per_scenario`` of them (a suite file's setting, default 3), dated between its own
sessions, chosen deterministically from its position. A suite file may also set
``companions_per_scenario``: each scenario then also holds the sessions of that many other
scenarios of its split dated before its own last session (the user's other matters, renamed
to the user), so that its questions compete with other accounts, dates and plans.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from madeleine.api import Memory

Split = Literal["dev", "test", "all"]
SPLITS: tuple[Split, ...] = ("dev", "test")
LANGUAGES: tuple[str, ...] = ("en", "ko")
DISTRACTORS_PER_SCENARIO = 3


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    time: datetime
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    language: str
    split: str
    user: str
    sessions: tuple[Session, ...]
    questions: tuple[dict[str, Any], ...]
    last_time: datetime  # the scenario's last session: questions are asked a day later

    @property
    def turns(self) -> int:
        return sum(len(s.messages) for s in self.sessions)

    def messages(self) -> Iterable[str]:
        """Every message's content (distractors included)."""
        for session in self.sessions:
            for message in session.messages:
                yield str(message["content"])


def alternatives(item: str | Sequence[str]) -> tuple[str, ...]:
    """A key fact or value: one string, or a list of alternatives any one of which counts."""
    values = (item,) if isinstance(item, str) else tuple(item)
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ValueError(f"a value must be a non-empty string or list of strings, got {item!r}")
    return values


@lru_cache(maxsize=4096)
def _pattern(value: str) -> re.Pattern[str]:
    # no Latin letter or digit right before or after: "Ally" is not in "really"; Korean
    # values match inside a word, so particles may follow ("해운대로")
    return re.compile(rf"(?<![a-z0-9]){re.escape(value.casefold())}(?![a-z0-9])")


def mentions(text: str, item: str | Sequence[str]) -> bool:
    """Whether ``text`` contains one of the alternatives, case-insensitively and as a whole
    word (no Latin letter or digit directly before or after it)."""
    folded = text.casefold()
    return any(_pattern(value).search(folded) for value in alternatives(item))


def _read(name: str) -> dict[str, Any]:
    path = resources.files("madeleine.bench") / "suites" / name
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"suite file {name}: expected a JSON object")
    return data


def suite_files(suite: str) -> list[str]:
    folder = resources.files("madeleine.bench") / "suites"
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if entry.name.startswith(f"{suite}_") and entry.name.endswith(".json")
    )


def load_distractors(language: str) -> list[list[dict[str, Any]]]:
    data = _read(f"distractors_{language}.json")
    sessions = data.get("sessions")
    if not isinstance(sessions, list) or not sessions:
        raise ValueError(f"distractors_{language}.json: 'sessions' must be a non-empty list")
    return sessions


def _session(raw: dict[str, Any], user: str, where: str) -> Session:
    messages = []
    for message in raw["messages"]:
        if message.get("role") not in ("user", "assistant"):
            raise ValueError(f"{where}: role must be 'user' or 'assistant'")
        if not str(message.get("content", "")).strip():
            raise ValueError(f"{where}: a message has no content")
        named = dict(message)
        if named["role"] == "user":
            named.setdefault("name", user)
        messages.append(named)
    if not messages:
        raise ValueError(f"{where}: a session needs messages")
    return Session(str(raw["id"]), datetime.fromisoformat(raw["time"]), tuple(messages))


def _distracted(
    sessions: list[Session],
    pool: Sequence[list[dict[str, Any]]],
    user: str,
    position: int,
    count: int = DISTRACTORS_PER_SCENARIO,
) -> list[Session]:
    """The scenario's sessions with ``count`` distractor sessions dated between them (a day
    after each of the first ones, the rest after the last)."""
    ordered = sorted(sessions, key=lambda s: s.time)
    extra = []
    for n in range(count):
        raw = pool[(position * count + n) % len(pool)]
        anchor = ordered[min(n, len(ordered) - 1)].time
        messages = tuple(
            {
                **m,
                "content": str(m["content"]).replace("{name}", user),
                **({"name": user} if m["role"] == "user" else {}),
            }
            for m in raw
        )
        extra.append(Session(f"smalltalk-{n + 1}", anchor + timedelta(days=1, hours=n), messages))
    return sorted([*ordered, *extra], key=lambda s: s.time)


def _companions(
    raws: Sequence[dict[str, Any]],
    own: Sequence[Sequence[Session]],
    position: int,
    count: int,
    user: str,
) -> list[Session]:
    """The sessions of the next ``count`` scenarios of the same split, as this user's own
    other matters (renamed to this user): competing accounts, dates and plans."""
    split = raws[position]["split"]
    same = [n for n, raw in enumerate(raws) if raw["split"] == split]
    at = same.index(position)
    chosen = [same[(at + step) % len(same)] for step in range(1, count + 1)]
    borrowed = []
    for n in dict.fromkeys(c for c in chosen if c != position):
        other = str(raws[n]["user"])
        for session in own[n]:
            messages = tuple(
                {
                    **m,
                    "content": str(m["content"]).replace(other, user),
                    **({"name": user} if m["role"] == "user" else {}),
                }
                for m in session.messages
            )
            borrowed.append(Session(f"other-{raws[n]['id']}-{session.id}", session.time, messages))
    return borrowed


def load_suite(
    suite: str,
    *,
    split: Split = "all",
    languages: Sequence[str] | None = None,
    distractors: bool = True,
) -> list[Scenario]:
    """The scenarios of one suite ('truth' or 'context'), of the split and languages asked."""
    if split not in ("dev", "test", "all"):
        raise ValueError(f"split must be dev, test or all, got {split!r}")
    scenarios: list[Scenario] = []
    files = suite_files(suite)
    if not files:
        raise ValueError(f"no suite files for {suite!r}")
    for name in files:
        data = _read(name)
        language = str(data.get("language", ""))
        if data.get("suite") != suite or language not in LANGUAGES:
            raise ValueError(f"{name}: expected suite {suite!r} in one of {LANGUAGES}")
        if languages and language not in languages:
            continue
        pool = load_distractors(language) if distractors else []
        count = int(data.get("distractors_per_scenario", DISTRACTORS_PER_SCENARIO))
        companions = int(data.get("companions_per_scenario", 0)) if distractors else 0
        raws = list(data["scenarios"])
        own: list[list[Session]] = []
        for raw in raws:
            where = f"{name}: scenario {raw.get('id')!r}"
            if raw.get("split") not in SPLITS:
                raise ValueError(f"{where}: split must be one of {SPLITS}")
            own.append([_session(s, str(raw["user"]), where) for s in raw["sessions"]])
        for position, raw in enumerate(raws):
            user = str(raw["user"])
            sessions = list(own[position])
            if pool:
                sessions = _distracted(sessions, pool, user, position, count)
            own_last = max(s.time for s in own[position])
            last = max(s.time for s in sessions)  # small talk may follow the last own session
            if companions:
                sessions += [
                    s
                    for s in _companions(raws, own, position, companions, user)
                    if s.time < own_last
                ]
            scenarios.append(
                Scenario(
                    id=str(raw["id"]),
                    language=language,
                    split=str(raw["split"]),
                    user=user,
                    sessions=tuple(sorted(sessions, key=lambda s: s.time)),
                    questions=tuple(raw["questions"]),
                    last_time=last,
                )
            )
    ids = [s.id for s in scenarios]
    if len(ids) != len(set(ids)):
        raise ValueError(f"suite {suite!r}: scenario ids must be unique")
    return [s for s in scenarios if split == "all" or s.split == split]


def feed(memory: Memory, scenario: Scenario) -> int:
    """Add every session of the scenario through the public API, as user ``scenario.id``;
    the number of messages."""
    count = 0
    for session in scenario.sessions:
        messages = [
            {**m, "id": f"{scenario.id}/{session.id}/{n}"}
            for n, m in enumerate(session.messages, start=1)
        ]
        memory.add(
            messages,
            user_id=scenario.id,
            session_id=session.id,
            timestamp=session.time.isoformat(),
        )
        count += len(messages)
    return count


def build_store(
    memory: Memory,
    scenarios: Sequence[Scenario],
    progress: Callable[[str, int], Any] | None = None,
) -> None:
    """Feed every scenario, then index everything (in this thread when the store has no
    background worker, else by waiting for it)."""
    for scenario in scenarios:
        feed(memory, scenario)
    if memory.settings.worker.background:
        memory.wait()
        if progress is not None:
            progress("index", sum(s.turns for s in scenarios))
    else:
        memory.index_pending(None if progress is None else (lambda n: progress("index", n)))


def memory_options(embedder: str | None) -> dict[str, Any]:
    return {"background": False, **({"embedder": embedder} if embedder else {})}


def by_language(rows: Iterable[tuple[str, float]]) -> dict[str, list[float]]:
    grouped: dict[str, list[float]] = {}
    for language, value in rows:
        grouped.setdefault(language, []).append(value)
        grouped.setdefault("all", []).append(value)
    return grouped


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
