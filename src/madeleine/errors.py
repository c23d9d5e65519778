"""Exceptions raised by Madeleine; all derive from the builtin type a caller would expect."""

from __future__ import annotations


class MadeleineError(Exception):
    """Base class for Madeleine-specific errors."""


class EmbedderMismatchError(MadeleineError):
    """The store was built with another embedder; mixing vectors would silently corrupt search."""


class StoreClosedError(MadeleineError):
    """The Memory was closed and can no longer be used."""


class StoreDamagedError(MadeleineError):
    """The store's files are damaged: reading on could return wrong memories or lose more."""


class StoreReadOnlyError(MadeleineError):
    """The store was opened read-only (its files cannot be written): it answers reads only."""


class AuthenticationError(MadeleineError):
    """The server refused the API key (missing, unknown or revoked)."""


class ForbiddenError(MadeleineError, PermissionError):
    """The server's key lacks the scope, or may not reach the user or collection, that the
    call needs (the message names which)."""


class RateLimitedError(MadeleineError):
    """The server's rate limit for this key was reached; retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServerError(MadeleineError):
    """The server failed or is unavailable; the message names the incident to look up."""


class ItemNotFoundError(MadeleineError, LookupError):
    """No such turn or fact for this user (another user's item is "not found" too)."""


class StaleVersionError(MadeleineError, ValueError):
    """The change names a version that was superseded since: make it to the current one."""
