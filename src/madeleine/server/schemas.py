"""Request bodies of the REST API: field names are the Python call's argument names.

Types are checked here (a wrong type is a 422); what the values mean (a budget too small, an
unknown channel) is checked by ``Memory`` itself (a 400), so REST and Python give one answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationInfo,
)

from madeleine.inputs import (
    AGENT_DATA,
    EVENT_DATA,
    MAX_TTL_SECONDS,
    METADATA,
    MIN_TTL_SECONDS,
    JsonLimits,
    require_json_object,
)

Moment = datetime | StrictStr | float | None


def _checked(value: dict[str, Any], field: str, limits: JsonLimits) -> dict[str, Any]:
    """The facade's JSON check, run while the body is parsed: a 422 before any work."""
    try:
        return require_json_object(value, field, limits)
    except TypeError as exc:  # pydantic turns ValueErrors into validation errors
        raise ValueError(str(exc)) from None


def _within(limits: JsonLimits) -> Callable[[Any, ValidationInfo], Any]:
    def check(value: Any, info: ValidationInfo) -> Any:
        return None if value is None else _checked(value, str(info.field_name), limits)

    return check


def _inner(key: str, limits: JsonLimits, field: str) -> Callable[[Any], Any]:
    """The check of ``value[key]`` in each dict of a body field (a message's metadata)."""

    def check(value: Any) -> Any:
        for index, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item.get(key), dict):
                _checked(item[key], field.format(index=index), limits)
        return value

    return check


Metadata = Annotated[dict[str, Any] | None, AfterValidator(_within(METADATA))]
EventData = Annotated[dict[str, Any] | None, AfterValidator(_within(EVENT_DATA))]
AgentData = Annotated[dict[str, Any] | None, AfterValidator(_within(AGENT_DATA))]
Messages = Annotated[
    list[dict[str, Any]] | dict[str, Any],
    AfterValidator(_inner("metadata", METADATA, "messages[{index}]['metadata']")),
]
Snapshot = Annotated[dict[str, Any], AfterValidator(_inner("data", AGENT_DATA, "snapshot['data']"))]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddBody(_Body):
    user_id: StrictStr
    messages: Messages
    session_id: StrictStr = "default"
    timestamp: Moment = None
    wait: StrictBool = Field(False, description="return once the messages are searchable")
    wait_timeout: float = Field(60.0, gt=0, le=600)


class EventBody(_Body):
    user_id: StrictStr
    type: StrictStr
    data: EventData = None
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
    ttl_seconds: float | None = Field(
        86_400.0, ge=MIN_TTL_SECONDS, le=MAX_TTL_SECONDS, allow_inf_nan=False, strict=True
    )


class TransitionBody(_Body):
    user_id: StrictStr
    to: StrictStr
    reason: StrictStr = ""
    data: AgentData = None
    expected_version: int | None = None


class RestoreBody(_Body):
    user_id: StrictStr
    snapshot: Snapshot


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
    metadata: Metadata = None
    format: StrictStr | None = Field(None, description="'text', 'markdown' or 'html' (sniffed)")
    description: StrictStr | None = Field(None, description="sets the collection's description")


class DocumentUpdateBody(_Body):
    text: StrictStr | None = None
    title: StrictStr | None = None
    source_type: StrictStr | None = None
    acl: list[StrictStr] | None = None
    effective_from: Moment = None
    expires_at: Moment = None
    metadata: Metadata = None
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
    now: StrictFloat | StrictInt | StrictStr | None = None  # epoch seconds or ISO 8601


class UndoBody(_Body):
    user_id: StrictStr
    run: StrictStr


class FactEditBody(_Body):
    user_id: StrictStr
    statement: StrictStr = Field(description="the card's new statement: one sentence")
    reason: StrictStr = "edited by a person"
