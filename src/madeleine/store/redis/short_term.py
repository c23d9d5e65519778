"""Short-term memory in Redis: conversation buffers expire by themselves (the key's TTL), and
an agent's move is a compare-and-set on its version, done in one Lua script so that two API
processes never both win. Times come from the caller (``now``), never from Redis's clock."""

from __future__ import annotations

import json
from typing import Any

from madeleine.store.export import exported_short_term
from madeleine.store.records import (
    AgentRecord,
    BufferedMessage,
    SessionInfo,
    StaleStateError,
    Transaction,
    TransitionRecord,
)

_GRACE_MS = 60_000  # keys outlive their logical expiry a little; reads check ``now`` anyway

_APPEND = """
local session, messages, index, users = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local created, expires, ttl_ms = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local old = redis.call('HGET', session, 'expires_at')
if old and old ~= '' and tonumber(old) <= created then
  redis.call('DEL', session, messages)
end
local position = redis.call('HINCRBY', session, 'next', 1)
if position == 1 then redis.call('HSET', session, 'summary', '', 'folded', 0) end
redis.call('HSET', session, 'updated_at', ARGV[3], 'expires_at', expires)
redis.call('RPUSH', messages, position .. '|' .. ARGV[6])
if ttl_ms > 0 then
  redis.call('PEXPIRE', session, ttl_ms)
  redis.call('PEXPIRE', messages, ttl_ms)
else
  redis.call('PERSIST', session)
  redis.call('PERSIST', messages)
end
redis.call('ZADD', index, ARGV[3], ARGV[2])
redis.call('SADD', users, ARGV[1])
return position
"""

_FOLD = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local folded = tonumber(redis.call('HGET', KEYS[1], 'folded') or '0')
redis.call('HSET', KEYS[1], 'summary', ARGV[1], 'folded', math.max(folded, tonumber(ARGV[2])))
return 1
"""

_MOVE = """
local agent, log, agents, users = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local version = redis.call('HGET', agent, 'version')
local expected = tonumber(ARGV[1])
if expected == 0 then
  if version then return 0 end
elseif (not version) or tonumber(version) ~= expected then
  return 0
end
redis.call('HSET', agent, 'state', ARGV[2], 'data', ARGV[3], 'entered_at', ARGV[4],
           'version', ARGV[5])
