"""Facts as advanced JSON cards: what an extractor proposes and what the store keeps.

Keys and attribute names that rules, the LLM prompt and the memory checks share
(``subject`` is "user" unless another person is meant):

| key | multi | attributes |
|---|---|---|
| ``identity.name`` / ``identity.birthday`` | no | name (person) / date (date) |
| ``identity.passport`` (``identity.id_card``, | no | country (place), expires_on (date), |
| ``identity.drivers_license``)                 |    | number (identifier)                  |
| ``contact.email`` / ``contact.phone`` / ``contact.address`` | no | value (identifier / place) |
| ``location.home`` / ``location.work`` | no | city (place), country (place) |
| ``location.home_area`` (neighbourhood: refines the city) | no | area (place), city (place) |
| ``preference.seat`` | no | seat (text: window / aisle / …) |
| ``preference.diet`` | no | diet (text: vegetarian / vegan / halal / …) |
| ``preference.like`` / ``preference.dislike`` | yes | item (text) |
| ``preference.<topic>`` (e.g. ``preference.phone_carrier``, | no | value, previous (what |
| ``preference.drink``: a "switched from … to")                 |    | it replaced)         |
| ``preference.avoid.<item>`` ("I stopped eating meat") | no | item, status (stopped) |
| ``account.loyalty.<programme>`` | no | programme (text), number (identifier) |
| ``account.bank.<kind>`` (checking, savings, routing) | no | number (identifier), bank |
| ``relationship.<relation>`` (daughter, wife, manager, …) | yes | name (person) |
| ``health.allergy`` | yes | allergen (text) |
| ``health.medication`` | yes | medication (text), dose (text) |
| ``health.condition`` | yes | condition (text) |
| ``plan.trip.<destination>`` | no | destination (place), start_date (date), end_date |
|                             |    | (date), travel_mode (text: flight / train / car),  |
|                             |    | international (text: true / false)                 |
| ``plan.appointment.<what>`` | no | title (text), start (datetime), end (datetime) |
| ``plan.move.<destination>`` | no | destination (place), start_date (date), status |
| ``work.employer`` / ``work.role`` (never conflict) | no | employer / role, employer |
| ``account.service.<name>`` (a closed subscription) | no | name, status, closes_on |
| ``project.<project>.decision.<topic>`` | no | project, decision, topic |
| ``project.<project>.version.<tech>`` | no | project, tech, version, environment |
| ``project.<project>.environment.<env>`` | no | project, environment, platform |
| ``project.<project>.convention.<what>`` | no | project, convention |

A ``status`` attribute closes a card: cancelled (a plan), left (a job), closed (an account),
stopped (a habit or food); such a card supersedes the card of its key that it names
(``madeleine.facts.slots``).

Values that the PII policy vaulted or masked arrive as placeholders (``[pii:account_number:
v1a2b3c4]``, ``[pii:password]``) and are kept as they are: the vault restores them for the
owner only.

A ``CardDraft`` is an extractor's proposal (rules or an LLM produce the same shape; its JSON
schema constrains the LLM's output). A ``Card`` is a draft after resolution: it has an id,
system times and its place in a version chain. Nothing is overwritten: a newer card
*supersedes* an older one, and both keep their times.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Category(StrEnum):
    IDENTITY = "identity"  # name, birthday, nationality, documents (passport, licence)
    CONTACT = "contact"  # email, phone, address
    PREFERENCE = "preference"  # likes, dislikes, seats, diets, styles
    ACCOUNT = "account"  # bank/loyalty/membership numbers and programmes
    RELATIONSHIP = "relationship"  # people in the user's life
    HEALTH = "health"  # allergies, conditions, medications
    PLAN = "plan"  # trips, appointments, events, deadlines
    FINANCE = "finance"  # budgets, salaries, purchases, debts
    LOCATION = "location"  # where the user lives / works / is
    WORK = "work"  # employer, role
    PROJECT = "project"  # a code project's decisions, versions, environments, conventions
    EDUCATION = "education"
    POSSESSION = "possession"  # car, pets, devices
    HABIT = "habit"  # routines, how the user likes things done
    OTHER = "other"


class MemoryType(StrEnum):
    EPISODIC = "episodic"  # something that happened at a time
    SEMANTIC = "semantic"  # a standing fact about the world or the user
    PROCEDURAL = "procedural"  # how the user wants things done


class Stability(StrEnum):
    STABLE = "stable"  # rarely changes (birthday, allergy): exempt from decay
    VOLATILE = "volatile"  # changes (location, current project, plans)


AttributeType = Literal[
    "text", "date", "datetime", "amount", "number", "identifier", "place", "person", "duration"
]


class Attribute(BaseModel):
    """One typed value of a card. ``value`` is canonical text: ISO 8601 for dates, digits
    for numbers, the plain identifier, the place or person name; ``unit`` for amounts
    (currency) and durations."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, description="e.g. 'seat', 'expires_on'")
    type: AttributeType = "text"
    value: str = Field(min_length=1, max_length=500)
    unit: str | None = Field(None, max_length=16)


class CardDraft(BaseModel):
    """A fact as an extractor proposes it."""

    model_config = ConfigDict(extra="forbid")

    statement: str = Field(min_length=1, max_length=1000, description="one declarative sentence")
    category: Category
    subject: str = Field("user", max_length=200, description="'user' or the person's name")
    relationship: str | None = Field(
        None, max_length=100, description="the subject's relationship to the user: 'daughter'"
    )
    backstory: str | None = Field(None, max_length=1000, description="the context it was said in")
    attributes: list[Attribute] = Field(default_factory=list, max_length=20)
    key: str = Field(
        min_length=1,
        max_length=200,
        description="the slot this fact fills, e.g. 'location.home', 'preference.seat', "
        "'account.loyalty.united': two current cards of one subject never share a key "
        "unless the key is marked multi-valued",
    )
    multi_valued: bool = Field(
        False, description="several current values may coexist (allergies, children, likes)"
    )
    memory_type: MemoryType = MemoryType.SEMANTIC
    stability: Stability = Stability.STABLE
    importance: float = Field(0.5, ge=0.0, le=1.0)
    confidence: float = Field(0.7, ge=0.0, le=1.0)
    valid_from: datetime | None = Field(None, description="event time the fact starts to hold")
    valid_to: datetime | None = Field(None, description="event time it stops holding")
    sources: list[int] = Field(
        default_factory=list, description="ids of the events (messages) the fact comes from"
    )


class Card(CardDraft):
    """A resolved, stored card."""

    id: str
    user_id: str
    pinned: bool = False
    recorded_at: datetime
    superseded_at: datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    status: Literal["current", "superseded", "flagged"] = "current"
    extractor: str = Field("rules", description="'rules' or 'llm:<model>'")
