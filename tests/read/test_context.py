"""What context() hands an agent: the answer, little else (issue 14)."""

from __future__ import annotations

from pathlib import Path

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.read.context import PROFILE_TITLE


def test_the_context_keeps_unrelated_turns_out(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "Also my knee physio is going well."},
                {"role": "user", "content": "Baking sourdough this weekend."},
                {
                    "role": "user",
                    "content": "The payments-api auth bug: tokens expire early because the JWT "
                    "clock skew is not handled in the middleware.",
                },
                {"role": "user", "content": "My sister visits in May."},
            ],
            user_id="u",
            timestamp="2024-07-01T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        context = memory.context(
            "continue work on the payments-api auth bug", user_id="u", budget_tokens=300
        )
        assert "clock skew" in context.text
        for filler in ("physio", "sourdough"):  # nothing specific, nothing asked about
            assert filler not in context.text
        # a specific (a month) may fill budget the evidence left, never ahead of it
        if "sister" in context.text:
            assert context.text.index("clock skew") < context.text.index("sister")


def test_the_profile_holds_standing_facts_unless_asked_broadly(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "I'm allergic to penicillin."},
                {"role": "user", "content": "I live in Denver."},
                {"role": "user", "content": "I work at Acme as a designer."},
                {"role": "user", "content": "My sourdough starter finally bubbles."},
            ],
            user_id="u",
            timestamp="2024-07-01T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        narrow = memory.context("how is my sourdough starter?", user_id="u", budget_tokens=500)
        assert "sourdough" in narrow.text
        assert "penicillin" in narrow.text  # stable and important: always worth knowing
        profile = narrow.text.partition(PROFILE_TITLE)[2].partition("###")[0]
        assert "penicillin" in profile
        assert "Denver" not in profile and "Acme" not in profile
        broad = memory.context("what do you know about me?", user_id="u", budget_tokens=1000)
        assert "Denver" in broad.text and "penicillin" in broad.text


def test_the_long_best_hit_is_cut_around_what_matches(tmp_path: Path, embedder: Embedder) -> None:
    filler = " ".join(f"Sentence {n} is about the weather being grey and mild." for n in range(40))
    long = f"{filler} The staging deploy key rotates every Friday at noon. {filler}"
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add({"role": "user", "content": long}, user_id="u", timestamp="2024-07-01")
        assert memory.wait(timeout=120)
        context = memory.context(
            "when does the staging deploy key rotate?", user_id="u", budget_tokens=120
        )
        assert "deploy key rotates every Friday" in context.text
        assert "…" in context.text and context.tokens <= 120


def test_a_short_answer_brings_the_question_it_answers(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "assistant", "content": "Which colour do you want for the new bike?"},
                {"role": "user", "content": "The matte green one."},
                {"role": "user", "content": "Unrelated: my sister visits in May."},
            ],
            user_id="u",
            timestamp="2024-07-01T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        context = memory.context("matte green", user_id="u", budget_tokens=300)
        assert "The matte green one." in context.text
        assert "Which colour do you want for the new bike?" in context.text
        assert context.window
        # an unrelated aside may only fill what is left, as evidence, after the answer
        if "sister" in context.text:
            assert context.text.index("matte green") < context.text.index("sister")
            (aside,) = [h for h in context.window if "sister" in h.text]
            assert "evidence" in aside.explain


def _sessions(memory: Memory, user: str, *sessions: tuple[str, str, list[str]]) -> None:
    for session, when, texts in sessions:
        memory.add(
            [{"role": "user", "content": t} for t in texts],
            user_id=user,
            session_id=session,
            timestamp=when,
        )
    assert memory.wait(timeout=120)


