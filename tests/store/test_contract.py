"""The storage contract: what every backend must do, checked only through the port.

No SQL, no backend imports, no private attributes: a test here that passes on one backend
and fails on another is a bug in the other backend (or in this contract).
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from madeleine.errors import EmbedderMismatchError
from madeleine.facts.cards import CardDraft, Category, Stability
from madeleine.store.ports import Store
from madeleine.store.records import (
    EpisodeRow,
    IndexJob,
    NewEvent,
    NewMention,
    StoredEvent,
    Transaction,
)
from madeleine.text.pii import TOKEN, PiiCategory

DIM = 8
ALICE = "alice"
BOB = "bob"
NOW = 1_700_000_000.0
LONG_LEASE = 60.0

# -- helpers ------------------------------------------------------------------------------------


def unit_vector(seed: int) -> npt.NDArray[np.float32]:
    """A small fake embedding, normalized (never a real model)."""
    vector = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return vector / np.float32(np.linalg.norm(vector))


def new_event(
    user_id: str,
    content: str,
    *,
    session_id: str = "s1",
    at: float = 1_000.0,
    external_id: str | None = None,
    role: str = "user",
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> NewEvent:
    # the hash leaves the user out, as the write path's does: dedupe is per user in the store
    content_hash = hashlib.sha256(f"{session_id}|{role}|{name}|{content}|{at}".encode()).hexdigest()
    return NewEvent(
        user_id=user_id,
        session_id=session_id,
        kind="message",
        role=role,
        name=name,
        content=content,
        metadata=metadata or {},
        occurred_at=at,
        content_hash=content_hash,
        external_id=external_id,
    )


def append(store: Store, *events: NewEvent) -> list[int]:
    added, duplicates = store.append_events(events)
    assert duplicates == []
    return added


def loaded(store: Store, event_id: int) -> StoredEvent:
    event = store.load_event(event_id)
    assert event is not None
    return event


def episode_row(store: Store, event: StoredEvent) -> EpisodeRow:
    """The event as one episode: its content is its own analyzed terms (lowercase words)."""
    previous = store.previous_event(event)
    return EpisodeRow(
        user_id=event.user_id,
        session_id=event.session_id,
        kind=event.kind,
        focus_event_id=event.id,
        context_event_id=None if previous is None else previous.id,
        event_ids=[event.id],
        source_ids=[event.source_id],
        speaker=event.name,
        prefix="",
        body=event.content,
        context="" if previous is None else previous.content,
        occurred_at=event.occurred_at,
        body_terms=event.content,
        context_terms="" if previous is None else previous.content,
        vector=unit_vector(event.id),
    )


def index_pending(store: Store, worker: str = "w1") -> None:
    """Claim every pending job and commit one episode per event, in one batch."""
    jobs = store.claim_jobs(worker, 1000, LONG_LEASE)
    store.commit_episodes(
        worker, [(job, episode_row(store, loaded(store, job.event_id))) for job in jobs]
    )


def episode_of(store: Store, user_id: str, event_id: int) -> int:
    found = [ep.id for ep in store.episodes_for_user(user_id) if ep.focus_event_id == event_id]
    assert len(found) == 1
    return found[0]


def claim_one(store: Store, worker: str = "w1", lease: float = LONG_LEASE) -> IndexJob:
    jobs = store.claim_jobs(worker, 10, lease)
    assert len(jobs) == 1
    return jobs[0]


def draft(
    statement: str,
    *,
    key: str = "preference.seat",
    sources: list[int] | None = None,
    category: Category = Category.PREFERENCE,
    stability: Stability = Stability.STABLE,
    importance: float = 0.5,
    valid_from: float | None = None,
) -> CardDraft:
    return CardDraft.model_validate(
        {
            "statement": statement,
            "category": category,
            "key": key,
            "stability": stability,
            "importance": importance,
            "valid_from": None if valid_from is None else datetime.fromtimestamp(valid_from, UTC),
            "sources": sources or [],
        }
    )


def insert_in(
    store: Store, tx: Transaction, user_id: str, card: CardDraft, *, status: str = "current"
) -> int:
    return store.facts.insert(
        tx,
        user_id,
        card,
        unit_vector(len(card.statement)),
        card.statement.lower(),
        status=status,
        extractor="rules",
        now=NOW,
    )


def insert_fact(store: Store, user_id: str, card: CardDraft, *, status: str = "current") -> int:
    with store.transaction() as tx:
        return insert_in(store, tx, user_id, card, status=status)


def supersede(store: Store, old_id: int, new_id: int, valid_to: float | None = None) -> None:
    with store.transaction() as tx:
        store.facts.supersede(tx, old_id, new_id, NOW + 1, valid_to)


def fact_ids(facts: list[Any]) -> list[int]:
    return [fact.number for fact in facts]


def vaulted(token: str, category: PiiCategory = PiiCategory.EMAIL) -> str:
    """How a vaulted value appears in a scrubbed message."""
    return f"[pii:{category.value}:{token}]"


def assert_consistent(store: Store) -> None:
    """``integrity()``: the index counts agree and nothing is orphaned."""
    report = store.integrity()
    broken = {k: v for k, v in report.items() if k.startswith("orphan") or "without" in k}
    counts = {k: v for k, v in report.items() if k not in broken}
    assert all(v == 0 for v in broken.values()), report
    assert len(set(counts.values())) <= 1, report


# -- the event log ------------------------------------------------------------------------------


def test_append_events_returns_the_new_ids(store: Store) -> None:
    added, duplicates = store.append_events(
        [new_event(ALICE, "hello there", at=1.0), new_event(ALICE, "how are you", at=2.0)]
    )
    assert len(added) == 2 and len(set(added)) == 2 and duplicates == []
    first = loaded(store, added[0])
    assert (first.user_id, first.session_id, first.role, first.content) == (
        ALICE,
        "s1",
        "user",
        "hello there",
    )
    assert first.occurred_at == 1.0 and first.recorded_at > 0


def test_load_event_of_an_unknown_id_is_none(store: Store) -> None:
    assert store.load_event(999_999) is None


def test_event_round_trips_name_metadata_and_external_id(store: Store) -> None:
    [event_id] = append(
        store,
        new_event(ALICE, "hi", name="Alice", metadata={"pinned": True, "n": 1}, external_id="m1"),
    )
    event = loaded(store, event_id)
    assert event.name == "Alice" and event.metadata == {"pinned": True, "n": 1}
    assert event.external_id == "m1" and event.source_id == "m1"


def test_same_external_id_is_a_duplicate(store: Store) -> None:
    [first] = append(store, new_event(ALICE, "one", external_id="m1"))
    added, duplicates = store.append_events([new_event(ALICE, "other text", external_id="m1")])
    assert (added, duplicates) == ([], [first])


def test_same_content_hash_is_a_duplicate(store: Store) -> None:
    [first] = append(store, new_event(ALICE, "same words"))
    added, duplicates = store.append_events([new_event(ALICE, "same words")])
    assert (added, duplicates) == ([], [first])


def test_duplicate_within_one_batch_is_reported(store: Store) -> None:
    added, duplicates = store.append_events([new_event(ALICE, "twice"), new_event(ALICE, "twice")])
    assert len(added) == 1 and duplicates == added


def test_duplicates_are_per_user(store: Store) -> None:
    append(store, new_event(ALICE, "same words", external_id="m1"))
    added, duplicates = store.append_events([new_event(BOB, "same words", external_id="m1")])
    assert len(added) == 1 and duplicates == []


def test_duplicate_is_not_queued_again(store: Store) -> None:
    append(store, new_event(ALICE, "once"))
    store.append_events([new_event(ALICE, "once")])
    assert store.pending_jobs(ALICE) == 1


def test_previous_event_is_the_earlier_turn_of_the_same_session(store: Store) -> None:
    first, _other_session, second = append(
        store,
        new_event(ALICE, "first", at=1.0),
        new_event(ALICE, "elsewhere", at=1.5, session_id="s2"),
        new_event(ALICE, "second", at=2.0),
    )
    previous = store.previous_event(loaded(store, second))
    assert previous is not None and previous.id == first
    assert store.previous_event(loaded(store, first)) is None


def test_event_refs_name_events_by_external_id_or_ev_id(store: Store) -> None:
    named, anonymous = append(
        store,
        new_event(ALICE, "a", external_id="m1"),
        new_event(ALICE, "b", session_id="s2"),
    )
    assert store.event_refs([named, anonymous, 999_999]) == {
        named: ("m1", "s1"),
        anonymous: (f"ev_{anonymous}", "s2"),
    }
    assert store.event_refs([]) == {}


def test_events_for_user_are_in_time_order(store: Store) -> None:
    late, early = append(store, new_event(ALICE, "late", at=5.0), new_event(ALICE, "early", at=1.0))
    assert [e.id for e in store.events_for_user(ALICE)] == [early, late]


def test_event_by_external_id_and_has_user(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a", external_id="m1"))
    assert store.event_by_external_id(ALICE, "m1") == event_id
    assert store.event_by_external_id(ALICE, "missing") is None
    assert store.has_user(ALICE) and not store.has_user(BOB)


def test_another_user_never_sees_a_users_events(store: Store) -> None:
    append(store, new_event(ALICE, "secret", external_id="m1"))
    [bob_event] = append(store, new_event(BOB, "mine"))
    assert [e.id for e in store.events_for_user(BOB)] == [bob_event]
    assert store.event_by_external_id(BOB, "m1") is None
    assert store.previous_event(loaded(store, bob_event)) is None


def test_events_exist_inside_a_transaction(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    with store.transaction() as tx:
        assert store.events_exist(tx, [999_999, event_id])
        assert not store.events_exist(tx, [999_999])


# -- the outbox ---------------------------------------------------------------------------------


def test_appended_events_are_pending(store: Store) -> None:
    append(store, new_event(ALICE, "a", at=1.0), new_event(ALICE, "b", at=2.0))
    append(store, new_event(BOB, "c"))
    assert store.pending_jobs(ALICE) == 2 and store.pending_jobs(BOB) == 1
    assert store.pending_jobs() == 3


def test_claim_jobs_hands_out_each_event_once_with_its_user(store: Store) -> None:
    ids = append(store, new_event(ALICE, "a", at=1.0), new_event(BOB, "b", at=2.0))
    jobs = store.claim_jobs("w1", 10, LONG_LEASE)
    assert sorted((j.event_id, j.user_id) for j in jobs) == sorted(
        zip(ids, [ALICE, BOB], strict=True)
    )


def test_claim_jobs_respects_the_limit(store: Store) -> None:
    append(store, *(new_event(ALICE, f"m{i}", at=float(i)) for i in range(3)))
    assert len(store.claim_jobs("w1", 2, LONG_LEASE)) == 2
    assert len(store.claim_jobs("w1", 2, LONG_LEASE)) == 1


def test_a_leased_job_is_not_claimed_again_until_the_lease_expires(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    claim_one(store, "w1", lease=0.05)
    assert store.claim_jobs("w2", 10, LONG_LEASE) == []
    time.sleep(0.1)
    assert claim_one(store, "w2").event_id == event_id


def test_a_leased_job_is_still_pending(store: Store) -> None:
    append(store, new_event(ALICE, "a"))
    claim_one(store)
    assert store.pending_jobs(ALICE) == 1


def test_commit_episodes_retires_the_job_and_writes_the_episode(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "window seat", external_id="m1", name="Alice"))
    job = claim_one(store)
    store.commit_episodes("w1", [(job, episode_row(store, loaded(store, event_id)))])
    assert store.pending_jobs(ALICE) == 0
    [episode] = store.episodes_for_user(ALICE)
    assert (episode.user_id, episode.session_id, episode.kind) == (ALICE, "s1", "message")
    assert episode.focus_event_id == event_id and episode.event_ids == (event_id,)
    assert episode.source_ids == ("m1",) and episode.speaker == "Alice"
    assert episode.body == "window seat" and episode.occurred_at == 1_000.0
    assert store.episodes([episode.id, 999_999]) == {episode.id: episode}
    assert store.episode_focus(episode.id) == event_id


def test_episode_focus_of_an_unknown_episode_is_none(store: Store) -> None:
    assert store.episode_focus(999_999) is None


def test_commit_episodes_retires_a_job_exactly_once(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    job = claim_one(store)
    row = episode_row(store, loaded(store, event_id))
    store.commit_episodes("w1", [(job, row)])
    store.commit_episodes("w1", [(job, row)])
    assert len(store.episodes_for_user(ALICE)) == 1
    assert store.claim_jobs("w1", 10, LONG_LEASE) == []


def test_a_job_committed_without_an_episode_is_retired(store: Store) -> None:
    append(store, new_event(ALICE, "a"))
    store.commit_episodes("w1", [(claim_one(store), None)])
    assert store.pending_jobs(ALICE) == 0 and store.episodes_for_user(ALICE) == []


def test_a_job_committed_by_a_worker_that_did_not_claim_it_is_ignored(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    job = claim_one(store, "w1")
    row = episode_row(store, loaded(store, event_id))
    store.commit_episodes("w2", [(job, row)])
    assert store.episodes_for_user(ALICE) == [] and store.pending_jobs(ALICE) == 1
    store.commit_episodes("w1", [(job, row)])
    assert len(store.episodes_for_user(ALICE)) == 1


def test_a_worker_whose_lease_was_taken_over_cannot_commit(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    stale = claim_one(store, "w1", lease=0.05)
    time.sleep(0.1)
    fresh = claim_one(store, "w2")
    row = episode_row(store, loaded(store, event_id))
    store.commit_episodes("w1", [(stale, row)])
    assert store.episodes_for_user(ALICE) == [] and store.pending_jobs(ALICE) == 1
    store.commit_episodes("w2", [(fresh, row)])
    assert len(store.episodes_for_user(ALICE)) == 1 and store.pending_jobs(ALICE) == 0


def test_fail_job_releases_the_job_for_another_claim(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    store.fail_job(claim_one(store, "w1"), "w1", "boom")
    assert claim_one(store, "w2").event_id == event_id


def test_fail_job_by_another_worker_leaves_the_lease_alone(store: Store) -> None:
    append(store, new_event(ALICE, "a"))
    job = claim_one(store, "w1")
    store.fail_job(job, "w2", "not mine")
    assert store.claim_jobs("w3", 10, LONG_LEASE) == []


def test_a_job_that_keeps_failing_ends_up_in_failed_jobs(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    for _ in range(50):
        jobs = store.claim_jobs("w1", 10, LONG_LEASE)
        if not jobs:
            break
        store.fail_job(jobs[0], "w1", "boom")
    [failed] = store.failed_jobs()
    assert (failed["event_id"], failed["user_id"], failed["error"]) == (event_id, ALICE, "boom")
    assert store.pending_jobs(ALICE) == 0


def test_then_writes_commit_with_the_episodes(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "window seat"))
    job = claim_one(store)
    written: list[int] = []

    def then(tx: Transaction) -> None:
        written.append(insert_in(store, tx, ALICE, draft("likes window seats", sources=[event_id])))

    store.commit_episodes("w1", [(job, episode_row(store, loaded(store, event_id)))], then)
    assert store.facts.get(written[0]) is not None
    assert len(store.episodes_for_user(ALICE)) == 1


def test_a_failing_then_rolls_back_the_episodes_and_the_job_retirement(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "window seat"))
    job = claim_one(store, "w1", lease=0.05)

    def then(tx: Transaction) -> None:
        insert_in(store, tx, ALICE, draft("likes window seats", sources=[event_id]))
        raise RuntimeError("extractor failed")

    with pytest.raises(RuntimeError, match="extractor failed"):
        store.commit_episodes("w1", [(job, episode_row(store, loaded(store, event_id)))], then)
    assert (
        store.episodes_for_user(ALICE) == []
        and store.lexical_search(ALICE, ["window"], 5, None) == []
    )
    assert store.facts.read_current(ALICE) == []
    assert store.pending_jobs(ALICE) == 1
    time.sleep(0.1)
    assert claim_one(store, "w2").event_id == event_id


# -- the episode index --------------------------------------------------------------------------


def test_user_vectors_are_the_users_episode_vectors_by_ascending_id(store: Store) -> None:
    events = append(
        store,
        new_event(ALICE, "a", at=3.0, session_id="s1"),
        new_event(ALICE, "b", at=1.0, session_id="s2", metadata={"pinned": True}),
        new_event(BOB, "c", at=2.0),
    )
    index_pending(store)
    vectors = store.user_vectors(ALICE)
    episodes = store.episodes(vectors.ids.tolist())
    assert vectors.ids.tolist() == sorted(episodes) and len(episodes) == 2
    focus = [episodes[i].focus_event_id for i in vectors.ids.tolist()]
    assert sorted(focus) == sorted(events[:2])
    assert np.allclose(vectors.matrix, np.stack([unit_vector(e) for e in focus]))
    assert vectors.matrix.dtype == np.float32
    assert vectors.times.tolist() == [episodes[i].occurred_at for i in vectors.ids.tolist()]
    assert vectors.sessions == [episodes[i].session_id for i in vectors.ids.tolist()]
    assert vectors.kinds == ["message", "message"]
    assert vectors.pinned.tolist() == [f == events[1] for f in focus]


def test_user_vectors_after_an_id_are_only_the_newer_ones(store: Store) -> None:
    append(store, new_event(ALICE, "a", at=1.0))
    index_pending(store)
    [first] = store.user_vectors(ALICE).ids.tolist()
    append(store, new_event(ALICE, "b", at=2.0))
    index_pending(store)
    newer = store.user_vectors(ALICE, after_id=first).ids.tolist()
    assert len(newer) == 1 and newer[0] > first


def test_user_vectors_of_an_unknown_user_are_empty(store: Store) -> None:
    vectors = store.user_vectors("nobody")
    assert vectors.ids.size == 0 and vectors.matrix.shape[0] == 0 and vectors.sessions == []


def test_user_generation_moves_on_add_and_on_delete(store: Store) -> None:
    before = store.user_generation(ALICE)
    [event_id] = append(store, new_event(ALICE, "a"))
    index_pending(store)
    added = store.user_generation(ALICE)
    assert added[0] > before[0]
    assert store.delete_event(event_id)
    deleted = store.user_generation(ALICE)
    assert deleted != added and deleted[1] > added[1]
    assert store.user_generation(BOB) == store.user_generation("nobody")


def test_lexical_search_finds_episodes_by_term_best_first(store: Store) -> None:
    tokyo, _violin, twice = append(
        store,
        new_event(ALICE, "flight to tokyo on friday", at=1.0),
        new_event(ALICE, "daughter plays violin", at=2.0, session_id="s2"),
        new_event(ALICE, "tokyo ramen tokyo", at=3.0, session_id="s3"),
    )
    index_pending(store)
    hits = store.lexical_search(ALICE, ["tokyo"], 10, None)
    assert {episode_of(store, ALICE, e) for e in (tokyo, twice)} == {h[0] for h in hits}
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert len(store.lexical_search(ALICE, ["tokyo", "violin"], 2, None)) == 2
    assert store.lexical_search(ALICE, [], 10, None) == []
    assert store.lexical_search(ALICE, ["paris"], 10, None) == []


def test_lexical_search_filters_by_time_range(store: Store) -> None:
    early, late = append(
        store,
        new_event(ALICE, "tokyo trip", at=100.0),
        new_event(ALICE, "tokyo again", at=200.0, session_id="s2"),
    )
    index_pending(store)
    hits = store.lexical_search(ALICE, ["tokyo"], 10, (150.0, 250.0))
    assert [h[0] for h in hits] == [episode_of(store, ALICE, late)]
    assert early != late


def test_lexical_search_never_returns_another_users_episodes(store: Store) -> None:
    append(store, new_event(ALICE, "tokyo trip"))
    append(store, new_event(BOB, "tokyo trip"))
    index_pending(store)
    bob_episode = episode_of(store, BOB, store.events_for_user(BOB)[0].id)
    assert [h[0] for h in store.lexical_search(BOB, ["tokyo"], 10, None)] == [bob_episode]
    assert store.phrase_matches(BOB, ["tokyo", "trip"], 10) == [bob_episode]
    assert [s[0] for s in store.session_search(BOB, ["tokyo"], 10)] == ["s1"]
    assert store.lexical_search("nobody", ["tokyo"], 10, None) == []


def test_lexical_search_of_a_sole_user_stays_scoped_once_another_user_arrives(
    store: Store,
) -> None:
    append(store, new_event(ALICE, "tokyo trip", at=1.0))
    append(store, new_event(ALICE, "tokyo ramen", at=2.0, session_id="s2"))
    index_pending(store)
    alice = {episode_of(store, ALICE, e.id) for e in store.events_for_user(ALICE)}
    alone = store.lexical_search(ALICE, ["tokyo"], 10, None)
    assert {h[0] for h in alone} == alice
    assert store.lexical_search("nobody", ["tokyo"], 10, None) == []
    assert store.phrase_matches("nobody", ["tokyo", "trip"], 10) == []
    append(store, new_event(BOB, "tokyo trip tokyo", at=3.0))
    index_pending(store)
    bob = episode_of(store, BOB, store.events_for_user(BOB)[0].id)
    together = store.lexical_search(ALICE, ["tokyo"], 10, None)
    assert {h[0] for h in together} == alice
    assert [h[0] for h in store.lexical_search(BOB, ["tokyo"], 10, None)] == [bob]
    assert store.phrase_matches(BOB, ["tokyo", "trip"], 10) == [bob]
    assert len(store.phrase_matches(ALICE, ["tokyo", "trip"], 10)) == 1


def test_phrase_matches_need_the_terms_in_order(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "book a window seat please"))
    append(store, new_event(ALICE, "the seat by the window", session_id="s2"))
    index_pending(store)
    assert store.phrase_matches(ALICE, ["window", "seat"], 10) == [
        episode_of(store, ALICE, event_id)
    ]
    assert store.phrase_matches(ALICE, ["seat", "window"], 10) == []
    assert store.phrase_matches(ALICE, [], 10) == []


def test_session_search_ranks_sessions_by_their_digest(store: Store) -> None:
    append(
        store,
        new_event(ALICE, "flight to tokyo", at=1.0, session_id="travel"),
        new_event(ALICE, "tokyo hotel booked", at=2.0, session_id="travel"),
        new_event(ALICE, "violin lesson on monday", at=3.0, session_id="music"),
    )
    index_pending(store)
    [(session_id, score, keywords)] = store.session_search(ALICE, ["tokyo"], 10)
    assert session_id == "travel" and score > 0 and "tokyo" in keywords.split()
    assert [s[0] for s in store.session_search(ALICE, ["violin"], 10)] == ["music"]


def test_session_search_scores_alike_alone_and_beside_another_user(store: Store) -> None:
    append(
        store,
        new_event(ALICE, "flight to tokyo", at=1.0, session_id="travel"),
        new_event(ALICE, "violin lesson in tokyo", at=2.0, session_id="music"),
    )
    index_pending(store)
    alone = store.session_search(ALICE, ["tokyo", "violin"], 10)
    append(store, new_event(BOB, "tokyo tokyo violin", at=3.0, session_id="travel"))
    index_pending(store)
    beside = store.session_search(ALICE, ["tokyo", "violin"], 10)
    # BM25 counts every digest of the table in both cases: only the other user's one
    # changed the scores, not leaving the scope out of the match
    assert [s[0] for s in alone] == [s[0] for s in beside] == ["music", "travel"]
    assert [s[0] for s in store.session_search(BOB, ["violin"], 10)] == ["travel"]
    assert store.session_search(ALICE, ["nothing"], 10) == []


def test_rebuild_missing_digests_finds_nothing_on_a_consistent_store(store: Store) -> None:
    append(store, new_event(ALICE, "tokyo"))
    index_pending(store)
    assert store.rebuild_missing_digests() == 0


def test_vector_index_finds_the_nearest_episode(store: Store) -> None:
    append(store, *(new_event(ALICE, f"m{i}", at=float(i)) for i in range(5)))
    index_pending(store)
    vectors = store.user_vectors(ALICE)
    generation = store.user_generation(ALICE)
    ids, similarities = store.vectors.search(
        ALICE, generation, vectors.ids, vectors.matrix, vectors.matrix[2], 1
    )
    assert ids.tolist() == [int(vectors.ids[2])]
    assert similarities[0] == pytest.approx(1.0, abs=1e-3)
    store.vectors.forget(ALICE)
    again, _ = store.vectors.search(
        ALICE, generation, vectors.ids, vectors.matrix, vectors.matrix[3], 1
    )
    assert again.tolist() == [int(vectors.ids[3])]


# -- facts --------------------------------------------------------------------------------------


def test_an_inserted_fact_reads_back_as_a_card(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "window seat please"))
    card = draft("Prefers window seats", sources=[event_id])
    number = insert_fact(store, ALICE, card)
    fact = store.facts.get(number)
    assert fact is not None and fact.number == number
    assert fact.card.id == f"fact_{number}" and fact.card.user_id == ALICE
    assert (fact.card.statement, fact.card.key, fact.card.status) == (
        "Prefers window seats",
        "preference.seat",
        "current",
    )
    assert fact.card.extractor == "rules" and fact.card.sources == [event_id]
    assert np.allclose(fact.vector, unit_vector(len(card.statement)))
    assert store.facts.get(999_999) is None


def test_current_facts_are_the_users_own(store: Store) -> None:
    first = insert_fact(store, ALICE, draft("Prefers window seats"))
    second = insert_fact(store, ALICE, draft("Is vegetarian", key="preference.diet"))
    insert_fact(store, BOB, draft("Prefers aisle seats"))
    assert sorted(fact_ids(store.facts.read_current(ALICE))) == [first, second]
    with store.transaction() as tx:
        assert sorted(fact_ids(store.facts.current(tx, ALICE))) == [first, second]
        fetched = store.facts.fetch(tx, first)
        assert fetched is not None and fetched.card.statement == "Prefers window seats"
        assert store.facts.fetch(tx, 999_999) is None


def test_get_many_skips_unknown_ids(store: Store) -> None:
    number = insert_fact(store, ALICE, draft("Prefers window seats"))
    assert list(store.facts.get_many([number, 999_999])) == [number]
    assert store.facts.get_many([]) == {}


def test_supersede_builds_a_version_chain(store: Store) -> None:
    old = insert_fact(store, ALICE, draft("Lives in Paris", key="location.home"))
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    supersede(store, old, new)
    old_fact, new_fact = store.facts.get(old), store.facts.get(new)
    assert old_fact is not None and new_fact is not None
    assert old_fact.card.status == "superseded" and old_fact.card.superseded_by == f"fact_{new}"
    assert old_fact.card.superseded_at is not None
    assert new_fact.card.supersedes == f"fact_{old}" and new_fact.card.status == "current"
    assert fact_ids(store.facts.chain(old)) == fact_ids(store.facts.chain(new)) == [old, new]
    assert fact_ids(store.facts.read_current(ALICE)) == [new]
    assert store.facts.chain(999_999) == []


def test_facts_hide_history_unless_asked(store: Store) -> None:
    old = insert_fact(store, ALICE, draft("Lives in Paris", key="location.home"))
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    supersede(store, old, new)
    assert fact_ids(store.facts.facts(ALICE)) == [new]
    assert fact_ids(store.facts.facts(ALICE, include_history=True)) == [old, new]
    assert store.facts.facts(BOB, include_history=True) == []


def test_facts_as_of_return_what_held_at_that_time(store: Store) -> None:
    old = insert_fact(store, ALICE, draft("Lives in Paris", key="location.home", valid_from=100.0))
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home", valid_from=200.0))
    supersede(store, old, new, valid_to=200.0)
    assert fact_ids(store.facts.facts(ALICE, as_of=150.0)) == [old]
    assert fact_ids(store.facts.facts(ALICE, as_of=250.0)) == [new]
    assert store.facts.facts(ALICE, as_of=50.0) == []


def test_facts_filter_by_category_and_importance(store: Store) -> None:
    seat = insert_fact(store, ALICE, draft("Prefers window seats", importance=0.2))
    home = insert_fact(
        store,
        ALICE,
        draft("Lives in Berlin", key="location.home", category=Category.LOCATION, importance=0.9),
    )
    assert fact_ids(store.facts.facts(ALICE, category="location")) == [home]
    assert fact_ids(store.facts.facts(ALICE, most_important=1)) == [home]
    assert fact_ids(store.facts.facts(ALICE)) == [seat, home]


def test_reinforce_raises_confidence(store: Store) -> None:
    number = insert_fact(store, ALICE, draft("Prefers window seats"))
    with store.transaction() as tx:
        store.facts.reinforce(tx, number, 0.95, [])
    fact = store.facts.get(number)
    assert fact is not None and fact.card.confidence == pytest.approx(0.95)


def test_reinforce_adds_its_sources_to_the_card(store: Store) -> None:
    first, second = append(store, new_event(ALICE, "a", at=1.0), new_event(ALICE, "b", at=2.0))
    number = insert_fact(store, ALICE, draft("Prefers window seats", sources=[first]))
    with store.transaction() as tx:
        store.facts.reinforce(tx, number, 0.9, [second])
    fact = store.facts.get(number)
    assert fact is not None and sorted(fact.card.sources) == [first, second]


def test_set_status_flags_a_fact(store: Store) -> None:
    number = insert_fact(store, ALICE, draft("Prefers window seats"))
    with store.transaction() as tx:
        store.facts.set_status(tx, number, "flagged")
    fact = store.facts.get(number)
    assert fact is not None and fact.card.status == "flagged"
    assert fact_ids(store.facts.read_current(ALICE)) == [number]  # flagged is not history


def test_mark_superseded_by_puts_a_late_older_statement_before_the_current_one(
    store: Store,
) -> None:
    current = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    current_fact = store.facts.get(current)
    assert current_fact is not None
    with store.transaction() as tx:
        older = insert_in(
            store, tx, ALICE, draft("Lives in Paris", key="location.home"), status="superseded"
        )
        store.facts.mark_superseded_by(tx, older, current_fact, NOW)
    assert fact_ids(store.facts.chain(current)) == [older, current]
    assert fact_ids(store.facts.read_current(ALICE)) == [current]


def test_routing_log_lists_decisions_newest_first(store: Store) -> None:
    number = insert_fact(store, ALICE, draft("Prefers window seats"))
    with store.transaction() as tx:
        store.facts.log(tx, ALICE, "added", number, None, {"why": "new"}, NOW)
        store.facts.log(tx, ALICE, "duplicate", number, number, {"similarity": 0.97}, NOW + 1)
        store.facts.log(tx, BOB, "added", None, None, {}, NOW)
    entries = store.facts.routing_log(ALICE)
    assert [e["decision"] for e in entries] == ["duplicate", "added"]
    assert entries[0]["fact_id"] == entries[0]["other_id"] == f"fact_{number}"
    assert entries[0]["detail"] == {"similarity": 0.97} and entries[1]["other_id"] is None
    assert len(store.facts.routing_log(ALICE, limit=1)) == 1


def test_upsert_alert_adds_an_alert_once(store: Store) -> None:
    number = insert_fact(store, ALICE, draft("Prefers window seats"))
    refs = [f"fact_{number}"]
    with store.transaction() as tx:
        assert store.facts.upsert_alert(tx, ALICE, "rule", "fp1", "warning", "check", refs, NOW)
        assert not store.facts.upsert_alert(tx, ALICE, "rule", "fp1", "warning", "check", refs, NOW)
    [alert] = store.facts.alerts(ALICE)
    assert (alert["rule"], alert["severity"], alert["message"], alert["fact_ids"]) == (
        "rule",
        "warning",
        "check",
        refs,
    )
    assert store.facts.alerts(BOB) == []


def test_clear_alerts_without_drops_alerts_whose_facts_are_no_longer_current(
    store: Store,
) -> None:
    old = insert_fact(store, ALICE, draft("Lives in Paris", key="location.home"))
    kept = insert_fact(store, ALICE, draft("Prefers window seats"))
    with store.transaction() as tx:
        store.facts.upsert_alert(tx, ALICE, "r", "a", "info", "m", [f"fact_{old}"], NOW)
        store.facts.upsert_alert(tx, ALICE, "r", "b", "info", "m", [f"fact_{kept}"], NOW)
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    supersede(store, old, new)
    with store.transaction() as tx:
        store.facts.clear_alerts_without(tx, ALICE)
    assert [a["fact_ids"] for a in store.facts.alerts(ALICE)] == [[f"fact_{kept}"]]


def test_fact_lexical_search_is_per_user(store: Store) -> None:
    window = insert_fact(store, ALICE, draft("prefers window seats"))
    insert_fact(store, ALICE, draft("is vegetarian", key="preference.diet"))
    insert_fact(store, BOB, draft("prefers window seats"))
    assert [h[0] for h in store.facts.lexical(ALICE, ["window"], 10)] == [window]
    assert store.facts.lexical(ALICE, [], 10) == []
    assert store.facts.lexical("nobody", ["window"], 10) == []


def test_search_rows_hold_every_version_as_arrays(store: Store) -> None:
    old = insert_fact(
        store,
        ALICE,
        draft("Lives in Paris", key="location.home", stability=Stability.VOLATILE, valid_from=5.0),
    )
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    supersede(store, old, new)
    insert_fact(store, BOB, draft("Lives in Rome", key="location.home"))
    rows = store.facts.search_rows(ALICE)
    assert rows.ids.tolist() == [old, new]
    assert rows.superseded.tolist() == [True, False]
    assert rows.exempt.tolist() == [False, True]
    assert rows.valid_from[0] == 5.0 and np.isnan(rows.valid_from[1])
    assert np.isnan(rows.valid_to).tolist() == [True, True]
    assert rows.recorded_at.tolist() == [NOW, NOW]
    old_fact, new_fact = store.facts.get(old), store.facts.get(new)
    assert old_fact is not None and new_fact is not None
    assert np.allclose(rows.matrix, np.stack([old_fact.vector, new_fact.vector]))
    assert store.facts.search_rows("nobody").ids.size == 0


def test_fact_generation_moves_on_every_change_of_the_user(store: Store) -> None:
    bob = store.facts.generation(BOB)
    start = store.facts.generation(ALICE)
    old = insert_fact(store, ALICE, draft("Lives in Paris", key="location.home"))
    inserted = store.facts.generation(ALICE)
    new = insert_fact(store, ALICE, draft("Lives in Berlin", key="location.home"))
    supersede(store, old, new)
    superseded = store.facts.generation(ALICE)
    assert len({start, inserted, superseded}) == 3
    assert store.facts.generation(BOB) == bob


# -- the vault ----------------------------------------------------------------------------------


def test_vault_put_gives_one_token_per_value_of_a_user(store: Store) -> None:
    token = store.vault.put(None, ALICE, PiiCategory.EMAIL, "a@example.com")
    assert TOKEN.fullmatch(token)
    assert store.vault.put(None, ALICE, "email", "a@example.com") == token
    assert store.vault.put(None, ALICE, PiiCategory.EMAIL, "b@example.com") != token
    assert store.vault.put(None, BOB, PiiCategory.EMAIL, "a@example.com") != token


def test_vault_get_answers_only_the_owner(store: Store) -> None:
    token = store.vault.put(None, ALICE, PiiCategory.PHONE, "+1 555 0100")
    assert store.vault.get(None, ALICE, token) == "+1 555 0100"
    assert store.vault.get(None, BOB, token) is None
    assert store.vault.getter(None, BOB)(token) is None
    assert store.vault.get(None, ALICE, "vunknown000") is None
    assert store.vault.get(None, ALICE, "not a token") is None


def test_vault_putter_and_getter_work_inside_a_transaction(store: Store) -> None:
    with store.transaction() as tx:
        token = store.vault.putter(tx, ALICE)(PiiCategory.IBAN, "DE89370400440532013000")
        assert store.vault.getter(tx, ALICE)(token) == "DE89370400440532013000"
    assert store.vault.getter(None, ALICE)(token) == "DE89370400440532013000"


def test_vault_entries_list_the_users_values(store: Store) -> None:
    email = store.vault.put(None, ALICE, PiiCategory.EMAIL, "a@example.com")
    phone = store.vault.put(None, ALICE, PiiCategory.PHONE, "+1 555 0100")
    store.vault.put(None, BOB, PiiCategory.EMAIL, "b@example.com")
    entries = {(e.token, e.category, e.value) for e in store.vault.entries(None, ALICE)}
    assert entries == {
        (email, PiiCategory.EMAIL, "a@example.com"),
        (phone, PiiCategory.PHONE, "+1 555 0100"),
    }


def test_vault_delete_tokens_deletes_only_the_users_own(store: Store) -> None:
    token = store.vault.put(None, ALICE, PiiCategory.EMAIL, "a@example.com")
    assert store.vault.delete_tokens(None, BOB, [token]) == 0
    assert store.vault.get(None, ALICE, token) == "a@example.com"
    assert store.vault.delete_tokens(None, ALICE, [token, token]) == 1
    assert store.vault.get(None, ALICE, token) is None and store.vault.entries(None, ALICE) == []


# -- the graph ----------------------------------------------------------------------------------


def write_tokyo_mention(store: Store, user_id: str, event_id: int) -> int:
    episode_id = episode_of(store, user_id, event_id)
    mention = NewMention(episode_id, "tokyo", "Tokyo", "place", alias=("tyo", "TYO"))
    with store.transaction() as tx:
        assert store.graph.write(tx, user_id, [mention], {"tokyo": unit_vector(7)}) == 1
    return episode_id


def test_graph_write_creates_entities_aliases_and_mentions(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "flight to tokyo"))
    index_pending(store)
    episode_id = write_tokyo_mention(store, ALICE, event_id)
    assert store.graph.known(ALICE) == {"tokyo": "tokyo", "tyo": "tokyo"}
    rows = store.graph.rows(ALICE, DIM)
    assert len(rows.entity_ids) == 1 and rows.names == ["Tokyo"] and rows.types == ["place"]
    assert rows.keys == {"tokyo": 0, "tyo": 0}
    assert rows.vectors.shape == (1, DIM) and rows.vectors.dtype == np.float16
    assert np.allclose(rows.vectors[0], unit_vector(7), atol=1e-2)
    assert rows.mention_entity.tolist() == [0] and rows.mention_episode.tolist() == [episode_id]
    assert store.graph.counts() == {"entities": 1, "mentions": 1}


def test_graph_is_per_user(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "flight to tokyo"))
    index_pending(store)
    write_tokyo_mention(store, ALICE, event_id)
    assert store.graph.known(BOB) == {}
    assert store.graph.rows(BOB, DIM).entity_ids.size == 0
    with store.transaction() as tx:
        assert store.graph.known_in(tx, ALICE, ["tyo", "paris"]) == {"tyo": "tokyo"}
        assert store.graph.known_in(tx, BOB, ["tyo", "tokyo"]) == {}


def test_graph_rows_after_known_ids_are_only_the_newer(store: Store) -> None:
    first, second = append(
        store, new_event(ALICE, "tokyo", at=1.0), new_event(ALICE, "osaka", at=2.0)
    )
    index_pending(store)
    write_tokyo_mention(store, ALICE, first)
    known = store.graph.rows(ALICE, DIM)
    osaka_episode = episode_of(store, ALICE, second)
    with store.transaction() as tx:
        store.graph.write(tx, ALICE, [NewMention(osaka_episode, "osaka", "Osaka", "place")], {})
    newer = store.graph.rows(
        ALICE, DIM, known_ids=known.entity_ids, episode_after=int(known.mention_episode.max())
    )
    assert newer.names == ["Osaka"] and newer.keys["osaka"] == 1  # positions count known first
    assert newer.mention_entity.tolist() == [1] and newer.mention_episode.tolist() == [
        osaka_episode
    ]


def test_fact_links_tie_current_facts_to_their_episodes(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "window seat please"))
    index_pending(store)
    number = insert_fact(store, ALICE, draft("Prefers window seats", sources=[event_id]))
    links = store.graph.fact_links(ALICE)
    assert links.ids.tolist() == [number] and links.statements == ["Prefers window seats"]
    assert links.source_fact.tolist() == [0]
    assert links.source_episode.tolist() == [episode_of(store, ALICE, event_id)]
    assert store.graph.fact_links(BOB).ids.size == 0
    with store.transaction() as tx:
        assert store.graph.episode_ids_of_events(tx, [event_id, 999_999]) == {
            event_id: episode_of(store, ALICE, event_id)
        }


# -- imports ------------------------------------------------------------------------------------


def test_imports_put_and_get_per_user_source_and_unit(store: Store) -> None:
    assert store.imports.get(ALICE, "chatgpt", "conv-1") is None
    store.imports.put(ALICE, "chatgpt", "conv-1", "stamp-1", {"p1": "d1"})
    assert store.imports.get(ALICE, "chatgpt", "conv-1") == ("stamp-1", {"p1": "d1"})
    store.imports.put(ALICE, "chatgpt", "conv-1", "stamp-2", {"p1": "d1", "p2": "d2"})
    assert store.imports.get(ALICE, "chatgpt", "conv-1") == ("stamp-2", {"p1": "d1", "p2": "d2"})
    assert store.imports.get(ALICE, "chatgpt", "conv-2") is None
    assert store.imports.get(ALICE, "claude", "conv-1") is None
    assert store.imports.get(BOB, "chatgpt", "conv-1") is None


# -- transactions -------------------------------------------------------------------------------


def test_a_transaction_that_raises_rolls_back_everything_written_in_it(store: Store) -> None:
    generation = store.facts.generation(ALICE)
    with pytest.raises(RuntimeError), store.transaction() as tx:
        token = store.vault.put(tx, ALICE, PiiCategory.EMAIL, "a@example.com")
        insert_in(store, tx, ALICE, draft("Prefers window seats"))
        store.facts.log(tx, ALICE, "added", None, None, {}, NOW)
        raise RuntimeError("abort")
    assert store.vault.get(None, ALICE, token) is None and store.vault.entries(None, ALICE) == []
    assert store.facts.facts(ALICE, include_history=True) == []
    assert store.facts.routing_log(ALICE) == []
    assert store.facts.generation(ALICE) == generation


def test_writes_of_a_transaction_are_visible_once_it_commits(store: Store) -> None:
    with store.transaction() as tx:
        token = store.vault.put(tx, ALICE, PiiCategory.EMAIL, "a@example.com")
        number = insert_in(store, tx, ALICE, draft("Prefers window seats"))
    assert store.vault.get(None, ALICE, token) == "a@example.com"
    assert store.facts.get(number) is not None


# -- the delete cascade -------------------------------------------------------------------------


def test_delete_event_removes_the_event_and_its_episode(store: Store) -> None:
    gone, kept = append(
        store,
        new_event(ALICE, "secret tokyo plan", at=1.0, session_id="s1"),
        new_event(ALICE, "violin lesson", at=2.0, session_id="s2"),
    )
    index_pending(store)
    gone_episode = episode_of(store, ALICE, gone)
    assert store.delete_event(gone)
    assert store.load_event(gone) is None and [e.id for e in store.events_for_user(ALICE)] == [kept]
    assert [ep.focus_event_id for ep in store.episodes_for_user(ALICE)] == [kept]
    assert store.episodes([gone_episode]) == {} and store.episode_focus(gone_episode) is None
    assert gone_episode not in store.user_vectors(ALICE).ids.tolist()
    assert store.lexical_search(ALICE, ["secret", "tokyo"], 10, None) == []
    assert store.phrase_matches(ALICE, ["tokyo", "plan"], 10) == []
    assert store.session_search(ALICE, ["tokyo"], 10) == []
    assert_consistent(store)


def test_delete_event_refuses_another_users_event_and_unknown_ids(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    assert not store.delete_event(event_id, user_id=BOB)
    assert store.load_event(event_id) is not None
    assert not store.delete_event(999_999)
    assert store.delete_event(event_id, user_id=ALICE) and not store.delete_event(event_id)


def test_delete_event_of_a_pending_event_drops_its_job(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "a"))
    assert store.delete_event(event_id)
    assert store.pending_jobs(ALICE) == 0 and store.claim_jobs("w1", 10, LONG_LEASE) == []


def test_delete_event_requeues_the_turn_that_quoted_it(store: Store) -> None:
    quoted, reply = append(
        store, new_event(ALICE, "tokyo question", at=1.0), new_event(ALICE, "answer", at=2.0)
    )
    index_pending(store)
    assert store.delete_event(quoted)
    assert store.episodes_for_user(ALICE) == []  # the reply's episode quoted the deleted text
    assert store.lexical_search(ALICE, ["tokyo"], 10, None) == []
    assert claim_one(store).event_id == reply
    assert_consistent(store)


def test_delete_event_removes_facts_only_it_sourced(store: Store) -> None:
    gone, other = append(store, new_event(ALICE, "a", at=1.0), new_event(ALICE, "b", at=2.0))
    only = insert_fact(store, ALICE, draft("Prefers window seats", sources=[gone]))
    shared = insert_fact(store, ALICE, draft("Is vegetarian", key="diet", sources=[gone, other]))
    assert store.delete_event(gone)
    assert store.facts.get(only) is None
    assert fact_ids(store.facts.read_current(ALICE)) == [shared]
    assert [h[0] for h in store.facts.lexical(ALICE, ["window", "vegetarian"], 10)] == [shared]


def test_a_surviving_fact_no_longer_cites_the_deleted_event(store: Store) -> None:
    gone, other = append(store, new_event(ALICE, "a", at=1.0), new_event(ALICE, "b", at=2.0))
    shared = insert_fact(store, ALICE, draft("Is vegetarian", key="diet", sources=[gone, other]))
    assert store.delete_event(gone)
    fact = store.facts.get(shared)
    assert fact is not None and fact.card.sources == [other]


def test_delete_event_removes_vaulted_values_only_it_held(store: Store) -> None:
    only = store.vault.put(None, ALICE, PiiCategory.EMAIL, "a@example.com")
    shared = store.vault.put(None, ALICE, PiiCategory.PHONE, "+1 555 0100")
    gone, _ = append(
        store,
        new_event(ALICE, f"mail {vaulted(only)} call {vaulted(shared, PiiCategory.PHONE)}", at=1.0),
        new_event(ALICE, f"again {vaulted(shared, PiiCategory.PHONE)}", at=2.0),
    )
    assert store.delete_event(gone)
    assert store.vault.get(None, ALICE, only) is None
    assert store.vault.get(None, ALICE, shared) == "+1 555 0100"


def test_delete_event_removes_its_graph_mentions(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "flight to tokyo"))
    index_pending(store)
    write_tokyo_mention(store, ALICE, event_id)
    assert store.delete_event(event_id)
    assert store.graph.known(ALICE) == {}
    assert store.graph.counts() == {"entities": 0, "mentions": 0}


# -- forgetting a user --------------------------------------------------------------------------


def populate(store: Store, user_id: str) -> None:
    """One of every record kind for ``user_id``, plus a job still pending."""
    token = store.vault.put(None, user_id, PiiCategory.EMAIL, f"{user_id}@example.com")
    first, _ = append(
        store,
        new_event(user_id, f"flight to tokyo {vaulted(token)}", at=1.0, external_id="m1"),
        new_event(user_id, "window seat please", at=2.0),
    )
    index_pending(store)
    append(store, new_event(user_id, "still pending", at=3.0))
    write_tokyo_mention(store, user_id, first)
    number = insert_fact(store, user_id, draft("Prefers window seats", sources=[first]))
    with store.transaction() as tx:
        store.facts.log(tx, user_id, "added", number, None, {}, NOW)
        store.facts.upsert_alert(tx, user_id, "r", "fp", "info", "m", [f"fact_{number}"], NOW)
    store.imports.put(user_id, "chatgpt", "conv-1", "stamp", {"p": "d"})


def assert_has_everything(store: Store, user_id: str) -> None:
    assert len(store.events_for_user(user_id)) == 3 and store.has_user(user_id)
    assert len(store.episodes_for_user(user_id)) == 2
    assert store.user_vectors(user_id).ids.size == 2
    assert store.pending_jobs(user_id) == 1
    assert len(store.lexical_search(user_id, ["window"], 10, None)) == 1
    assert len(store.session_search(user_id, ["tokyo"], 10)) == 1
    assert len(store.facts.read_current(user_id)) == 1
    assert len(store.facts.lexical(user_id, ["window"], 10)) == 1
    assert len(store.facts.routing_log(user_id)) == 1 and len(store.facts.alerts(user_id)) == 1
    assert store.graph.known(user_id) == {"tokyo": "tokyo", "tyo": "tokyo"}
    assert len(store.vault.entries(None, user_id)) == 1
    assert store.imports.get(user_id, "chatgpt", "conv-1") is not None


def test_forget_user_removes_everything_of_the_user(store: Store) -> None:
    populate(store, ALICE)
    counts = store.forget_user(ALICE)
    assert counts["events"] == 3 and counts["episodes"] == 2
    assert not store.has_user(ALICE) and store.events_for_user(ALICE) == []
    assert store.event_by_external_id(ALICE, "m1") is None
    assert store.episodes_for_user(ALICE) == [] and store.user_vectors(ALICE).ids.size == 0
    assert store.pending_jobs(ALICE) == 0 and store.claim_jobs("w1", 10, LONG_LEASE) == []
    assert store.lexical_search(ALICE, ["tokyo", "window"], 10, None) == []
    assert store.phrase_matches(ALICE, ["window", "seat"], 10) == []
    assert store.session_search(ALICE, ["tokyo", "window"], 10) == []
    assert store.facts.facts(ALICE, include_history=True) == []
    assert store.facts.lexical(ALICE, ["window"], 10) == []
    assert store.facts.search_rows(ALICE).ids.size == 0
    assert store.facts.routing_log(ALICE) == [] and store.facts.alerts(ALICE) == []
    assert store.graph.known(ALICE) == {} and store.graph.rows(ALICE, DIM).entity_ids.size == 0
    assert store.vault.entries(None, ALICE) == []
    assert store.imports.get(ALICE, "chatgpt", "conv-1") is None
    assert_consistent(store)


def test_forget_user_leaves_other_users_alone(store: Store) -> None:
    populate(store, ALICE)
    populate(store, BOB)
    store.forget_user(ALICE)
    assert_has_everything(store, BOB)
    assert store.graph.counts() == {"entities": 1, "mentions": 1}
    assert_consistent(store)


def test_forget_user_of_an_unknown_user_changes_nothing(store: Store) -> None:
    populate(store, ALICE)
    store.forget_user("nobody")
    assert_has_everything(store, ALICE)


# -- export, stats, meta ------------------------------------------------------------------------


def test_export_user_round_trips_the_users_events(store: Store) -> None:
    append(
        store,
        new_event(ALICE, "hello", at=1.0, external_id="m1", name="Alice"),
        new_event(ALICE, "reply", at=2.0, role="assistant", metadata={"pinned": True}),
    )
    append(store, new_event(BOB, "not exported"))
    index_pending(store)
    exported = store.export_user(ALICE)
    assert exported["user_id"] == ALICE and len(exported["episodes"]) == 2
    fields = ("session_id", "role", "name", "content", "metadata", "occurred_at", "external_id")
    before = [tuple(e[f] for f in fields) for e in exported["events"]]
    store.forget_user(ALICE)
    append(
        store,
        *(
            new_event(
                ALICE,
                e["content"],
                session_id=e["session_id"],
                at=e["occurred_at"],
                external_id=e["external_id"],
                role=e["role"],
                name=e["name"],
                metadata=e["metadata"],
            )
            for e in exported["events"]
        ),
    )
    after = [
        (e.session_id, e.role, e.name, e.content, e.metadata, e.occurred_at, e.external_id)
        for e in store.events_for_user(ALICE)
    ]
    assert after == before and [b[3] for b in before] == ["hello", "reply"]


def test_stats_count_the_stored_records(store: Store) -> None:
    append(store, new_event(ALICE, "a", at=1.0), new_event(ALICE, "b", at=2.0, session_id="s2"))
    append(store, new_event(BOB, "c"))
    index_pending(store)
    insert_fact(store, ALICE, draft("Prefers window seats"))
    stats = store.stats()
    assert (stats["users"], stats["sessions"], stats["events"]) == (2, 3, 3)
    assert (stats["episodes"], stats["facts"], stats["pending_jobs"]) == (3, 1, 0)


def test_meta_stores_values_by_key(store: Store) -> None:
    assert store.meta("color") is None
    store.set_meta("color", "blue")
    store.set_meta("color", "green")
    assert store.meta("color") == "green"


def test_bind_embedder_refuses_a_different_embedder(store: Store) -> None:
    store.bind_embedder("fake", DIM)
    store.bind_embedder("fake", DIM)
    with pytest.raises(EmbedderMismatchError):
        store.bind_embedder("other", DIM)
    with pytest.raises(EmbedderMismatchError):
        store.bind_embedder("fake", DIM * 2)


def test_reset_indexes_drops_derived_records_and_queues_the_log_again(store: Store) -> None:
    [event_id] = append(store, new_event(ALICE, "tokyo trip"))
    index_pending(store)
    insert_fact(store, ALICE, draft("Plans a trip", key="plan.trip.tokyo", sources=[event_id]))
    store.bind_embedder("fake", DIM)
    assert store.reset_indexes("other", DIM * 2) == 1
    assert store.episodes_for_user(ALICE) == [] and store.facts.read_current(ALICE) == []
    assert store.lexical_search(ALICE, ["tokyo"], 10, None) == []
    assert claim_one(store).event_id == event_id
    store.bind_embedder("other", DIM * 2)  # the new embedder is the bound one
