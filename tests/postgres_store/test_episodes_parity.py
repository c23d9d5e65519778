"""The PostgreSQL episode index answers as the embedded one does: the same BM25 scores (to
rounding), the same phrase matches, session digests, vectors and change counters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cryptography.fernet import Fernet

from madeleine.store import open_store
from madeleine.store.postgres.store import PostgresStore
from madeleine.store.records import EpisodeRow, NewEvent
from madeleine.text.analyzer import MultilingualAnalyzer

TURNS = [
    ("mina", "s1", "I moved to Lisbon last spring with my cat Dubu."),
    ("mina", "s1", "The soul_server deploy failed again on Friday."),
    ("mina", "s2", "We booked a JAL flight to Tokyo, window seat please."),
    ("mina", "s2", "Dubu the cat hates the carrier; Tokyo is far."),
    ("mina", "s3", "저는 작년에 서울에서 부산으로 이사했어요."),
    ("joon", "s1", "Lisbon is lovely; my cat lives in Seoul with my parents."),
    ("joon", "s9", "The soul_server logs show a timeout in the gateway."),
]


@pytest.fixture
def stores(tmp_path: Path, pg_url: str, pg_schema: str) -> Iterator[tuple[Any, Any]]:
    sqlite = open_store(tmp_path / "s")
    postgres = PostgresStore(pg_url, schema=pg_schema, vault_key=Fernet.generate_key())
    analyzer = MultilingualAnalyzer()
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(TURNS), 8)).astype(np.float32)
    for store in (sqlite, postgres):
        events = [
            NewEvent(
                user,
                session,
                "message",
                "user",
                None,
                text,
                {"pinned": i == 2},
                1_700_000_000.0 + i,
                f"h{i}",
                None,
            )
            for i, (user, session, text) in enumerate(TURNS)
        ]
        ids, _ = store.append_events(events)
        jobs = store.claim_jobs("w", 100, 60)
        by_event = dict(zip(ids, range(len(TURNS)), strict=True))
        done = []
        for job in jobs:
            i = by_event[job.event_id]
            user, session, text = TURNS[i]
            previous = TURNS[i - 1][2] if i and TURNS[i - 1][1] == session else ""
            done.append(
                (
                    job,
                    EpisodeRow(
                        user_id=user,
                        session_id=session,
                        kind="turn",
                        focus_event_id=job.event_id,
                        context_event_id=None,
                        event_ids=[job.event_id],
                        source_ids=[f"ev_{job.event_id}"],
                        speaker=None,
                        prefix="",
                        body=text,
                        context=previous,
                        occurred_at=1_700_000_000.0 + i,
                        body_terms=" ".join(analyzer.terms(text)),
                        context_terms=" ".join(analyzer.terms(previous)),
                        vector=vectors[i],
                    ),
                )
            )
        store.commit_episodes("w", done)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


@pytest.mark.parametrize(
    ("user", "query"),
    [
        ("mina", "where does my cat Dubu live"),
        ("mina", "soul_server deploy"),
        ("mina", "Tokyo flight window"),
        ("mina", "서울 부산 이사"),
        ("joon", "cat Lisbon"),
        ("joon", "nothing matches zzz"),
    ],
)
def test_bm25_scores_match_the_embedded_store(
    stores: tuple[Any, Any], user: str, query: str
) -> None:
    sqlite, postgres = stores
    terms = MultilingualAnalyzer().terms(query)
    expected = sqlite.lexical_search(user, terms, 10, None)
    found = postgres.lexical_search(user, terms, 10, None)
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert np.allclose([s for _, s in found], [s for _, s in expected], rtol=1e-6)
    window = (1_700_000_001.5, 1_700_000_003.5)
    inside = postgres.lexical_search(user, terms, 10, window)
    expected_inside = sqlite.lexical_search(user, terms, 10, window)
    assert [i for i, _ in inside] == [i for i, _ in expected_inside]
    assert np.allclose([s for _, s in inside], [s for _, s in expected_inside], rtol=1e-6)


def test_phrases_sessions_vectors_and_counters_match(stores: tuple[Any, Any]) -> None:
    sqlite, postgres = stores
    analyzer = MultilingualAnalyzer()
    for terms in (["soul_server"], analyzer.terms("JAL flight"), ["flight", "jal"]):
        assert postgres.phrase_matches("mina", terms, 10) == sqlite.phrase_matches(
            "mina", terms, 10
        )
    terms = analyzer.terms("cat Tokyo")
    expected = sqlite.session_search("mina", terms, 5)
    found = postgres.session_search("mina", terms, 5)
    assert [(s, k) for s, _, k in found] == [(s, k) for s, _, k in expected]
    assert np.allclose([v for _, v, _ in found], [v for _, v, _ in expected])
    a, b = sqlite.user_vectors("mina"), postgres.user_vectors("mina")
    assert np.array_equal(a.ids, b.ids) and np.allclose(a.matrix, b.matrix)
    assert a.sessions == b.sessions and list(a.pinned) == list(b.pinned)
    assert postgres.user_generation("mina") == sqlite.user_generation("mina")
    assert postgres.vector_count("joon") == sqlite.vector_count("joon") == 2
    assert postgres.episodes_for_user("joon") == sqlite.episodes_for_user("joon")
    first = sqlite.episodes_for_user("mina")[0]
    assert postgres.episodes([first.id]) == {first.id: first}
    assert postgres.episode_focus(first.id) == first.focus_event_id
