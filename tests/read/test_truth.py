"""Current truth first: superseded turns yield to their successors; names are not topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.read.names import about_names, rewrite
from madeleine.read.stages import PhaticStage
from madeleine.text.analyzer import MultilingualAnalyzer


def _alex(memory: Memory) -> None:
    memory.add(
        [
            {"role": "user", "content": "Hi, my name is Alex."},
            {"role": "assistant", "content": "Nice to meet you, Alex!"},
            {"role": "user", "content": "I live in Seattle, near the lake."},
        ],
        user_id="alex",
        session_id="intro",
        timestamp="2024-01-10T10:00:00Z",
    )
    memory.add(
        {"role": "user", "content": "I've been doing knee physio twice a week."},
        user_id="alex",
        session_id="health",
        timestamp="2024-03-01T10:00:00Z",
    )
    memory.add(
        {"role": "user", "content": "Big news: we moved to Portland last week!"},
        user_id="alex",
        session_id="move",
        timestamp="2024-06-10T10:00:00Z",
    )
    assert memory.wait(timeout=120)


@pytest.fixture
def alex(tmp_path: Path, embedder: Embedder) -> Memory:
    memory = Memory(tmp_path / "m", embedder=embedder)
    _alex(memory)
    return memory


def _first(hits: list, word: str) -> int:  # type: ignore[type-arg]
    return next((i for i, h in enumerate(hits) if word in h.text), len(hits))


def test_the_current_home_ranks_above_the_old_one_with_its_fact(alex: Memory) -> None:
    with alex:
        hits = alex.search("where does Alex live?", user_id="alex", limit=6)
        assert _first(hits, "Portland") < _first(hits, "Seattle")
        assert hits[0].kind == "fact" or "Portland" in hits[0].text
        current = next(h for h in hits if h.kind == "fact" and "Portland" in h.text)
        assert current.explain["fact"]["status"] == "current"
        stale = next(h for h in hits if "Seattle" in h.text)
        truth = stale.explain["truth"]
        assert truth["by"] == current.id and truth["since"] == "2024-06-03"
        assert truth["score"] < truth["score_before"]
        assert stale.score < current.score


def test_as_of_before_the_move_keeps_the_old_home_first(alex: Memory) -> None:
    with alex:
        hits = alex.search("where does Alex live?", user_id="alex", as_of="2024-03-01")
        first = next(h.text for h in hits if "Seattle" in h.text or "Portland" in h.text)
        assert "Seattle" in first
        assert all("truth" not in h.explain for h in hits)
        assert not any("Portland" in h.text for h in hits)


def test_switching_the_stage_off_restores_the_plain_order(alex: Memory) -> None:
    with alex:
        hits = alex.search("where does Alex live?", user_id="alex", stages={"truth": False})
        assert all("truth" not in h.explain for h in hits)


def test_a_query_naming_the_user_is_asked_in_the_first_person(alex: Memory) -> None:
    with alex:
        hits = alex.search("where does Alex live?", user_id="alex", limit=3)
        turn = next(h for h in hits if h.kind == "turn")
        assert turn.explain["query"]["rewritten"] == "where does I live?"
        assert not any("Nice to meet you" in h.text or "my name is" in h.text for h in hits)
        named = alex.search("what is Alex's name?", user_id="alex", limit=3)
        assert any("Alex" in h.text for h in named)


def test_the_context_marks_the_outdated_turn(alex: Memory) -> None:
    with alex:
        ctx = alex.context("where does Alex live?", user_id="alex", budget_tokens=400)
        seattle = next(line for line in ctx.text.splitlines() if "Seattle" in line)
        assert "(outdated since 2024-06-03; now: " in seattle
        assert ctx.text.index("Portland") < ctx.text.index("Seattle")


def test_rewrite_turns_the_users_names_into_the_first_person() -> None:
    assert rewrite("where does Alex live?", ("Alex",)) == "where does I live?"
    assert rewrite("What is alex's job?", ("Alex",)) == "What is my job?"
    assert rewrite("where does Alexandra live?", ("Alex",)) == "where does Alexandra live?"
    assert rewrite("민수 씨는 어디 살아?", ("민수",)) == "제가 어디 살아?"
    assert rewrite("Alex", ("Alex",)) == "I"
    assert rewrite("where do I live?", ()) == "where do I live?"
    assert about_names("what's my name?") and about_names("이름이 뭐야?")
    assert not about_names("where do I live?")


def test_phatic_turns_are_greetings_thanks_and_names_only() -> None:
    stage = PhaticStage(None, MultilingualAnalyzer(), 0.2)  # type: ignore[arg-type]
    for text in (
        "Nice to meet you, Alex!",
        "Hi, I'm Alex.",
        "Thanks, Mel, that means a lot!",
        "Hey Caroline! Good to see you!",
        "안녕하세요, 저는 민수예요",
    ):
        assert stage.is_phatic(text), text
    for text in (
        "Hey Mel! How was the pottery class you took last weekend?",
        "I live in Seattle.",
        "Thanks, the dentist moved my appointment to Friday.",
    ):
        assert not stage.is_phatic(text), text


def test_the_fact_a_leading_turn_gave_ranks_beside_it(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "I work as a backend engineer at Stripe."},
                {"role": "user", "content": "Baking sourdough this weekend."},
                {"role": "user", "content": "My knee physio is going well."},
            ],
            user_id="sam",
            timestamp="2024-01-05T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        hits = memory.search("where does Sam work?", user_id="sam", limit=4)
        turn = _first(hits, "I work as")
        fact = next(i for i, h in enumerate(hits) if h.kind == "fact" and "Stripe" in h.text)
        assert fact == turn + 1
        assert hits[fact].explain["current"]["said_in"] == hits[turn].id


def test_the_user_id_counts_as_the_users_name(tmp_path: Path, embedder: Embedder) -> None:
    """No name card, but the id "alex" is a first name: "Alex" in a query means the user, so
    turns that only address Alex do not rank by the name (the graph does not seed on it)."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "I switched from coffee to green tea."},
                {"role": "assistant", "content": "Good choice, Alex!"},
            ],
            user_id="alex",
            timestamp="2024-01-05T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        hits = memory.search("what does Alex drink?", user_id="alex", limit=3)
        assert hits[0].explain["query"]["rewritten"] == "what does I drink?"
        assert all("entity:Alex" not in h.explain.get("graph", {}).get("path", []) for h in hits)


