"""Madeleine: memory for AI agents that surfaces by itself."""

from madeleine.aio import AsyncMemory
from madeleine.api import Memory
from madeleine.client import AsyncClient, Client
from madeleine.config import Settings
from madeleine.errors import (
    AuthenticationError,
    EmbedderMismatchError,
    MadeleineError,
    RateLimitedError,
    ServerError,
    StoreClosedError,
    StoreDamagedError,
    StoreReadOnlyError,
)
from madeleine.records import AddResult, Context, Hit

__all__ = [
    "AddResult",
    "AsyncClient",
    "AsyncMemory",
    "AuthenticationError",
    "Client",
    "Context",
    "EmbedderMismatchError",
    "Hit",
    "MadeleineError",
    "Memory",
    "RateLimitedError",
    "ServerError",
    "Settings",
    "StoreClosedError",
    "StoreDamagedError",
    "StoreReadOnlyError",
]
__version__ = "0.1.0"
