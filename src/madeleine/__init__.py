"""Madeleine: memory for AI agents that surfaces by itself."""

from madeleine.aio import AsyncMemory
from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.errors import (
    EmbedderMismatchError,
    MadeleineError,
    StoreClosedError,
    StoreDamagedError,
    StoreReadOnlyError,
)
from madeleine.records import AddResult, Context, Hit

__all__ = [
    "AddResult",
    "AsyncMemory",
    "Context",
    "EmbedderMismatchError",
    "Hit",
    "MadeleineError",
    "Memory",
    "Settings",
    "StoreClosedError",
    "StoreDamagedError",
    "StoreReadOnlyError",
]
__version__ = "0.1.0"