def test_what_the_query_acts_on_comes_with_why(tmp_path: Path, embedder: Embedder) -> None:
    """Proactive recall: months apart, in another session, the account the query would use
    closes; the care the query confirms needs the patient number given at booking."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _sessions(
            memory,
            "u",
            ("bank", "2024-03-10", ["My checking account at Chase closes at the end of May."]),
            ("health", "2024-04-02", ["I'm allergic to penicillin.", "I take metformin daily."]),
            (
                "booking",
                "2024-07-01",
                [
                    "Booked a dentist appointment at Bright Smiles for July 20.",
                    "My patient number at Bright Smiles is BS-4821.",
                ],
            ),
            ("phone", "2024-07-05", ["My phone plan with Verizon costs $65 a month."]),
            ("misc", "2024-07-06", ["Baking sourdough this weekend.", "My knee physio helps."]),
        )
        autopay = memory.context(
            "set up autopay for my phone bill from my checking account",
            user_id="u",
            budget_tokens=500,
        )
        assert "Related:" in autopay.text or "Facts:" in autopay.text
        assert "Chase checking account closes" in autopay.text
        assert "sourdough" not in autopay.text and "physio" not in autopay.text
        dentist = memory.context("confirm my dentist appointment", user_id="u", budget_tokens=300)
        assert "BS-4821" in dentist.text
        assert "metformin" not in dentist.text  # not the appointment's business


def test_an_assistant_reply_brings_what_the_user_said(tmp_path: Path, embedder: Embedder) -> None:
    """The reply names the query's word ("laptop"), the user's turn before it holds the
    facts (the warranty and the service tag): both come in."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {
                    "role": "user",
                    "content": "Bought a Dell XPS 15 today with a one-year warranty. "
                    "Service tag 7HX2K93.",
                },
                {"role": "assistant", "content": "Nice laptop! I'll remember the service tag."},
                {"role": "user", "content": "Unrelated: my sister visits in May."},
            ],
            user_id="u",
            timestamp="2024-07-01T10:00:00Z",
        )
        assert memory.wait(timeout=120)
        context = memory.context(
            "my laptop screen keeps flickering, what should I do?", user_id="u", budget_tokens=300
        )
        assert "7HX2K93" in context.text and "warranty" in context.text


def test_the_budget_left_goes_to_what_the_request_acts_on(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Graded floor: a move brings the lease's notice said months earlier (no word shared
    with the query), but the rest of the budget does not go to unrelated small talk."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _sessions(
            memory,
            "u",
            (
                "lease",
                "2024-01-08",
                [
                    "My lease at Maple Court ends July 31, and the landlord needs 60 days' "
                    "written notice if I'm not renewing."
                ],
            ),
            ("job", "2024-03-15", ["I got a job offer from Amazon in Seattle! I start August 12."]),
            ("misc", "2024-04-01", ["Baking sourdough this weekend.", "My knee physio helps."]),
            ("chat", "2024-04-02", ["What's a good podcast about history?"]),
        )
        context = memory.context("help me plan my move to Seattle", user_id="u", budget_tokens=500)
        assert "Amazon" in context.text
        assert "60 days" in context.text
        for filler in ("sourdough", "physio", "podcast"):
            assert filler not in context.text


