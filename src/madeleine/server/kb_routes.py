"""Knowledge-base routes: collections, documents and their versions, search, ask.

The principal a search runs for comes in the body: the calling application authenticates
its users and says who asks; the API key decides the tenant, whose knowledge base it is, and
the collections it may reach. Listings that bypass the documents' ACLs (collections,
documents, versions) are operator views: they need the ``admin`` scope. Every route calls
the same ``Memory`` method the Python API offers.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from madeleine.api import Memory
from madeleine.kb.collection import KnowledgeBase, sniff_format
from madeleine.kb.records import Principal
from madeleine.server.deps import AdminTenant, FairTenant, Granted, ReadTenant, WriteTenant
from madeleine.server.schemas import (
    AskBody,
    CollectionBody,
    DocumentBody,
    DocumentUpdateBody,
    KBSearchBody,
    PrincipalBody,
)


def principal_of(body: PrincipalBody | None) -> Principal | None:
    return None if body is None else Principal(body.user_id, body.groups)


def kb_router() -> APIRouter:
    """The knowledge-base routes, each scoped to the API key's tenant."""
    router = APIRouter(prefix="/v1", tags=["knowledge base"])

    def existing(memory: Memory, name: str) -> KnowledgeBase:
        if name not in {c.name for c in memory.collections()}:
            raise HTTPException(404, f"no collection {name!r}")
        return memory.kb(name)

    @router.get("/kb")
    def collections(memory: AdminTenant, grant: Granted) -> dict[str, Any]:
        allowed = grant.narrow(None)
        found = [c for c in memory.collections() if allowed is None or c.name in allowed]
        return {"collections": [c.to_dict() for c in found]}

    @router.put("/kb/{collection}")
    def describe(collection: str, body: CollectionBody, memory: WriteTenant) -> dict[str, Any]:
        kb = memory.kb(collection, description=body.description, pii=body.pii)
        return {**kb.info.to_dict(), "pii": kb.pii}

    @router.delete("/kb/{collection}")
    def drop(collection: str, memory: WriteTenant) -> dict[str, Any]:
        existing(memory, collection)
        return {"deleted_documents": memory.delete_collection(collection)}

    @router.post("/kb/{collection}/documents")
    def add_document(collection: str, body: DocumentBody, memory: WriteTenant) -> dict[str, Any]:
        kb = memory.kb(collection, description=body.description)
        stored = kb.add_document(
            body.text,
            doc_id=body.doc_id,
            title=body.title,
            source_type=body.source_type,
            acl=body.acl,
            effective_from=body.effective_from,
            expires_at=body.expires_at,
            metadata=body.metadata,
            format=body.format or sniff_format(body.text),  # text, never a server-side path
        )
        return stored.to_dict()

    @router.put("/kb/{collection}/documents/{doc_id:path}")
    def update_document(
        collection: str,
        doc_id: str,
        body: DocumentUpdateBody,
        memory: WriteTenant,
    ) -> dict[str, Any]:
        kb = existing(memory, collection)
        changes: dict[str, Any] = {
            k: getattr(body, k)
            for k in ("acl", "effective_from", "expires_at")
            if k in body.model_fields_set
        }
        try:
            stored = kb.update_document(
                doc_id,
                body.text,
                title=body.title,
                source_type=body.source_type,
                metadata=body.metadata,
                format=None if body.text is None else body.format or sniff_format(body.text),
                **changes,
            )
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from exc
        return stored.to_dict()

    @router.get("/kb/{collection}/documents")
    def documents(collection: str, memory: AdminTenant) -> dict[str, Any]:
        kb = existing(memory, collection)
        return {"documents": [d.to_dict() for d in kb.documents()]}

    @router.get("/kb/{collection}/documents/{doc_id:path}/versions")
    def versions(collection: str, doc_id: str, memory: AdminTenant) -> dict[str, Any]:
        found = existing(memory, collection).versions(doc_id)
        if not found:
            raise HTTPException(404, f"collection {collection!r} has no document {doc_id!r}")
        return {"versions": [v.to_dict() for v in found]}

    @router.delete("/kb/{collection}/documents/{doc_id:path}")
    def delete_document(collection: str, doc_id: str, memory: WriteTenant) -> dict[str, Any]:
        if not existing(memory, collection).delete_document(doc_id):
            raise HTTPException(404, f"collection {collection!r} has no document {doc_id!r}")
        return {"deleted": True}

    @router.post("/kb/search")
    def search_kb(body: KBSearchBody, memory: FairTenant, grant: Granted) -> dict[str, Any]:
        hits = memory.search_kb(
            body.query,
            principal=principal_of(body.principal),
            collections=grant.narrow(body.collections),
            limit=body.limit,
            as_of=body.as_of,
            channels=body.channels,
        )
        return {"hits": [h.to_dict() for h in hits]}

    @router.post("/ask")
    def ask(body: AskBody, memory: ReadTenant, grant: Granted) -> dict[str, Any]:
        answer = memory.ask(
            body.question,
            user_id=body.user_id,
            principal=principal_of(body.principal),
            collections=grant.narrow(body.collections),
            max_steps=body.max_steps,
        )
        return answer.to_dict()

    return router
