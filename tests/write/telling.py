"""Telling a memory things, one message per session, for the fact tests."""

from __future__ import annotations

import itertools

from madeleine import Memory

_SAID = itertools.count()


def tell(memory: Memory, user: str, *said: tuple[str, str], wait: bool = True) -> None:
    """Each ``(timestamp, text)`` as a user message in a session of its own; then wait until
    everything is indexed (unless ``wait`` is False: the caller adds more first)."""
    for when, text in said:
        n = next(_SAID)
        memory.add(
            {"role": "user", "content": text, "id": f"{user}-{n}"},
            user_id=user,
            session_id=f"{user}-{n}",
            timestamp=when,
        )
    if wait:
        memory.wait(timeout=120)
