"""Evidence packing: specifics, filler, novelty and labels (``read.evidence``)."""

from __future__ import annotations

from datetime import UTC, datetime

from madeleine.read.evidence import Pool, choose, spans_of, specifics
from madeleine.records import Hit
from madeleine.text.analyzer import MultilingualAnalyzer

ANALYZER = MultilingualAnalyzer()


def _hit(number: int, text: str, speaker: str = "user", session: str = "s1") -> Hit:
    return Hit(
        id=f"ep_{number}",
        kind="turn",
        text=f"{speaker}: {text}",
        score=1.0,
        timestamp=datetime(2024, 9, 1, tzinfo=UTC),
        source_ids=[],
        session_id=session,
        speaker=speaker,
        explain={},
    )


def _words(text: str) -> int:
    return len(text.split())


def test_specifics_are_numbers_codes_and_names_said_mid_sentence() -> None:
    assert specifics("Your checking account is 4429853327, routing 123006800.") == [
        "4429853327",
        "123006800",
    ]
    assert specifics("It is on September 20 with Santos Drywall for $800.") == [
        "september 20",
        "santos drywall",
        "800",
    ]
    assert specifics("Your ADT account number is ADT-7789234.") == ["adt", "adt 7789234"]
    assert specifics("The bill was $5,000, $3,500 of it covered.") == ["5000", "3500"]
    for filler in ("Thank you for your help!", "What do you mean?", "Sounds good to me."):
        assert specifics(filler) == []
    assert specifics("처방전은 3월 5일에 받았어요") == ["3월 5일에"]


def test_sentences_are_chosen_by_new_specifics_per_word_within_budget() -> None:
    turns = [
        _hit(1, "Thanks for calling, how can I help you today?", "assistant"),
        _hit(2, "Apple $15,000, Microsoft $12,000, Amazon $10,000."),
        _hit(3, "So that's Apple $15,000 and Microsoft $12,000.", "assistant"),
        _hit(4, "I will think about it and call you back later."),
        _hit(5, "The deposit of $5,000 is due August 31, 2025."),
    ]
    pool = Pool()
    for turn in turns:
        pool.add(turn, 1.0)
    covered: set[str] = set()
    chosen = choose(pool, set(), ANALYZER.terms, covered, 40, _words, (2, 4), set())
    texts = [c.text for c in chosen]
    assert any("Microsoft $12,000" in t and t.startswith("user:") for t in texts)
    assert any("August 31, 2025" in t for t in texts)
    joined = " ".join(texts)
    assert "help you today" not in joined and "call you back" not in joined  # filler
    assert "So that's Apple" not in joined  # a read-back adds nothing new
    assert {"15000", "5000", "2025"} <= covered  # distinctive numbers
    tight = choose(pool, set(), ANALYZER.terms, set(), 12, _words, (2, 4), set())
    assert [c.hit.id for c in tight] == ["ep_2"]  # 6 words, a line (2) and a heading (4)


def test_a_bare_answer_keeps_the_question_it_answers() -> None:
    asked = _hit(1, "Thank you. And could you please provide your date of birth?", "assistant")
    answer = _hit(2, "March 15th, 1985.")
    pool = Pool()
    pool.add(asked, 0.5)
    pool.add(answer, 1.0)
    before = {answer.id: asked}
    chosen = choose(
        pool, set(), ANALYZER.terms, set(), 60, _words, (2, 4), set(), lambda h: before.get(h.id)
    )
    assert any(c.text == "user: (date of birth?) March 15th, 1985." for c in chosen)


def test_spans_of_what_the_context_already_says() -> None:
    assert spans_of(["- user: my card ends in 4521.", "The Chase card."]) == {"4521", "chase"}
    assert spans_of(["Closing is December 20th."]) == {"december 20th"}  # not any "20th"
