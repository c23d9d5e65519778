"""The PII policy for text kept outside the message log: session buffers and their
summaries, agent reasons and data, KB documents. The log's own intake scrubs inside its
write transaction (``write/intake.py``); everything else goes through ``Privacy`` so one
policy, one detector and one vault serve every place text is stored.

Vaulted values belong to an owner: a user for what a user said, a collection's reserved
owner (``kb_owner``) for what a document says. ``Restorer`` gives a user's values back to
that user only; nobody is ever handed a collection's values over the network.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

from madeleine.inputs import RESERVED_ID_PREFIX
from madeleine.read.restore import Restorer
from madeleine.store.ports import Store
from madeleine.text.pii import Action, PiiCategory, scrub_tree

# A user id never starts with this (``require_id`` refuses it), so a collection's vaulted
# values cannot be restored by naming a user after it.
KB_OWNER_PREFIX = RESERVED_ID_PREFIX + "kb" + RESERVED_ID_PREFIX


def kb_owner(collection: str) -> str:
    """The vault owner of a collection's values."""
    return KB_OWNER_PREFIX + collection


class Privacy:
    """Scrub text and JSON-like values for one owner. A transaction is opened only when a
    value is vaulted (vaulting the same value twice gives the same token), so text without
    PII costs one scan and no write."""

    def __init__(self, store: Store, policy: Mapping[PiiCategory, Action]) -> None:
        self._store = store
        self.policy: dict[PiiCategory, Action] = dict(policy)

    def text(self, owner: str, text: str) -> str:
        return str(self.tree(owner, text))

    def tree(self, owner: str, value: Any) -> Any:
        """Every string (and every number under a key that names it PII) scrubbed, each
        read with its key as a label: {"phone": "5551234567"} is a phone number."""
        with ExitStack() as stack:
            bound: list[Callable[[PiiCategory, str], str]] = []

            def put(category: PiiCategory, raw: str) -> str:
                if not bound:
                    tx = stack.enter_context(self._store.transaction())
                    bound.append(self._store.vault.putter(tx, owner))
                return bound[0](category, raw)

            return scrub_tree(value, self.policy, put)

    def bound(self, owner: str, restorer: Restorer | None) -> OwnerPrivacy:
        """This policy for one owner; ``restorer`` gives vaulted values back on reads (None:
        reads keep the placeholders, as for a collection)."""
        return OwnerPrivacy(self, owner, restorer)


class OwnerPrivacy:
    """Scrub on the way in, restore for the owner on the way out."""

    def __init__(self, privacy: Privacy, owner: str, restorer: Restorer | None) -> None:
        self._privacy = privacy
        self._owner = owner
        self._restorer = restorer

    def scrub(self, text: str) -> str:
        return self._privacy.text(self._owner, text)

    def scrub_tree(self, value: Any) -> Any:
        return self._privacy.tree(self._owner, value)

    def reveal(self, text: str) -> str:
        return text if self._restorer is None else self._restorer.text(self._owner, text)

    def reveal_tree(self, value: Any) -> Any:
        return value if self._restorer is None else self._restorer.tree(self._owner, value)
