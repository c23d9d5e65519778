"""Hostile JSON against every JSON-taking call of the Python API (Hypothesis). Each call
either refuses with a ValueError/TypeError naming the field and stores nothing, or stores,
and then every read route still answers with strict, bounded JSON: the export, the agent's
state, history and snapshot, the KB's listings and versions, the session's buffer.

One store per test, shared by its examples (each example uses ids of its own)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given

from madeleine import Memory
from tests.fakes import HashingEmbedder
from tests.hostile_json import (
    HOSTILE_ANY,
    HOSTILE_OBJECTS,
    HOSTILE_SECONDS,
    RUN,
    Hostile,
    readable,
    refused_cleanly,
)

_ids = itertools.count()


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        yield memory


def _stored(call: Callable[[], object], field: str, hostile: Hostile | None = None) -> bool:
    """True if the call stored; False if it refused cleanly, naming ``field``."""
    shape = "" if hostile is None else f"{hostile.shape}: "
    try:
        call()
    except Exception as exc:
        refused_cleanly(exc, field)
        event(f"{shape}refused ({type(exc).__name__})")
        return False
    event(f"{shape}stored")
    return True


def _user_reads_answer(mem: Memory, user: str) -> dict[str, Any]:
    mem.wait()  # the worker indexes what was accepted: it must not choke on it either
    exported = mem.export_user(user)
    readable(exported)
    json.dumps([h.to_dict() for h in mem.search("hello", user_id=user)], default=str)
    assert isinstance(mem.context("hello", user_id=user).text, str)
    readable(mem.sessions(user))
    return exported


@RUN
@given(hostile=HOSTILE_ANY)
def test_message_metadata(mem: Memory, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    message = {"content": "hello there", "metadata": hostile.value}
    stored = _stored(lambda: mem.add([message], user_id=user), "metadata")
    assert len(_user_reads_answer(mem, user)["events"]) == int(stored)


@RUN
@given(hostile=HOSTILE_ANY)
def test_event_data(mem: Memory, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    stored = _stored(
        lambda: mem.add_event(user_id=user, type="cart", data=hostile.value), "data", hostile
    )
    assert len(_user_reads_answer(mem, user)["events"]) == int(stored)


def _agent_reads_answer(mem: Memory, agent_id: str) -> dict[str, Any]:
    agent = mem.agent(agent_id, user_id="agents")
    view = agent.current().to_dict()
    readable(view)
    readable(agent.history())
    readable(agent.snapshot())
    readable(mem.export_user("agents"))
    return view


@RUN
@given(hostile=HOSTILE_ANY)
def test_agent_transition_data(mem: Memory, hostile: Hostile) -> None:
    agent_id = f"a{next(_ids)}"
    agent = mem.agent(agent_id, user_id="agents")
    stored = _stored(lambda: agent.transition("planning", data=hostile.value), "data", hostile)
    view = _agent_reads_answer(mem, agent_id)
    assert view["version"] == int(stored)
    assert view["state"] == ("planning" if stored else "idle")


@RUN
@given(hostile=HOSTILE_ANY)
def test_agent_restore_data(mem: Memory, hostile: Hostile) -> None:
    agent_id = f"a{next(_ids)}"
    agent = mem.agent(agent_id, user_id="agents")
    agent.transition("planning", data={"step": 1})
    snapshot = {**agent.snapshot(), "state": "executing", "data": hostile.value}
    stored = _stored(lambda: agent.restore(snapshot), "data", hostile)
    view = _agent_reads_answer(mem, agent_id)
    assert view["version"] == 1 + int(stored)
    assert view["data"] == ({"step": 1} if not stored else view["data"])


def _kb_reads_answer(mem: Memory, doc_id: str) -> list[dict[str, Any]]:
    kb = mem.kb("hostile")
    readable([d.to_dict() for d in kb.documents()])
    versions = [v.to_dict() for v in kb.versions(doc_id)]
    readable(versions)
    readable([c.to_dict() for c in mem.collections()])
    mem.wait()
    json.dumps([h.to_dict() for h in mem.search_kb("handbook")], default=str)
    return versions


@RUN
@given(hostile=HOSTILE_ANY)
def test_kb_document_metadata(mem: Memory, hostile: Hostile) -> None:
    doc_id = f"d{next(_ids)}"
    kb = mem.kb("hostile")
    add = lambda: kb.add_document(  # noqa: E731
        "The handbook says hello.", doc_id=doc_id, metadata=hostile.value, format="text"
    )
    stored = _stored(add, "metadata", hostile)
    assert len(_kb_reads_answer(mem, doc_id)) == int(stored)


@RUN
@given(hostile=HOSTILE_OBJECTS)
def test_kb_update_metadata(mem: Memory, hostile: Hostile) -> None:
    doc_id = f"d{next(_ids)}"
    kb = mem.kb("hostile")
    kb.add_document("The handbook says hello.", doc_id=doc_id, metadata={"v": 1}, format="text")
    stored = _stored(
        lambda: kb.update_document(doc_id, metadata=hostile.value), "metadata", hostile
    )
    versions = _kb_reads_answer(mem, doc_id)
    assert versions[-1]["metadata"] == {"v": 1} or stored


@RUN
@given(hostile=HOSTILE_ANY)
def test_session_message_metadata(mem: Memory, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    session = mem.session("chat", user_id=user, ttl_seconds=60)
    message = {"role": "user", "content": "hello there", "metadata": hostile.value}
    stored = _stored(lambda: session.append(message), "metadata", hostile)
    messages = session.messages()
    readable(messages)
    readable(session.window(500).to_dict())
    assert len(messages) == int(stored)
    assert len(_user_reads_answer(mem, user)["events"]) == int(stored)


@pytest.mark.parametrize("ttl", HOSTILE_SECONDS)
def test_session_ttl(mem: Memory, ttl: str) -> None:
    """NaN, infinities, 1e300, 1e-300, zero, negatives, a str and a bool are refused; a
    sane number of seconds is kept, and the buffer answers."""
    value = json.loads(ttl)
    accepted = ttl in ("60", "86400")
    if not accepted:
        with pytest.raises((ValueError, TypeError), match="ttl_seconds"):
            mem.session("chat", user_id="u", ttl_seconds=value)
        return
    session = mem.session("chat", user_id="u", ttl_seconds=value)
    session.append({"role": "user", "content": "hello"})
    (found,) = mem.sessions("u")
    assert found["expires_at"] - found["updated_at"] == pytest.approx(value, abs=1)


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels):
        value = {"a": value}
    return value


def test_the_examples_of_issue_30(mem: Memory) -> None:
    """Each was stored (or raised RecursionError) and then broke reads."""
    agent = mem.agent("deep", user_id="u")
    with pytest.raises(ValueError, match=r"^data is nested deeper than 32 levels"):
        agent.transition("planning", data=_deep(500))
    with pytest.raises(ValueError, match=r"^snapshot\['data'\] is nested deeper"):
        agent.restore({"state": "planning", "data": _deep(500)})
    assert agent.current().version == 0 and agent.history() == []
    kb = mem.kb("c")
    with pytest.raises(ValueError, match=r"^metadata is nested deeper"):
        kb.add_document("a handbook", doc_id="d", metadata=_deep(500))
    with pytest.raises(ValueError, match=r"^metadata must hold finite numbers only"):
        kb.add_document("a handbook", doc_id="d", metadata={"x": float("nan")})
    assert kb.documents() == []
    for levels in (500, 900, 5_000):
        with pytest.raises(ValueError, match=r"^messages\[0\]\['metadata'\] is nested deeper"):
            mem.add([{"content": "hi", "metadata": _deep(levels)}], user_id="u")
    with pytest.raises(ValueError, match=r"^ttl_seconds"):
        mem.session("s", user_id="u", ttl_seconds=float("nan"))
    exported = mem.export_user("u")
    assert exported["events"] == [] and json.dumps(exported, allow_nan=False)


def test_agent_arguments_stored_as_given_are_bounded(mem: Memory) -> None:
    agent = mem.agent("a", user_id="u")
    with pytest.raises(ValueError, match="reason has 2,001 characters"):
        agent.transition("planning", reason="x" * 2_001)
    with pytest.raises(TypeError, match=r"snapshot\['version'\] must be an int"):
        agent.restore({"state": "planning", "version": _deep(2_000)})
    with pytest.raises(TypeError, match="an agent state is a str"):
        agent.restore({"state": _deep(2_000)})
    with pytest.raises(ValueError, match="the timeout of planning must be a positive, finite"):
        mem.agent("a", user_id="u", timeouts={"planning": float("nan")})
    with pytest.raises(ValueError, match="description has 10,001 characters"):
        mem.kb("c", description="x" * 10_001)
    assert agent.current().version == 0 and mem.collections() == []


def test_numbers_too_large_for_a_float_are_refused_not_overflowed(mem: Memory) -> None:
    with pytest.raises(ValueError, match="importance must be between 0 and 1"):
        mem.set_importance("ep_1", 10**400, user_id="u")
    with pytest.raises(ValueError, match="timestamp epoch seconds out of range: a huge int"):
        mem.add([{"content": "hi"}], user_id="u", timestamp=10**400)
    with pytest.raises(ValueError, match="now epoch seconds out of range"):
        mem.maintain(["u"], now=-(10**400))
    with pytest.raises(ValueError, match="budget_tokens must be from 1 to 1,000,000, got a huge"):
        mem.context("hello", user_id="u", budget_tokens=10**400)
    with pytest.raises(ValueError, match="limit must be from 1 to 10000"):
        mem.agent("a", user_id="u").history(10**400)
    with pytest.raises(TypeError, match="limit must be an int"):
        mem.agent("a", user_id="u").history(math.nan)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [math.nan, -1, math.inf, 10**400])
def test_a_wait_timeout_is_finite_and_not_negative(mem: Memory, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be a non-negative, finite number"):
        mem.wait(timeout)
    assert mem.wait(0) is True and mem.wait(None) is True


def test_reasons_kept_in_the_lifecycle_log_are_bounded(mem: Memory) -> None:
    mem.add([{"content": "I live in Lisbon."}], user_id="u")
    mem.wait()
    (hit,) = mem.search("Lisbon", user_id="u", limit=1)
    with pytest.raises(ValueError, match="reason has 2,001 characters"):
        mem.archive(hit.id, user_id="u", reason="x" * 2_001)
    assert mem.lifecycle_log("u") == []
