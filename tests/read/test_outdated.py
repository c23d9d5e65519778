"""Marking the lines of a context block that a later line changed."""

from __future__ import annotations

from datetime import UTC, datetime

from madeleine.read.outdated import Line, outdated, particular
from madeleine.records import Hit


def _hit(id_: str, text: str, day: str, session: str, truth: dict[str, str] | None = None) -> Hit:
    speaker = text.split(":", 1)[0]
    return Hit(
        id=id_,
        kind="fact" if id_.startswith("fact_") else "turn",
        text=text,
        score=1.0,
        timestamp=datetime.fromisoformat(day).replace(tzinfo=UTC),
        source_ids=[],
        session_id=session,
        speaker=speaker,
        explain={"truth": truth} if truth else {},
    )


def _line(hit: Hit, words: str, direct: bool = True) -> Line:
    return Line(hit, frozenset(words.split()), direct)


def _order(hit: Hit) -> tuple[float, int]:
    return (hit.timestamp.timestamp(), int(hit.id.rpartition("_")[2]))


def test_a_later_change_marks_the_earlier_turn_its_echo_and_its_fact() -> None:
    old = _hit("ep_1", "Ben: My Honda Civic needs new brake pads.", "2023-11-02", "s1")
    echo = _hit("ep_2", "assistant: Civic brakes wear fast.", "2023-11-02", "s1")
    unrelated = _hit("ep_3", "Ben: My sister visits in May.", "2023-11-02", "s1")
    new = _hit("ep_9", "Ben: Sold the old Civic, got a Tesla now.", "2024-03-09", "s2")
    fact = _hit("fact_4", "The user drives a Honda Civic.", "2023-11-02", "s1")
    notes = outdated(
        [
            _line(old, "honda civic brake pad"),
            _line(echo, "civic brake wear", direct=False),
            _line(unrelated, "sister visit may"),
            _line(new, "sold civic tesla"),
        ],
        [_line(fact, "drive honda civic")],
        _order,
    )
    assert notes["ep_1"] == " (outdated: said 2023-11-02; later: 2024-03-09)"
    assert "ep_2" in notes and "fact_4" in notes
    assert "ep_3" not in notes and "ep_9" not in notes


def test_the_turn_a_fact_backed_change_replaced_is_outdated_without_shared_words() -> None:
    old = _hit("ep_1", "Priya: Being a pharmacist at Walgreens is tiring.", "2024-02-02", "s1")
    new = _hit(
        "ep_5",
        "Priya: I'm a data analyst at Spotify now.",
        "2024-06-20",
        "s2",
        {"replaces": "ep_1"},
    )
    notes = outdated(
        [_line(old, "pharmacist walgreens tire"), _line(new, "data analyst spotify")], [], _order
    )
    assert set(notes) == {"ep_1"}


def test_a_later_turn_merely_lifted_marks_nothing_it_shares_no_word_with() -> None:
    """The truth stage lifts any later turn saying "now" over an earlier one: that alone
    does not make the earlier turn outdated."""
    old = _hit("ep_1", "Rohan: My accountant needs my documents by March 15.", "2024-01-20", "s1")
    new = _hit(
        "ep_7",
        "Rohan: Maybe later, I'm baking bread now.",
        "2024-02-20",
        "s2",
        {"newer_than": "ep_1"},
    )
    notes = outdated(
        [_line(old, "accountant document march"), _line(new, "bake bread")], [], _order
    )
    assert notes == {}


def test_no_change_announced_nothing_marked() -> None:
    first = _hit("ep_1", "Ana: The lease on Maple Court ends July 31.", "2024-01-08", "s1")
    later = _hit("ep_2", "Ana: The Maple Court landlord wants notice.", "2024-03-08", "s2")
    notes = outdated(
        [_line(first, "lease maple court end"), _line(later, "maple court landlord notice")],
        [],
        _order,
    )
    assert notes == {}


def test_particular_keeps_words_few_passages_share() -> None:
    common = [frozenset({"help", "civic"}), *[frozenset({"help"})] * 9]
    keep = particular(common, 0.1)
    assert keep(frozenset({"help", "civic"})) == frozenset({"civic"})


def test_a_card_no_rule_superseded_is_outdated_by_a_later_change_on_its_topic() -> None:
    """The card's own turn is not in the block; a later turn of another session says the
    thing it names changed: the card is marked. A restatement ("now" only), a turn of the
    card's own session or one said the same day marks nothing."""
    card = _hit("fact_3", "The user volunteers at the animal shelter.", "2024-01-10", "s1")
    other = _hit("fact_4", "The user paints landscapes.", "2024-01-10", "s1")
    later = _hit("ep_7", "Ana: I stopped volunteering at the shelter.", "2024-05-02", "s4")
    notes = outdated(
        [_line(later, "stop volunteer shelter")],
        [_line(card, "volunteer animal shelter"), _line(other, "paint landscape")],
        _order,
    )
    assert notes == {"fact_3": " (outdated: said 2024-01-10; later: 2024-05-02)"}
    for text, day, session in (
        ("Ana: The shelter is busy now.", "2024-05-02", "s4"),  # "now" only
        ("Ana: I stopped volunteering at the shelter.", "2024-01-10", "s1"),  # its own
        ("Ana: I stopped volunteering at the shelter.", "2024-01-10", "s2"),  # same day
    ):
        turn = _hit("ep_8", text, day, session)
        assert (
            outdated([_line(turn, "stop volunteer shelter")], [_line(card, "shelter")], _order)
            == {}
        )


def test_the_echo_of_a_turn_the_truth_stage_marked_is_marked_too() -> None:
    old = _hit("ep_1", "Alex: I've lived in Austin for six years.", "2024-01-12", "s1")
    echo = _hit("ep_2", "assistant: Austin is a fun place!", "2024-01-12", "s1")
    mark = " (outdated since 2024-05-03; now: The user lives in Denver.)"
    notes = outdated(
        [_line(old, "live austin six year"), _line(echo, "austin fun place", direct=False)],
        [],
        _order,
        marked={"ep_1": mark},
    )
    assert notes == {"ep_2": mark}
