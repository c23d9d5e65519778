"""A user's turns and facts as the lifecycle sees them: ids, times, vectors, text, and the
``ItemFacts`` the strength model needs, read once per maintenance run."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from madeleine.maintain.strength import ItemFacts
from madeleine.store.ports import Store
from madeleine.store.records import ItemState, StoredEpisode, StoredFact

ITEM_ID = re.compile(r"(ep|fact)_(\d{1,18})")
DIGEST_KEY = "digest."
PROCEDURE_KEY = "procedure."


def fact_facts(fact: StoredFact) -> ItemFacts:
    card = fact.card
    moment = card.valid_from or card.recorded_at
    return ItemFacts(
        item=card.id,
        kind="digest" if card.key.startswith(DIGEST_KEY) else "fact",
        timestamp=moment.timestamp(),
        category=card.category.value,
        stability=card.stability.value,
        key=card.key,
        importance=card.importance,
        pinned=card.pinned,
    )


def turn_facts(episode: StoredEpisode, pinned: bool) -> ItemFacts:
    return ItemFacts(
        item=f"ep_{episode.id}",
        kind=episode.kind,
        timestamp=episode.occurred_at,
        pinned=pinned,
    )


@dataclass(slots=True)
class UserItems:
    """Everything maintenance weighs for one user, read in one go."""

    user_id: str
    episodes: list[StoredEpisode]  # ascending id
    episode_vectors: npt.NDArray[np.float32]  # one row per episode, same order
    episode_pinned: npt.NDArray[np.bool_]
    facts: list[StoredFact]  # current and superseded versions, archived or not
    states: dict[str, ItemState]
    _positions: dict[str, int] | None = None

    @staticmethod
    def load(store: Store, user_id: str) -> UserItems:
        episodes = sorted(store.episodes_for_user(user_id), key=lambda e: e.id)
        rows = store.user_vectors(user_id)
        at = {int(i): n for n, i in enumerate(rows.ids.tolist())}
        dim = rows.matrix.shape[1] if rows.matrix.ndim == 2 else 0
        matrix = np.zeros((len(episodes), dim), dtype=np.float32)
        pinned = np.zeros(len(episodes), dtype=bool)
        kept: list[StoredEpisode] = []
        for episode in episodes:
            row = at.get(episode.id)
            if row is None:
                continue  # not embedded yet: the next run weighs it
            matrix[len(kept)] = rows.matrix[row]
            pinned[len(kept)] = bool(rows.pinned[row])
            kept.append(episode)
        facts = store.facts.facts(user_id, include_history=True, include_archived=True)
        return UserItems(
            user_id=user_id,
            episodes=kept,
            episode_vectors=matrix[: len(kept)],
            episode_pinned=pinned[: len(kept)],
            facts=facts,
            states=store.lifecycle.states(user_id),
        )

    def position(self, item: str) -> int:
        """The position in ``episodes`` of a turn's id ('ep_12')."""
        if self._positions is None:
            self._positions = {f"ep_{e.id}": n for n, e in enumerate(self.episodes)}
        return self._positions[item]

    def archived(self, item: str) -> bool:
        state = self.states.get(item)
        return state is not None and state.archived_at is not None

    def active_turns(self) -> list[int]:
        """Positions in ``episodes`` of the turns still in search."""
        return [n for n, e in enumerate(self.episodes) if not self.archived(f"ep_{e.id}")]

    def current_facts(self) -> list[StoredFact]:
        """Current (not superseded) cards still in search."""
        return [
            f for f in self.facts if f.card.status != "superseded" and not self.archived(f.card.id)
        ]

    def item_facts(self) -> dict[str, ItemFacts]:
        found = {
            f"ep_{e.id}": turn_facts(e, bool(self.episode_pinned[n]))
            for n, e in enumerate(self.episodes)
        }
        found.update({f.card.id: fact_facts(f) for f in self.facts})
        return found
