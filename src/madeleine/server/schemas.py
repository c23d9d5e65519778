"""Request bodies of the REST API: field names are the Python call's argument names.

Types are checked here (a wrong type is a 422); what the values mean (a budget too small, an
unknown channel) is checked by ``Memory`` itself (a 400), so REST and Python give one answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

Moment = datetime | StrictStr | float | None


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddBody(_Body):
    user_id: StrictStr
    messages: list[dict[str, Any]] | dict[str, Any]
    session_id: StrictStr = "default"
    timestamp: Moment = None
    wait: StrictBool = Field(False, description="return once the messages are searchable")
    wait_timeout: float = Field(60.0, gt=0, le=600)


class EventBody(_Body):
    user_id: StrictStr
    type: StrictStr
    data: dict[str, Any] | None = None
    timestamp: Moment = None
    session_id: StrictStr = "events"
    id: StrictStr | None = None
    wait: StrictBool = False
    wait_timeout: float = Field(60.0, gt=0, le=600)


class WaitBody(_Body):
    timeout: float | None = Field(None, gt=0, le=600)


class SearchBody(_Body):
    query: StrictStr
    user_id: StrictStr
    limit: int = 10
    channels: list[StrictStr] | None = None
    time_range: tuple[Moment, Moment] | None = None
    stages: dict[str, Any] | None = None
    now: Moment = None
    as_of: Moment = None
    include_history: StrictBool = False
    include_archived: StrictBool = False


class ContextBody(SearchBody):
    limit: int = 50
    include_archived: Literal[False] = False  # a context never hands archived items over
    budget_tokens: int = 2000
    window: int = 1
    principal: PrincipalBody | None = None
    collections: list[StrictStr] | None = None
    kb: StrictBool = True


class UserBody(_Body):
    user_id: StrictStr


class AppendBody(_Body):
    user_id: StrictStr
    message: dict[str, Any]
    pinned: StrictBool = False
    ttl_seconds: float | None = 86_400.0


class TransitionBody(_Body):
    user_id: StrictStr
    to: StrictStr
    reason: StrictStr = ""
    data: dict[str, Any] | None = None
    expected_version: int | None = None


class RestoreBody(_Body):
    user_id: StrictStr
    snapshot: dict[str, Any]


class PrincipalBody(_Body):
    """Who the search runs for, as the calling application has authenticated them."""

    user_id: StrictStr | None = None
    groups: list[StrictStr] = Field(default_factory=list)


class CollectionBody(_Body):
    description: StrictStr | None = None
    pii: Literal["vault", "mask", "keep"] | None = Field(
        default=None, description="the collection's PII policy for documents (default vault)"
    )


class DocumentBody(_Body):
    text: StrictStr = Field(description="the document: plain text, Markdown or HTML")
    doc_id: StrictStr | None = None
    title: StrictStr | None = None
    source_type: StrictStr = "official"
    acl: list[StrictStr] | None = None
    effective_from: Moment = None
    expires_at: Moment = None
    metadata: dict[str, Any] | None = None
    format: StrictStr | None = Field(None, description="'text', 'markdown' or 'html' (sniffed)")
    description: StrictStr | None = Field(None, description="sets the collection's description")


class DocumentUpdateBody(_Body):
    text: StrictStr | None = None
    title: StrictStr | None = None
    source_type: StrictStr | None = None
    acl: list[StrictStr] | None = None
    effective_from: Moment = None
    expires_at: Moment = None
    metadata: dict[str, Any] | None = None
    format: StrictStr | None = None


class KBSearchBody(_Body):
    query: StrictStr
    principal: PrincipalBody | None = None
    collections: list[StrictStr] | None = None
    limit: int = 10
    as_of: Moment = None
    channels: list[StrictStr] | None = None


class AskBody(_Body):
    question: StrictStr
    user_id: StrictStr
    principal: PrincipalBody | None = None
    collections: list[StrictStr] | None = None
    max_steps: int | None = None


ContextBody.model_rebuild()


class ArchiveBody(_Body):
    user_id: StrictStr
    reason: StrictStr = "by request"


class ImportanceBody(_Body):
    user_id: StrictStr
    importance: StrictFloat | StrictInt


class MaintainBody(_Body):
    user_id: StrictStr | None = None  # None: every user of the tenant
    now: StrictFloat | StrictInt | None = None


class UndoBody(_Body):
    user_id: StrictStr
    run: StrictStr


class FactEditBody(_Body):
    user_id: StrictStr
    statement: StrictStr = Field(description="the card's new statement: one sentence")
    reason: StrictStr = "edited by a person"
