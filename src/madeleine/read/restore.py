"""Vaulted PII comes back in results for the owning user only, at the edge of the read path."""

from __future__ import annotations

from typing import Any

from madeleine.facts.cards import Card
from madeleine.records import Hit
from madeleine.store.ports import VaultRepository
from madeleine.text.pii import restore
from madeleine.write.normalize import map_strings


class Restorer:
    def __init__(self, vault: VaultRepository) -> None:
        self._vault = vault

    def text(self, user_id: str, text: str) -> str:
        if "[pii:" not in text:
            return text
        return restore(text, self._vault.getter(None, user_id))

    def tree(self, user_id: str, value: Any) -> Any:
        """Every string in a JSON-like value (an export, a graph view)."""
        return map_strings(value, lambda text: self.text(user_id, text))

    def card(self, card: Card) -> Card:
        if "[pii:" not in card.model_dump_json():
            return card
        return Card.model_validate(self.tree(card.user_id, card.model_dump(mode="json")))

    def hits(self, user_id: str, hits: list[Hit]) -> list[Hit]:
        for hit in hits:
            hit.text = self.text(user_id, hit.text)
        return hits