redis.call('RPUSH', log, ARGV[6])
redis.call('SADD', agents, ARGV[7])
redis.call('SADD', users, ARGV[8])
return 1
"""


def _part(value: str) -> str:
    """A length-prefixed id: ids may hold ':' and still never collide."""
    return f"{len(value)}:{value}"


class RedisShortTerm:
    def __init__(self, client: Any, prefix: str) -> None:
        self._client = client
        self._prefix = prefix
        self._append = client.register_script(_APPEND)
        self._fold = client.register_script(_FOLD)
        self._move = client.register_script(_MOVE)

    # -- keys ---------------------------------------------------------------------------------

    def _session_key(self, user_id: str, session_id: str) -> str:
        return f"{self._prefix}session:{_part(user_id)}{_part(session_id)}"

    def _messages_key(self, user_id: str, session_id: str) -> str:
        return f"{self._prefix}messages:{_part(user_id)}{_part(session_id)}"

    def _sessions_of(self, user_id: str) -> str:
        return f"{self._prefix}sessions:{_part(user_id)}"

    def _agent_key(self, user_id: str, agent_id: str) -> str:
        return f"{self._prefix}agent:{_part(user_id)}{_part(agent_id)}"

    def _transitions_key(self, user_id: str, agent_id: str) -> str:
        return f"{self._prefix}transitions:{_part(user_id)}{_part(agent_id)}"

    def _agents_of(self, user_id: str) -> str:
        return f"{self._prefix}agents:{_part(user_id)}"

    @property
    def _users(self) -> str:
        return f"{self._prefix}users"

    # -- conversation buffers -----------------------------------------------------------------

    def append(
        self, user_id: str, session_id: str, message: BufferedMessage, expires_at: float | None
    ) -> int:
        """Append at the session's next position (a session past its expiry starts over)."""
        ttl_ms = (
            0
            if expires_at is None
            else max(1, int((expires_at - message.created_at) * 1000)) + _GRACE_MS
        )
        encoded = json.dumps(
            {
                "role": message.role,
                "content": message.content,
                "name": message.name,
                "pinned": message.pinned,
                "created_at": message.created_at,
            },
            ensure_ascii=False,
        )
        position = self._append(
            keys=[
                self._session_key(user_id, session_id),
                self._messages_key(user_id, session_id),
                self._sessions_of(user_id),
                self._users,
            ],
            args=[
                user_id,
                session_id,
                repr(float(message.created_at)),
                "" if expires_at is None else repr(float(expires_at)),
                ttl_ms,
                encoded,
            ],
        )
        return int(position)

    def messages(self, user_id: str, session_id: str, now: float) -> list[BufferedMessage]:
        if self.session(user_id, session_id, now) is None:
            return []
        raw = self._client.lrange(self._messages_key(user_id, session_id), 0, -1)
        return [_message(item) for item in raw]

    def session(self, user_id: str, session_id: str, now: float) -> SessionInfo | None:
        pipe = self._client.pipeline(transaction=False)
        pipe.hgetall(self._session_key(user_id, session_id))
        pipe.llen(self._messages_key(user_id, session_id))
        fields, count = pipe.execute()
        return _session(session_id, fields, int(count), now)

    def sessions(self, user_id: str, now: float) -> list[SessionInfo]:
        members = self._client.zrevrange(self._sessions_of(user_id), 0, -1)
        found: list[SessionInfo] = []
        for member in members:
            session_id = member.decode()
            info = self.session(user_id, session_id, now)
            if info is not None:
                found.append(info)
            elif not self._client.exists(self._session_key(user_id, session_id)):
                self._client.zrem(self._sessions_of(user_id), session_id)  # expired by TTL
        return found

    def fold(self, user_id: str, session_id: str, summary: str, through: int) -> None:
        """Record the rolling summary of every message up to position ``through``."""
        self._fold(keys=[self._session_key(user_id, session_id)], args=[summary, through])

    def clear(self, user_id: str, session_id: str) -> int:
        pipe = self._client.pipeline(transaction=True)
        pipe.llen(self._messages_key(user_id, session_id))
        pipe.delete(self._session_key(user_id, session_id), self._messages_key(user_id, session_id))
        pipe.zrem(self._sessions_of(user_id), session_id)
        removed, _, _ = pipe.execute()
        return int(removed)

    def purge_expired(self, now: float) -> int:
        """Buffers past their expiry by the caller's clock (Redis drops them by TTL too)."""
        removed = 0
        for raw_user in self._client.smembers(self._users):
            user_id = raw_user.decode()
            for member in self._client.zrange(self._sessions_of(user_id), 0, -1):
                session_id = member.decode()
                if self.session(user_id, session_id, now) is None:
                    removed += self.clear(user_id, session_id)
        return removed

    # -- agent states -------------------------------------------------------------------------

    def agent(self, user_id: str, agent_id: str) -> AgentRecord | None:
        fields = self._client.hgetall(self._agent_key(user_id, agent_id))
        if not fields:
            return None
        return AgentRecord(
            fields[b"state"].decode(),
            json.loads(fields[b"data"]),
            float(fields[b"entered_at"]),
            int(fields[b"version"]),
        )

    def move_agent(
        self,
        user_id: str,
        agent_id: str,
        expected_version: int,
        record: AgentRecord,
        transition: TransitionRecord,
    ) -> None:
        """Write the new state and its log line together, if nobody moved it meanwhile."""
        moved = self._move(
            keys=[
                self._agent_key(user_id, agent_id),
                self._transitions_key(user_id, agent_id),
                self._agents_of(user_id),
                self._users,
            ],
            args=[
                expected_version,
                record.state,
                json.dumps(record.data, ensure_ascii=False),
                repr(float(record.entered_at)),
                record.version,
                json.dumps(
                    {
                        "from": transition.from_state,
                        "to": transition.to_state,
                        "reason": transition.reason,
                        "at": transition.at,
                    },
                    ensure_ascii=False,
                ),
                agent_id,
                user_id,
            ],
        )
        if not int(moved):
            raise StaleStateError(f"agent {agent_id!r} was changed by another writer")

    def transitions(self, user_id: str, agent_id: str, limit: int) -> list[TransitionRecord]:
        raw = self._client.lrange(self._transitions_key(user_id, agent_id), -limit, -1)
        return [
            TransitionRecord(d["from"], str(d["to"]), str(d["reason"]), float(d["at"]))
            for d in (json.loads(item) for item in raw)
        ]

    # -- export and erasure -------------------------------------------------------------------

    def export_user(self, user_id: str) -> dict[str, Any]:
        messages = []
        for member in sorted(self._client.zrange(self._sessions_of(user_id), 0, -1)):
            session_id = member.decode()
            for item in self._client.lrange(self._messages_key(user_id, session_id), 0, -1):
                m = _message(item)
                messages.append((session_id, m.position, m.role, m.content, m.pinned, m.created_at))
        agents = []
        for member in sorted(self._client.smembers(self._agents_of(user_id))):
            agent_id = member.decode()
            record = self.agent(user_id, agent_id)
            if record is not None:
                agents.append((agent_id, record.state, record.data, record.entered_at))
        return exported_short_term(messages, agents)

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        """Every buffer and agent of the user (``tx`` belongs to the durable store: Redis
        keys are removed at once, whatever that transaction does)."""
        removed = 0
        for member in self._client.zrange(self._sessions_of(user_id), 0, -1):
            session_id = member.decode()
            removed += self.clear(user_id, session_id) + 1
        for member in self._client.smembers(self._agents_of(user_id)):
            agent_id = member.decode()
            removed += int(self._client.llen(self._transitions_key(user_id, agent_id))) + 1
            self._client.delete(
                self._agent_key(user_id, agent_id), self._transitions_key(user_id, agent_id)
            )
        self._client.delete(self._sessions_of(user_id), self._agents_of(user_id))
        self._client.srem(self._users, user_id)
        return removed

    def close(self) -> None:
        self._client.close()


def _message(item: bytes) -> BufferedMessage:
    position, _, encoded = item.partition(b"|")
    data = json.loads(encoded)
    return BufferedMessage(
        role=str(data["role"]),
        content=str(data["content"]),
        name=data.get("name"),
        pinned=bool(data.get("pinned")),
        created_at=float(data["created_at"]),
        position=int(position),
    )


def _session(
    session_id: str, fields: dict[bytes, bytes], count: int, now: float
) -> SessionInfo | None:
    if not fields or b"next" not in fields:
        return None
    expires = fields.get(b"expires_at", b"")
    expires_at = float(expires) if expires else None
    if expires_at is not None and expires_at <= now:
        return None
    return SessionInfo(
        session_id,
        fields.get(b"summary", b"").decode(),
        int(fields.get(b"folded", b"0")),
        float(fields[b"updated_at"]),
        expires_at,
        count,
    )
