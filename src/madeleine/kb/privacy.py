"""A collection's PII policy, applied to a document before it is chunked, abstracted,
indexed or stored.

``vault`` (the default) treats a document as a message is treated: secrets masked,
identifiers vaulted under the collection's own vault owner; ``mask`` masks every finding;
``keep`` stores the text as given (a collection of public contact pages, say). Chunks hold
placeholders, so search, context and ask hand every principal placeholders, never values:
a support runbook may quote a customer's phone number without leaking it to whoever only
searches. Vaulted values are restored for nobody over the network; the library caller who
holds the store may read them with ``KnowledgeBase.reveal``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal, get_args

from madeleine.kb.loaders import LoadedDocument, Section
from madeleine.read.restore import Restorer
from madeleine.store.ports import Store
from madeleine.text.pii import Action, PiiCategory
from madeleine.write.privacy import Privacy, kb_owner

KBPolicy = Literal["vault", "mask", "keep"]
KB_POLICIES: tuple[KBPolicy, ...] = get_args(KBPolicy)
DEFAULT_KB_POLICY: KBPolicy = "vault"
_META_KEY = "kb.pii:"


def require_kb_policy(value: object) -> KBPolicy:
    if not isinstance(value, str):
        raise TypeError(f"pii must be a str, got {type(value).__name__}")
    for policy in KB_POLICIES:
        if value == policy:
            return policy
    raise ValueError(f"pii must be 'vault', 'mask' or 'keep', got {value!r}")


def stored_policy(store: Store, collection: str) -> KBPolicy:
    """The policy recorded for a collection (the default when none was)."""
    found = store.meta(_META_KEY + collection)
    return DEFAULT_KB_POLICY if found is None else require_kb_policy(found)


def record_policy(store: Store, collection: str, policy: KBPolicy) -> None:
    store.set_meta(_META_KEY + collection, policy)


class DocumentPrivacy:
    """One collection's policy: ``message_policy`` is the store's PII policy (what
    ``vault`` applies)."""

    def __init__(
        self,
        store: Store,
        collection: str,
        mode: KBPolicy,
        message_policy: Mapping[PiiCategory, Action],
    ) -> None:
        self.mode = mode
        self._owner = kb_owner(collection)
        self._restorer = Restorer(store.vault)
        policy: dict[PiiCategory, Action] = (
            dict(message_policy) if mode == "vault" else dict.fromkeys(PiiCategory, "mask")
        )
        self._privacy = None if mode == "keep" else Privacy(store, policy)

    def text(self, text: str) -> str:
        return text if self._privacy is None else self._privacy.text(self._owner, text)

    def tree(self, value: Any) -> Any:
        return value if self._privacy is None else self._privacy.tree(self._owner, value)

    def document(self, loaded: LoadedDocument) -> LoadedDocument:
        """The document with every section's text and heading, its title and its loader
        metadata scrubbed (the raw bytes' hash stays: it names no value)."""
        if self._privacy is None:
            return loaded
        sections = [
            Section(tuple(self.text(h) for h in s.path), self.text(s.text)) for s in loaded.sections
        ]
        return replace(
            loaded,
            title=self.text(loaded.title),
            sections=sections,
            metadata=self.tree(dict(loaded.metadata)),
        )

    def reveal(self, text: str) -> str:
        """Vaulted values back in ``text``: for the library caller only, never a route."""
        return self._restorer.text(self._owner, text)
