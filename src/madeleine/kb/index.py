"""The tenant's knowledge base in memory: BM25 postings, the chunk vectors and, per version,
what governance filters on. Rebuilt from one store snapshot whenever the store's KB
generation moves; the store stays the source of truth.

``readable`` is the single place where permissions, validity and collections become a row
mask. Both channels score only rows inside it, so a chunk the principal may not read, or a
version that does not hold at the query's time, never becomes a candidate anywhere.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import numpy.typing as npt

from madeleine.kb.bm25 import BM25Postings
from madeleine.kb.records import KBSnapshot, Principal


class KnowledgeIndex:
    def __init__(self, snapshot: KBSnapshot, k1: float = 1.2, b: float = 0.75) -> None:
        self.snapshot = snapshot
        self.generation = snapshot.generation
        self.lexical = BM25Postings([t.split() for t in snapshot.chunk_terms], k1, b)
        self.size = int(snapshot.chunk_ids.size)
        # versions share a few distinct ACLs: the principal is checked once per distinct ACL
        acls = list(dict.fromkeys(snapshot.version_acl))
        self.acl_sets = [frozenset(a) for a in acls]
        acl_index = {a: i for i, a in enumerate(acls)}
        self.version_acl = np.array([acl_index[a] for a in snapshot.version_acl], dtype=np.int64)
        self.collection_names = sorted(set(snapshot.version_collection) | set(snapshot.collections))
        collection_index = {c: i for i, c in enumerate(self.collection_names)}
        self.version_collection = np.array(
            [collection_index[c] for c in snapshot.version_collection], dtype=np.int64
        )
        self.chunk_collection = (
            self.version_collection[snapshot.chunk_version] if self.size else np.zeros(0, np.int64)
        )

    def allowed_acls(self, principal: Principal | None) -> npt.NDArray[np.bool_]:
        """Per distinct ACL: may this principal read it? No principal reads public only."""
        tokens = frozenset() if principal is None else principal.tokens()
        return np.array([not acl or bool(acl & tokens) for acl in self.acl_sets], dtype=np.bool_)

    def valid_versions(self, moment: float) -> npt.NDArray[np.bool_]:
        """The version of each document that holds at ``moment``: the latest one in effect
        by then (effective_from, else its creation), unless it has expired."""
        snap = self.snapshot
        count = snap.version_ids.size
        valid = np.zeros(count, dtype=np.bool_)
        started = np.flatnonzero(snap.version_effective <= moment)
        if started.size == 0:
            return valid
        order = started[
            np.lexsort(
                (
                    snap.version_number[started],
                    snap.version_effective[started],
                    snap.version_doc[started],
                )
            )
        ]
        docs = snap.version_doc[order]
        last = np.ones(order.size, dtype=np.bool_)
        last[:-1] = docs[1:] != docs[:-1]
        current = order[last]
        valid[current] = snap.version_expires[current] > moment
        return valid

    def readable(
        self,
        principal: Principal | None,
        moment: float,
        collections: Collection[str] | None,
    ) -> npt.NDArray[np.bool_]:
        """Row mask over chunks: readable by the principal, holding at ``moment``, in one of
        ``collections`` (None: all)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.bool_)
        versions = self.valid_versions(moment) & self.allowed_acls(principal)[self.version_acl]
        if collections is not None:
            wanted = np.array([c in collections for c in self.collection_names], dtype=np.bool_)
            versions &= wanted[self.version_collection]
        return versions[self.snapshot.chunk_version]

    def readable_collections(self, mask: npt.NDArray[np.bool_]) -> list[str]:
        present: list[int] = np.unique(self.chunk_collection[mask]).tolist() if mask.any() else []
        return [self.collection_names[int(i)] for i in present]
