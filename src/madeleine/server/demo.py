"""``madeleine demo``: a populated memory to explore in the dashboard in one command.

One user (alex) over a year of sessions in which things change — a new employer, a move, a
new seat preference — so the profile has superseded versions, the timeline has
supersessions, a passport check raises an alert, and the graph has people, places and
companies; plus a small knowledge base with versions, validity and an ACL. Seeding again
adds nothing (messages are idempotent by content, documents by text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from madeleine.api import Memory

DEMO_TENANT = "demo"
DEMO_USER = "alex"


@dataclass(frozen=True, slots=True)
class _Session:
    session_id: str
    day: str
    turns: tuple[tuple[str, str], ...]  # (role, content)


_SESSIONS = (
    _Session(
        "2024-03-04-intro",
        "2024-03-04T09:15:00Z",
        (
            ("user", "Hi! I'm Alex Rivera. I live in Boston and I work at Acme Robotics."),
            ("assistant", "Nice to meet you, Alex. What do you do at Acme Robotics?"),
            ("user", "I'm a data engineer there. I'm vegetarian, and I'm allergic to peanuts."),
            ("assistant", "Noted: vegetarian, and no peanuts."),
            ("user", "I always prefer a window seat on flights."),
        ),
    ),
    _Session(
        "2024-06-10-lisbon",
        "2024-06-10T18:40:00Z",
        (
            ("user", "I'm flying to Lisbon on September 12, 2024 for a conference."),
            ("assistant", "Exciting! Do you need a hotel near the venue?"),
            ("user", "Yes please, somewhere in Alfama. My passport expires on 2024-12-01."),
            ("assistant", "I'll look for hotels in Alfama."),
            ("user", "My sister Jordan might join me in Lisbon for the weekend."),
        ),
    ),
    _Session(
        "2024-09-20-career",
        "2024-09-20T12:05:00Z",
        (
            ("user", "Big news: I left Acme Robotics and now I work at Globex."),
            ("assistant", "Congratulations! What is the new role?"),
            ("user", "Staff engineer on the search team. My manager is Priya Shah."),
            ("user", "The weather was lovely in Lisbon, by the way."),
        ),
    ),
    _Session(
        "2025-01-15-move",
        "2025-01-15T20:30:00Z",
        (
            ("user", "We moved to Denver last week, the boxes are still everywhere."),
            ("assistant", "Welcome to Denver! How is the family settling in?"),
            ("user", "My daughter Maya starts school in Denver in February."),
            ("user", "These days I drink oat milk lattes every morning."),
        ),
    ),
    _Session(
        "2025-03-02-travel",
        "2025-03-02T08:10:00Z",
        (
            ("user", "I prefer an aisle seat now, my knee needs the space."),
            ("assistant", "Aisle seats from now on."),
            ("user", "Remember that my Globex badge number is GX-4471."),
            ("user", "thanks!"),
        ),
    ),
)

_COLLECTION = "travel-policy"
_DESCRIPTION = "Company travel rules: booking, expenses, per diems, approvals."
_DOCUMENTS: tuple[dict[str, Any], ...] = (
    {
        "doc_id": "booking",
        "title": "Booking rules",
        "text": "# Booking rules\n\nBook flights at least 14 days ahead. Economy class for "
        "flights under 6 hours; premium economy above.\n\n## Hotels\n\nUp to 180 EUR a night "
        "in Europe, 250 USD in the United States.",
        "effective_from": "2024-01-01",
    },
    {
        "doc_id": "per-diem",
        "title": "Per diems",
        "text": "# Per diems\n\nMeals are covered up to 60 EUR a day in Lisbon and 75 USD a "
        "day in Denver. Alcohol is not reimbursed.",
        "effective_from": "2024-01-01",
        "expires_at": "2026-12-31",
    },
    {
        "doc_id": "approvals",
        "title": "Approval limits (finance only)",
        "text": "# Approval limits\n\nManagers approve trips up to 3,000 EUR; directors above. "
        "Finance reviews every trip over 10,000 EUR.",
        "acl": ["group:finance"],
    },
)
# a second version: the booking rule changed, the first version stays in the history
_BOOKING_V2 = (
    "# Booking rules\n\nBook flights at least 21 days ahead. Economy class for flights under "
    "6 hours; premium economy above.\n\n## Hotels\n\nUp to 200 EUR a night in Europe, 250 USD "
    "in the United States."
)


def seed_demo(memory: Memory, user_id: str = DEMO_USER) -> dict[str, int]:
    """Add the demo conversations, a purchase event and the travel-policy collection, wait
    until everything is searchable, and count what the user now has."""
    added = 0
    for session in _SESSIONS:
        messages = [{"role": role, "content": text} for role, text in session.turns]
        if user_id != DEMO_USER:
            messages = [{**m, "content": m["content"].replace("Alex", user_id)} for m in messages]
        result = memory.add(
            messages, user_id=user_id, session_id=session.session_id, timestamp=session.day
        )
        added += len(result.added)
    memory.add_event(
        user_id=user_id,
        type="purchase",
        data={"item": "noise-cancelling headphones", "price": 249, "currency": "USD"},
        timestamp="2025-03-03T10:00:00Z",
        id="order-1042",
    )
    kb = memory.kb(_COLLECTION, description=_DESCRIPTION)
    for document in _DOCUMENTS:
        fields = {k: v for k, v in document.items() if k != "text"}
        kb.add_document(document["text"], **fields)
    kb.add_document(_BOOKING_V2, doc_id="booking", effective_from="2025-02-01")
    memory.wait()
    return {
        "messages_added": added,
        "facts": len(memory.facts(user_id)),
        "fact_versions": len(memory.facts(user_id, include_history=True)),
        "documents": len(kb.documents()),
    }