def test_a_later_correction_no_fact_knows_goes_first(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "Remind me that my dentist appointment is on Monday."},
            user_id="jo",
            session_id="one",
            timestamp="2024-05-01T10:00:00Z",
        )
        memory.add(
            {"role": "user", "content": "The dentist called, it moved to Tuesday at 4pm."},
            user_id="jo",
            session_id="two",
            timestamp="2024-05-03T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        hits = memory.search("When is my dentist appointment?", user_id="jo", limit=2)
        assert "Tuesday" in hits[0].text
        assert hits[0].explain["truth"]["newer_than"] == hits[1].id
        past = memory.search("When did I first book the dentist?", user_id="jo", limit=2)
        assert all("newer_than" not in h.explain.get("truth", {}) for h in past)


def _said(memory: Memory, user: str, *said: tuple[str, str]) -> None:
    for number, (when, text) in enumerate(said):
        memory.add(
            {"role": "user", "content": text},
            user_id=user,
            session_id=f"{user}-{number}",
            timestamp=when,
        )
    assert memory.wait(timeout=120)


def test_a_turn_whose_facts_all_ended_yields_whatever_is_asked(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The report turn names the old manager; asked who gets the report, the turn naming the
    new manager goes first although the question names no slot."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "ty",
            ("2023-10-05T16:00:00Z", "My manager Linda wants the quarterly report by Friday."),
            ("2024-01-22T10:00:00Z", "Linda left the company, and my new boss is Raj."),
        )
        hits = memory.search("Who should I send the report to?", user_id="ty", limit=4)
        turns = [h for h in hits if h.kind == "turn"]
        assert "Raj" in turns[0].text
        stale = next(h for h in turns if "quarterly" in h.text)
        assert stale.explain["truth"]["current"] == "Raj is the user's manager."


def test_a_cancelled_plan_yields_to_the_turn_that_cancelled_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "mia",
            ("2024-02-14T10:00:00Z", "We booked our summer vacation: two weeks in Italy in June!"),
            (
                "2024-04-28T10:00:00Z",
                "We cancelled the Italy trip. We're doing a road trip to Yellowstone instead.",
            ),
        )
        hits = memory.search("Where am I going on vacation this summer?", user_id="mia", limit=4)
        assert "Yellowstone" in hits[0].text and hits[0].kind == "turn"
        cancelled = next(h for h in hits if h.kind == "fact" and "cancelled" in h.text)
        assert hits.index(cancelled) > 0


