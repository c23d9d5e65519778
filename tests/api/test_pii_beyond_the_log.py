"""Issue 30: the PII policy outside the message log, through ``Memory`` on each backend —
session buffers and summaries, agent reasons and data, edit and archive reasons, metadata
read key by key, event data, and KB collections by their own policy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.text.pii import DEFAULT_POLICY, scrub_tree
from tests.fakes import HashingEmbedder

PASSWORD = "Zq7!plum-Orbit"
CARD = "4539 1488 0343 6467"
PHONE = "4155550172"
EMAIL = "mina.plum@example.org"

StoredText = Callable[[Path], str]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "m", embedder=HashingEmbedder())
    yield memory
    memory.close()


def _short_term_text(mem: Memory, user: str) -> str:
    """What the short-term store holds for a user (SQLite, PostgreSQL or Redis), unrestored."""
    store = mem._open().store  # the raw rows, before the read path restores anything
    return str(store.short_term.export_user(user))


def test_a_session_buffer_and_its_summary_keep_placeholders(mem: Memory) -> None:
    session = mem.session("s1", user_id="mina")
    said = [
        f"I changed my password to {PASSWORD}",
        f"my card is {CARD}",
        f"call me at {PHONE}",
        "and the rest is small talk about the weather in Porto",
    ]
    for text in said * 4:
        session.append({"role": "user", "content": text})
    window = session.window(60)
    assert window.folded > 0
    raw = _short_term_text(mem, "mina")
    for value in (PASSWORD, CARD, PHONE):
        assert value not in raw
    assert "[pii:password]" in raw and "[pii:phone:" in raw
    shown = str(session.messages()) + window.summary
    assert PASSWORD not in shown and CARD not in shown  # masked: gone for everyone
    assert PHONE in str(session.messages())  # vaulted: back for its owner
    assert PHONE not in str(mem.session("s1", user_id="jun").messages())


def test_agent_reasons_and_data_are_scrubbed_and_restored_for_the_owner(mem: Memory) -> None:
    agent = mem.agent("a1", user_id="mina")
    data = {"card": CARD, "contact": {"phone": PHONE}, "notes": [f"password: {PASSWORD}"]}
    moved = agent.transition("planning", reason=f"Password for the bank: {PASSWORD}", data=data)
    raw = _short_term_text(mem, "mina")
    for value in (PASSWORD, CARD, CARD.replace(" ", ""), PHONE):
        assert value not in raw
    assert moved.data["contact"] == {"phone": PHONE}
    assert moved.data["card"] == "[pii:card_number]"
    assert agent.history()[-1]["reason"] == "Password for the bank: [pii:password]"
    restored = agent.restore(agent.snapshot())  # a snapshot round trip keeps the policy
    assert restored.data == moved.data
    assert PHONE not in _short_term_text(mem, "mina")


def test_metadata_keys_label_their_values(mem: Memory, stored_text: StoredText) -> None:
    mem.add(
        {
            "role": "user",
            "content": "see the metadata",
            "metadata": {
                "password": "plum-tree",  # no digit, no label in the value: the key says it
                "cardNumber": int(CARD.replace(" ", "")),
                "contact": {"mobile": PHONE, "emails": [EMAIL]},
                "count": 3,
            },
        },
        user_id="mina",
    )
    mem.add_event(user_id="mina", type="checkout", data={"phone": PHONE, "password": "plum-tree"})
    stored = stored_text(Path(mem.path))
    for value in ("plum-tree", CARD.replace(" ", ""), PHONE, EMAIL):
        assert value not in stored


def test_scrub_tree_reads_keys_as_labels() -> None:
    def put(category: object, value: str) -> str:
        return "vabcdefghij"

    scrubbed = scrub_tree(
        {"pin": 4321, "id": 5551234567, "n": 7, "list": [{"password": "x"}], "ok": True},
        DEFAULT_POLICY,
        put,
    )
    assert scrubbed == {
        "pin": "[pii:pin]",
        "id": 5551234567,  # an id is not a phone number
        "n": 7,
        "list": [{"password": "[pii:password]"}],
        "ok": True,
    }


def test_edit_and_archive_reasons_are_scrubbed(mem: Memory, stored_text: StoredText) -> None:
    mem.add({"role": "user", "content": "I live in Porto."}, user_id="mina")
    mem.wait()
    home = next(c for c in mem.facts("mina") if c.key == "location.home")
    edited = mem.edit_fact(
        home.id, "Mina lives in Lisbon.", user_id="mina", reason=f"she called from {PHONE}"
    )
    mem.archive(edited.id, user_id="mina", reason=f"my password is {PASSWORD}")
    stored = stored_text(Path(mem.path))
    assert PHONE not in stored and PASSWORD not in stored
    log = mem.routing_log("mina")
    assert any("[pii:phone:" in str(entry) for entry in log)


RUNBOOK = f"# Escalation\n\nCall the customer at {PHONE} or mail {EMAIL}. Test card {CARD}.\n"


@pytest.mark.parametrize(
    ("policy", "phone_shown", "stored_placeholder"),
    [("vault", "[pii:phone:", True), ("mask", "[pii:phone]", True), ("keep", PHONE, False)],
)
def test_a_collection_applies_its_own_policy(
    mem: Memory, stored_text: StoredText, policy: str, phone_shown: str, stored_placeholder: bool
) -> None:
    kb = mem.kb("runbook", description="support runbook", pii=None if policy == "vault" else policy)
    assert kb.pii == policy
    kb.add_document(RUNBOOK, doc_id="escalation", metadata={"owner_phone": PHONE})
    mem.wait()
    hits = mem.search_kb("call the customer")
    assert hits and phone_shown in hits[0].text
    stored = stored_text(Path(mem.path))
    assert (PHONE not in stored) is stored_placeholder
    assert (CARD not in stored) is stored_placeholder
    context = mem.context("how do I reach the customer?", user_id="mina")
    assert (PHONE in context.text) is (policy == "keep")
    if policy == "vault":  # the library caller may put the values back; no route does
        assert PHONE in kb.reveal(hits[0].text)
        assert PHONE not in mem.kb("runbook").reveal(hits[0].text.replace("v", "w"))
        mem.delete_collection("runbook")  # its vaulted values go with it
        assert PHONE not in kb.reveal(hits[0].text)


def test_a_collection_policy_is_kept_and_reset_with_the_collection(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as mem:
        assert mem.kb("open", pii="keep").pii == "keep"
        assert mem.kb("open").pii == "keep"  # None leaves it as it is
        with pytest.raises(ValueError, match="pii must be 'vault', 'mask' or 'keep'"):
            mem.kb("open", pii="plain")
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as mem:
        assert mem.kb("open").pii == "keep"  # kept in the store
        mem.delete_collection("open")
        assert mem.kb("open").pii == "vault"  # a new collection starts from the default


def test_a_user_id_cannot_take_a_collection_s_vault(mem: Memory) -> None:
    with pytest.raises(ValueError, match="reserved"):
        mem.add({"role": "user", "content": "hi"}, user_id="\x1fkb\x1frunbook")
