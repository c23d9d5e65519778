"""How slots relate: which keys never conflict, which new cards close or make stale others.

Resolution supersedes a card by a newer card of the same key. Beyond that, slots have
relations that no similarity or attribute comparison can tell:

- **independent** keys describe different things even when their cards look alike: a role
  and an employer ("backend engineer at Stripe" is both), a city and the neighbourhood in
  it, two plans (``plan.trip.lisbon`` and ``plan.move.seoul``), two project facts. Their
  cards never conflict, whatever the attribute rule or a judge says.
- a **closing** card (``status`` cancelled / left / closed / ended) ends the card of its key
  it names ("we cancelled the trip to Lisbon", "I left my job at Stripe"); one that names
  another value (a job the user left before the current one) is history, not a conflict.
- a new card **makes stale** cards of other keys that depended on what it replaced: a move to
  another city ends the neighbourhood in the old one, a new employer ends the role held at
  the old one, an avoided item or one switched away from ("from coffee to green tea") ends
  the preference for it (and a preference ends its avoidance).
"""

from __future__ import annotations

from madeleine.facts.cards import CardDraft

CLOSING = frozenset({"cancelled", "left", "closed", "ended", "stopped"})

# families whose distinct keys never conflict with one another
_INDEPENDENT_FAMILIES = ("plan.", "project.", "preference.avoid.", "account.", "health.")
_INDEPENDENT_PAIRS = frozenset(
    {
        frozenset({"work.role", "work.employer"}),
        frozenset({"location.home", "location.home_area"}),
        frozenset({"location.home", "location.work"}),
        frozenset({"location.home_area", "location.work"}),
    }
)


def value(card: CardDraft, name: str) -> str | None:
    """An attribute's value, case and spaces folded, or None."""
    for attribute in card.attributes:
        if attribute.name == name:
            return " ".join(attribute.value.casefold().split())
    return None


def status(card: CardDraft) -> str | None:
    return value(card, "status")


def closing(card: CardDraft) -> bool:
    return status(card) in CLOSING


def independent(old_key: str, new_key: str) -> bool:
    """Whether cards of these two (different) keys can never contradict each other."""
    if old_key == new_key:
        return False
    if frozenset({old_key, new_key}) in _INDEPENDENT_PAIRS:
        return True
    for family in _INDEPENDENT_FAMILIES:
        if old_key.startswith(family) or new_key.startswith(family):
            return True
    return False


def _identity(card: CardDraft) -> dict[str, str]:
    """The values that say *which* thing a card is about (not its state)."""
    skipped = {"status", "start_date", "end_date", "start", "end", "since", "previous"}
    return {
        a.name: " ".join(a.value.casefold().split())
        for a in card.attributes
        if a.name not in skipped
    }


def closes_other_value(old: CardDraft, draft: CardDraft) -> bool:
    """A closing draft of the same key that names another value than the current card's
    ("I left my job at Acme" while the current employer is Stripe): history, not news."""
    if not closing(draft) or old.key != draft.key or closing(old):
        return False
    old_values, new_values = _identity(old), _identity(draft)
    shared = set(old_values) & set(new_values)
    return bool(shared) and any(old_values[n] != new_values[n] for n in shared)


def makes_stale(old: CardDraft, new: CardDraft) -> str | None:
    """Why ``new`` (just stored as current) ends ``old`` (another key), or None."""
    if old.key == new.key or old.subject.casefold() != new.subject.casefold():
        return None
    if new.key == "location.home" and old.key == "location.home_area":
        new_city, area_city = value(new, "city"), value(old, "city")
        if new_city is not None and area_city != new_city:
            return "moved to another city: the old neighbourhood ends"
    if new.key == "work.employer" and old.key == "work.role":
        held_at = value(old, "employer")
        before = value(new, "previous")
        if closing(new) and (held_at is None or held_at == value(new, "employer")):
            return "left the job: the role held there ends"
        if held_at is not None and held_at != value(new, "employer") and not closing(new):
            if before is None or before == held_at:
                return "changed employer: the role held at the old one ends"
    previous = value(new, "previous")
    if previous is not None and old.key.startswith("preference.") and not closing(old):
        if previous in (value(old, "item"), value(old, "value")) and old.key != "preference.dislike":
            return "switched away from it"
    if new.key.startswith("preference.avoid.") and old.key.startswith("preference."):
        avoided = value(new, "item")
        if avoided is not None and avoided in (value(old, "item"), value(old, "value")):
            if not old.key.startswith("preference.avoid."):
                return "now avoided"
    if old.key.startswith("preference.avoid.") and new.key.startswith("preference."):
        liked = value(new, "item") or value(new, "value")
        if liked is not None and liked == value(old, "item") and new.key != "preference.dislike":
            return "no longer avoided"
    if closing(new) and new.key.startswith("account.") and old.key.startswith("account."):
        if not closing(old) and _names_account(value(new, "name"), old):
            return "account closed"
    return None


_GENERIC_ACCOUNT_WORDS = frozenset(
    "account accounts bank checking savings current card credit debit membership my our".split()
)


def _names_account(name: str | None, old: CardDraft) -> bool:
    """Whether a closing account's name points at ``old`` ("Chase" → the Chase checking
    account); no name points at the bank accounts."""
    if not name:
        return old.key.startswith("account.bank.")
    words = set(name.replace("_", " ").split()) - _GENERIC_ACCOUNT_WORDS
    if not words:
        kinds = set(name.split()) & {"checking", "savings"}
        return bool(kinds) and old.key.split(".")[-1] in kinds
    known = set(old.key.replace("_", " ").replace(".", " ").split())
    for text in _identity(old).values():
        known.update(text.split())
    return bool(words & known)
