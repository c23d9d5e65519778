"""Checkpoints where a search may step aside for another tenant's cheaper one.

Admission (``server/fairness.py``) decides how many searches run at once, but two searches
that both run share the cores and the interpreter: a tenant flooding long queries still
doubled another tenant's short searches once both were admitted. So the engine offers
*checkpoints* between the steps of a search (before the query's embedding is queued, before
each channel and each stage), and whoever runs the engine may install a ``pause`` for the
current call: the server's scheduler pauses a search there while a cheaper search of another
tenant runs. Without a pause installed (the library, the CLI) a checkpoint costs one context
lookup.

The pause lives in a ``ContextVar``: it follows the request into the worker thread that runs
it (threads started with a copied context) and nowhere else."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token

# called with the size of the work the search is about to do (the query tokens the
# embedding reads), or None at a checkpoint that does not know it
Pause = Callable[[float | None], None]

_pause: ContextVar[Pause | None] = ContextVar("madeleine_pause", default=None)


def checkpoint(size: float | None = None) -> None:
    """A point in a search where it holds no lock and may wait: the installed pause runs.
    ``size`` says how big this search is (the query tokens its embedding reads), so that a
    scheduler can tell a cheap search from a costly one."""
    pause = _pause.get()
    if pause is not None:
        pause(size)


def install(pause: Pause | None) -> Token[Pause | None]:
    """Make ``pause`` run at this context's checkpoints (``None``: none); ``uninstall`` the
    returned token to restore what was there."""
    return _pause.set(pause)


def uninstall(token: Token[Pause | None]) -> None:
    try:
        _pause.reset(token)
    except ValueError:  # ended in another context than it began (an async generator's exit)
        _pause.set(None)