def test_as_of_a_date_the_last_change_before_it_goes_first(
    tmp_path: Path, embedder: Embedder
) -> None:
    """No fact knows these homes; asked as of a date, the last move said before it wins over
    an earlier home, and a move said after it is not considered."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "leo",
            ("2023-01-10T10:00:00Z", "Boston winters are brutal, I've lived here my whole life."),
            ("2023-09-01T10:00:00Z", "New chapter: I moved to Chicago for grad school!"),
            ("2024-06-01T10:00:00Z", "Graduated, and I moved to Minneapolis for a job."),
        )
        hits = memory.search(
            "What city was I living in back then?", user_id="leo", limit=3, as_of="2024-01-15"
        )
        assert "Chicago" in hits[0].text
        assert all("Minneapolis" not in h.text for h in hits)


def test_what_was_it_again_asks_about_now() -> None:
    from madeleine.read.truth import _PAST, _RECALL

    assert not _PAST.search(_RECALL.sub(" ", "내가 아침마다 마시는 거 뭐였지?"))
    assert _PAST.search(_RECALL.sub(" ", "그 무렵 나는 어느 도시에 살았지?"))


def test_a_later_turn_about_another_slot_does_not_overrule_a_holding_fact(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The facts know the job did not change: a later turn with a change word ("new",
    "right now", "these days") but about a bakery or a drink is not lifted over the turn
    whose fact about the named slot still holds."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "cam",
            ("2025-03-02T10:00:00Z", "I still do bouldering three times a week."),
            ("2025-11-18T10:00:00Z", "I still work at Initech as a data engineer."),
            ("2025-11-20T10:00:00Z", "I tried a new bakery near the station."),
            ("2025-12-20T10:00:00Z", "My usual drink is black coffee right now."),
            ("2025-12-29T10:00:00Z", "These days I mostly drink matcha."),
        )
        for question, answer in (
            ("Where do I work now?", "Initech"),
            ("Which sport do I do at the moment?", "bouldering"),
        ):
            hits = memory.search(question, user_id="cam", limit=5, now="2026-01-02")
            lifted = [h.text for h in hits if "newer_than" in h.explain.get("truth", {})]
            assert lifted == [], question
            assert answer in hits[0].text or answer in hits[1].text, question


def test_the_card_holding_for_a_named_slot_ranks_below_the_leading_hit(
    tmp_path: Path, embedder: Embedder
) -> None:
    """After maintenance the tellings of a sport may be archived; the card that holds for
    the slot the question names is its answer, just below the leading hit. Asked as of a
    date, the card that held then; asked about the past, none is lifted."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "cam",
            ("2025-01-10T10:00:00Z", "My main sport right now is running."),
            ("2025-02-01T10:00:00Z", "I grew up in Nantes."),
            ("2025-06-01T10:00:00Z", "I've been doing a lot of swimming lately."),
            ("2025-06-03T10:00:00Z", "The weather was grey and rainy today."),
            ("2025-09-01T10:00:00Z", "I watched a documentary about chess yesterday."),
        )
        for hit in memory.search("sport", user_id="cam", limit=10, channels=["bm25"]):
            if hit.kind == "turn":
                assert memory.archive(hit.id, user_id="cam")
        question = "Which sport do I do at the moment?"
        hits = memory.search(question, user_id="cam", limit=3, now="2025-09-10")
        assert hits[1].kind == "fact" and "swimming" in hits[1].text
        assert hits[1].explain["current"]["slot"] == "preference.sport"
        assert hits[1].score < hits[0].score
        then = memory.search(question, user_id="cam", limit=3, as_of="2025-03-01")
        held = [h.text for h in then if h.explain.get("current", {}).get("slot")]
        assert held == ["The user practises running."]
        past = memory.search("Which sport did I do last year?", user_id="cam", limit=3)
        assert all("slot" not in h.explain.get("current", {}) for h in past)


def test_a_later_turn_may_have_changed_what_the_slot_card_says(
    tmp_path: Path, embedder: Embedder
) -> None:
    """No fact learned of the move to Minneapolis: the Chicago card is not lifted over the
    later turn that announces a move."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "leo",
            ("2023-09-01T15:00:00Z", "I moved to Chicago for grad school."),
            ("2024-06-15T12:00:00Z", "Graduated! Took a job up north, so I just moved again."),
        )
        hits = memory.search("Where do I live now?", user_id="leo", limit=3)
        assert all("slot" not in h.explain.get("current", {}) for h in hits)


def test_context_marks_a_card_a_later_unrecognised_turn_contradicts(
    tmp_path: Path, embedder: Embedder
) -> None:
    """No rule reads "we left Chicago for good" as a move, so the home card still holds;
    asked where the user lives, the context does not present it as current beside silence:
    the later turn joins the block (though it did not rank for the question) and the card is
    marked outdated. A later turn that only restates the card ("now" alone) leaves it be."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(
            memory,
            "kim",
            ("2024-01-10T10:00:00Z", "I live in Chicago with my partner."),
            ("2024-02-01T10:00:00Z", "I grew up in Nantes."),
            ("2024-05-02T10:00:00Z", "Big change: we left Chicago for good, the kids wanted it."),
        )
        assert any(
            f.key == "location.home" and "Chicago" in f.statement for f in memory.facts("kim")
        )
        text = memory.context("Where do I live?", user_id="kim", now="2024-06-01").text
        card = next(line for line in text.splitlines() if line.startswith("- The user lives"))
        assert "(outdated: said 2024-01-10; later: 2024-05-02)" in card
        assert "we left Chicago for good" in text
        whole = memory.context("What do you know about me?", user_id="kim", now="2024-06-01")
        home = next(line for line in whole.text.splitlines() if "lives in Chicago" in line)
        assert "(outdated: said 2024-01-10; later: 2024-05-02)" in home
        _said(
            memory,
            "lee",
            ("2024-01-10T10:00:00Z", "I live in Chicago with my partner."),
            ("2024-05-02T10:00:00Z", "Chicago is lovely in spring now."),
        )
        text = memory.context("Where do I live?", user_id="lee", now="2024-06-01").text
        card = next(line for line in text.splitlines() if line.startswith("- The user lives"))
        assert "outdated" not in card
