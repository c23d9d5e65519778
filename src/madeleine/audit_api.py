"""The audit half of ``Memory``: the server records who changed what (never the content)
in the tenant's own store, so the log lives, is backed up and is erased with the data it
describes. ``Memory`` inherits these methods."""

from __future__ import annotations

from madeleine.engine import Engine
from madeleine.store.audit_rows import AuditEntry, AuditQuery


class AuditMethods:
    """Needs ``_open()`` (the engine) from the class it is mixed into."""

    def _open(self) -> Engine:  # pragma: no cover - provided by Memory
        raise NotImplementedError

    def record_audit(self, entry: AuditEntry) -> int:
        """Store one audit entry; its id."""
        if not isinstance(entry, AuditEntry):
            raise TypeError(f"entry must be an AuditEntry, got {type(entry).__name__}")
        return self._open().store.audit.record(entry)

    def audit_log(self, query: AuditQuery | None = None) -> list[AuditEntry]:
        """Audit entries, newest first (all of the last 100 without ``query``)."""
        return self._open().store.audit.entries(query or AuditQuery())
