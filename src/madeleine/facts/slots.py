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
- a new card **makes stale** cards of other keys (or of a relationship one person holds at a
  time: a new manager, a new husband) that depended on what it replaced: a move to
  another city ends the neighbourhood in the old one (and a move to the planned city ends
  the plan, now done), a new employer ends the role held at the old one, an avoided item or
  one switched away from ("from coffee to green tea") ends the preference for it (and a
  preference ends its avoidance).
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
    return _topic_preference(old_key) and _topic_preference(new_key)


def _topic_preference(key: str) -> bool:
    """``preference.drink``, ``preference.commute``: one topic each, so a drink never
    contradicts a commute (``preference.switched_to`` has no topic and may)."""
    parts = key.split(".")
    return len(parts) == 2 and parts[0] == "preference" and parts[1] != "switched_to"


def _identity(card: CardDraft) -> dict[str, str]:
    """The values that say *which* thing a card is about (not its state; a plan's title is
    worded freely and its key already names it)."""
    skipped = {"status", "start_date", "end_date", "start", "end", "since", "previous", "title"}
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


# relationships one person holds at a time: a new manager means the old one no longer is
ONE_HOLDER = frozenset(
    f"relationship.{r}"
    for r in ("manager", "wife", "husband", "spouse", "fiance", "boyfriend", "girlfriend")
)


def makes_stale(old: CardDraft, new: CardDraft) -> str | None:
    """Why ``new`` (just stored as current) ends ``old`` (another key, or the same
    one-holder relationship held by someone else), or None."""
    if old.key == new.key and old.key in ONE_HOLDER:
        return _new_holder(old, new)
    if old.key == new.key or old.subject.casefold() != new.subject.casefold():
        return None
    for rule in (_neighbourhood, _move_done, _role, _preference, _account):
        reason = rule(old, new)
        if reason is not None:
            return reason
    return None


def _new_holder(old: CardDraft, new: CardDraft) -> str | None:
    """ "My new boss is Raj" after "my manager Linda": Linda is no longer the manager (a
    statement about Linda said before Raj's does not end Raj's)."""
    if old.subject.casefold() == new.subject.casefold():
        return None
    if old.valid_from and new.valid_from and new.valid_from < old.valid_from:
        return None
    return f"a new {old.key.removeprefix('relationship.')}: the previous one no longer is"


def _neighbourhood(old: CardDraft, new: CardDraft) -> str | None:
    if new.key != "location.home" or old.key != "location.home_area":
        return None
    new_city = value(new, "city")
    if new_city is not None and value(old, "city") != new_city:
        return "moved to another city: the old neighbourhood ends"
    return None


def _move_done(old: CardDraft, new: CardDraft) -> str | None:
    """ "I moved to Seoul" after "I'm planning to move to Seoul": the plan is done."""
    if new.key != "location.home" or not old.key.startswith("plan.move."):
        return None
    city, country = value(new, "city"), value(new, "country")
    if value(old, "destination") in {city, country} - {None}:
        return "the planned move happened"
    return None


def _role(old: CardDraft, new: CardDraft) -> str | None:
    if new.key != "work.employer" or old.key != "work.role":
        return None
    held_at, employer = value(old, "employer"), value(new, "employer")
    if closing(new):  # "I left my job" (no name) ends the role held at the current one
        if held_at is None or employer is None or held_at == employer:
            return "left the job: the role held there ends"
        return None
    if held_at is not None and held_at != employer:
        return "changed employer: the role held at the old one ends"
    return None


def _preference(old: CardDraft, new: CardDraft) -> str | None:
    if not old.key.startswith("preference.") or not new.key.startswith("preference."):
        return None
    old_value = value(old, "item") or value(old, "value")
    if old_value is None or (closing(old) and not old.key.startswith("preference.avoid.")):
        return None
    old_avoided = old.key.startswith("preference.avoid.")
    new_avoided = new.key.startswith("preference.avoid.")
    if new_avoided and not old_avoided and value(new, "item") == old_value:
        return "now avoided"
    if old.key == "preference.dislike" or new.key == "preference.dislike":
        return None
    if old_avoided and not new_avoided and (value(new, "item") or value(new, "value")) == old_value:
        return "no longer avoided"
    if not old_avoided and value(new, "previous") == old_value:
        return "switched away from it"
    return None


def _account(old: CardDraft, new: CardDraft) -> str | None:
    if not closing(new) or closing(old):
        return None
    if not new.key.startswith("account.") or not old.key.startswith("account."):
        return None
    return "account closed" if _names_account(value(new, "name"), old) else None


_GENERIC_ACCOUNT_WORDS = frozenset(
    "account accounts bank checking savings current card credit debit membership my our".split()
)


def _names_account(name: str | None, old: CardDraft) -> bool:
    """Whether a closing account's name points at ``old`` ("Chase" → the Chase checking
    account); no name points at the bank accounts."""
    if not name:
        return old.key.startswith("account.bank.")
    words = set(name.replace("_", " ").split()) - _GENERIC_ACCOUNT_WORDS
    if not words:  # "my bank account", "my savings account"
        kinds = set(name.split()) & {"checking", "savings"}
        if kinds:
            return old.key.split(".")[-1] in kinds
        return old.key.startswith("account.bank.")
    known = set(old.key.replace("_", " ").replace(".", " ").split())
    for text in _identity(old).values():
        known.update(text.split())
    return bool(words & known)
