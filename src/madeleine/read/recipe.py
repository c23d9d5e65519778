"""Recipes: which score stages a search runs, in which order.

The recall channels and the fusion are chosen per query (``channels=``, ``stages["fusion"]``);
a recipe orders the stages that adjust the fused scores. Per-query switches
(``stages={"windows": False}``) turn a stage of the recipe off, never add one it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StageName = Literal[
    "windows",
    "sessions",
    "entities",
    "range",
    "dated",
    "time",
    "phatic",
    "decay",
    "strength",
    "rerank",
    "truth",
]


@dataclass(frozen=True, slots=True)
class Recipe:
    name: str
    stages: tuple[StageName, ...]
    description: str


DEFAULT = Recipe(
    "default",
    (
        "windows",
        "sessions",
        "entities",
        "range",
        "dated",
        "time",
        "phatic",
        "decay",
        "strength",
        "rerank",
        "truth",
    ),
    "every stage: context windows, session digests, entities, the time range, dated "
    "passages for 'when' questions, time expressions, small talk that only names someone, "
    "decay, strength (relevance x how firmly each memory is held), the optional reranker, "
    "then current truth (a superseded turn yields to its successor)",
)
PLAIN = Recipe(
    "plain",
    ("range",),
    "the fused channels alone (within the time range): the baseline the stages are "
    "measured against, and the cheapest search",
)
RECIPES: dict[str, Recipe] = {recipe.name: recipe for recipe in (DEFAULT, PLAIN)}
