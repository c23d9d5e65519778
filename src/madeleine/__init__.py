"""Madeleine: memory for AI agents that surfaces by itself."""

from madeleine.aio import AsyncMemory
from madeleine.api import Memory
from madeleine.client import AsyncClient, Client
from madeleine.config import Settings
from madeleine.errors import (
    AuthenticationError,
    EmbedderMismatchError,
    ForbiddenError,
    MadeleineError,
    RateLimitedError,
    ServerError,
    StaleVersionError,
    StoreClosedError,
    StoreDamagedError,
    StoreReadOnlyError,
)
from madeleine.kb.ask import Answer
from madeleine.kb.clarify import Clarification
from madeleine.kb.collection import KnowledgeBase
from madeleine.kb.records import CollectionInfo, KBHit, Principal, VersionInfo
from madeleine.records import AddResult, Context, Hit

__all__ = [
    "AddResult",
    "Answer",
    "AsyncClient",
    "AsyncMemory",
    "AuthenticationError",
    "Clarification",
    "Client",
    "CollectionInfo",
    "Context",
    "EmbedderMismatchError",
    "ForbiddenError",
    "Hit",
    "KBHit",
    "KnowledgeBase",
    "MadeleineError",
    "Memory",
    "Principal",
    "RateLimitedError",
    "ServerError",
    "Settings",
    "StaleVersionError",
    "StoreClosedError",
    "StoreDamagedError",
    "StoreReadOnlyError",
    "VersionInfo",
]
__version__ = "0.1.0"