def test_a_line_a_later_turn_changed_is_marked_outdated(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _sessions(
            memory,
            "u",
            ("old", "2023-11-02", ["My 2012 Honda Civic needs new brake pads again."]),
            ("new", "2024-03-09", ["Finally sold the old Civic! I picked up a used Tesla now."]),
            ("misc", "2024-03-10", ["Baking sourdough this weekend."]),
        )
        context = memory.context("what car do I drive?", user_id="u", budget_tokens=500)
        lines = [line for line in context.text.splitlines() if "Civic" in line]
        assert any("Tesla" in line for line in lines)
        old = [line for line in lines if "brake pads" in line]
        assert old and all("(outdated: said 2023-11-02; later: 2024-03-09)" in o for o in old)


def test_korean_request_words_reach_what_the_request_acts_on(tmp_path: Path) -> None:
    """A Korean noun of the word lists analyzed alone must not shrink to a particle: "이사"
    (a move) reaches the lease's words, and "이" (in every sentence) reaches nothing."""
    with Memory(tmp_path / "m", background=False) as memory:
        builder = memory._open().contexts
        home = builder._family_words("home")
        assert {"이사", "전세", "집주인"} <= home
        assert "이" not in home and "이" not in builder._family_words("medicine")
        assert "전세" in builder._reach({"판교", "이사"})


def test_what_do_you_know_about_me_is_the_whole_current_profile(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Every current card, the superseded home and the session digests left out, whatever
    share of the budget it takes; the turns follow."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _sessions(
            memory,
            "zoe",
            ("s1", "2025-01-05T10:00:00Z", ["I live in Chicago, near the lake."]),
            ("s2", "2025-01-15T10:00:00Z", ["My passport expires on 2027-03-01."]),
            (
                "s3",
                "2025-07-24T10:00:00Z",
                ["We finally got out of Chicago and settled in Tucson."],
            ),
            ("s4", "2025-08-03T10:00:00Z", ["I'm fully gluten-free these days."]),
            ("s5", "2025-08-13T10:00:00Z", ["I sold the Subaru, it's an e-bike for me now."]),
            ("s6", "2025-08-23T10:00:00Z", ["I'm now running the platform team at Shopify."]),
        )
        current = [f for f in memory.facts("zoe", include_digests=True)]
        assert len(current) >= 5
        text = memory.context("What do you know about me?", user_id="zoe", budget_tokens=250).text
        profile = text.split("Profile:\n", 1)[1].split("###", 1)[0]
        for fact in current:
            if not fact.key.startswith("digest."):
                assert fact.statement in profile
        assert "lives in Chicago" not in profile and "Session" not in profile


def test_a_breakdown_gets_every_amount_and_no_pleasantries(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Issue 32: the relevance floor cut the evidence a list question asks for in full,
    while "Perfect." and "Anything else?" took the budget."""
    filler = ["Perfect.", "Wonderful, thank you!", "Is there anything else I can help with?"]
    wedding = [
        "I'd like to book the venue for our wedding.",
        *filler,
        "The first installment is $5,000, due at signing.",
        *filler,
        "The second installment of $18,400 is due August 31, 2025.",
        *filler,
        "The final payment is $22,950, due two weeks before the date.",
        *filler,
    ]
    trip = [
        "We're planning the honeymoon in Lisbon in October.",
        *filler,
        "My passport number is 487223901 and it expires February 18th, 2025.",
        *filler,
    ]
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        for session, when, texts in (
            ("venue", "2024-05-02", wedding),
            ("trip", "2024-06-10", trip),
        ):
            memory.add(
                [
                    {"role": "user" if n % 2 == 0 else "assistant", "content": t}
                    for n, t in enumerate(texts)
                ],
                user_id="u",
                session_id=session,
                timestamp=when,
            )
        assert memory.wait(timeout=120)
        context = memory.context(
            "What are the three payment installments for my wedding?",
            user_id="u",
            budget_tokens=160,
        )
        for amount in ("$5,000", "$18,400", "August 31, 2025", "$22,950"):
            assert amount in context.text
        for pleasantry in ("Wonderful, thank you", "anything else I can help"):
            assert pleasantry not in context.text
        assert context.tokens <= 160
        # what else the user's sessions hold comes with what it is, budget permitting
        wider = memory.context(
            "Anything I should take care of before the wedding?", user_id="u", budget_tokens=300
        )
        assert "February 18th, 2025" in wider.text and "passport" in wider.text
        assert "Wonderful, thank you" not in wider.text


def _calls(memory: Memory, user: str, sessions: list[tuple[str, str, list[str]]]) -> None:
    for session, when, texts in sessions:
        memory.add(
            [
                {"role": "user" if n % 2 == 0 else "assistant", "content": t}
                for n, t in enumerate(texts)
            ],
            user_id=user,
            session_id=session,
            timestamp=when,
        )


def test_evidence_reaches_a_session_no_hit_comes_from(tmp_path: Path, embedder: Embedder) -> None:
    """A layer-3 question names one story while the facts that bear on it sit in another
    session the ranked hits never reach: the best turn of each missed session anchors the
    evidence pool (``session_anchor``), never the ranked turns."""
    apartment = [
        "I'm applying for the apartment on Riverside Drive; what credit score do you need?",
        "We prefer a credit score of 700 or above, and we run a credit check.",
        "My credit has always been good, I never missed a payment.",
        "Sometimes a credit check shows accounts people never opened.",
        "Could my credit report have accounts I don't know about?",
        "It happens; check your credit report before applying.",
    ]
    rewards = [
        "I'm calling about my rewards points balance.",
        "I show a 20,000 point redemption in March sent to 8823 Maple Street.",
        "I never lived on Maple Street and never redeemed those points.",
        "That redemption was about $8,500 in gift cards.",
    ]
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _calls(
            memory,
            "u",
            [("apartment", "2024-03-08", apartment), ("rewards", "2024-05-02", rewards)],
        )
        assert memory.wait(timeout=120)
        question = "Could someone have opened credit in my name? How bad is my credit situation?"
        hits = memory.search(question, user_id="u", limit=4)
        assert {h.session_id for h in hits} == {"apartment"}
        assert not any("session_anchor" in h.explain for h in hits)  # search: never
        context = memory.context(question, user_id="u", limit=4, budget_tokens=400)
        assert "8823 Maple Street" in context.text and "$8,500" in context.text
        assert all(h.session_id == "apartment" for h in context.items)  # ranked: the hits
        reached = [h for h in context.window if h.session_id == "rewards"]
        assert reached and all("evidence" in h.explain for h in reached)
        hits_only = memory.context(question, user_id="u", limit=4, budget_tokens=400, window=0)
        assert "Maple Street" not in hits_only.text  # window 0: the hits alone
