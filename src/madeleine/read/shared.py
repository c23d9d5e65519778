"""Per-user cache entries as bytes for the shared (Redis) cache level: numpy's own format,
loaded with ``allow_pickle=False`` — a value read back from Redis is data, never code."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from madeleine.store.ports import SharedCache
from madeleine.store.records import FactVectors, UserVectors

T = TypeVar("T")


def pack(arrays: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    named: dict[str, Any] = {name: np.asarray(value) for name, value in arrays.items()}
    np.savez(buffer, allow_pickle=False, **named)
    return buffer.getvalue()


def unpack(payload: bytes) -> dict[str, np.ndarray[Any, Any]]:
    with np.load(io.BytesIO(payload), allow_pickle=False) as loaded:
        return {name: loaded[name] for name in loaded.files}


def through(
    shared: SharedCache | None,
    kind: str,
    user_id: str,
    version: str,
    load: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> T:
    """``load()``'s value, from the shared cache when another process built it already."""
    if shared is None:
        return load()
    epoch, payload = shared.get(kind, user_id, version)
    if payload is not None:
        try:
            return decode(payload)
        except (ValueError, KeyError, OSError):
            pass  # an entry of another version of this code: rebuild it
    value = load()
    shared.put(kind, user_id, epoch, version, encode(value))
    return value


def encode_facts(value: FactVectors) -> bytes:
    return pack(
        {
            "ids": value.ids,
            "superseded": value.superseded,
            "valid_from": value.valid_from,
            "valid_to": value.valid_to,
            "recorded_at": value.recorded_at,
            "exempt": value.exempt,
            "matrix": value.matrix,
            "successor": value.successor,
            "keys": np.asarray(value.keys, dtype=np.str_),
            "link_facts": value.link_facts,
            "link_episodes": value.link_episodes,
            "categories": np.asarray(value.categories, dtype=np.str_),
            "importance": value.importance,
            "pinned": value.pinned,
        }
    )


def decode_facts(payload: bytes) -> FactVectors:
    a = unpack(payload)
    return FactVectors(
        ids=a["ids"],
        superseded=a["superseded"],
        valid_from=a["valid_from"],
        valid_to=a["valid_to"],
        recorded_at=a["recorded_at"],
        exempt=a["exempt"],
        matrix=a["matrix"],
        successor=a["successor"],
        keys=[str(k) for k in a["keys"]],
        link_facts=a["link_facts"],
        link_episodes=a["link_episodes"],
        categories=[str(c) for c in a["categories"]],
        importance=a["importance"],
        pinned=a["pinned"],
    )


def encode_rows(value: UserVectors) -> bytes:
    return pack(
        {
            "ids": value.ids,
            "times": value.times,
            "matrix": value.matrix,
            "sessions": np.asarray(value.sessions, dtype=np.str_),
            "kinds": np.asarray(value.kinds, dtype=np.str_),
            "pinned": value.pinned,
        }
    )


def decode_rows(payload: bytes) -> UserVectors:
    a = unpack(payload)
    return UserVectors(
        a["ids"],
        a["times"],
        a["matrix"],
        [str(s) for s in a["sessions"]],
        [str(k) for k in a["kinds"]],
        a["pinned"],
    )
