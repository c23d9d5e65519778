"""Vault key rotation: every vaulted value re-encrypted under a new key, nothing lost, the
old key useless afterwards, the store usable throughout (issue 13)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from madeleine import Memory
from madeleine.store.crypto import KEY_FILE, VaultKeyError
from tests.bench.test_cli_and_bench import _cli
from tests.fakes import HashingEmbedder

EMAILS = [f"person{n}@example.com" for n in range(30)]


def _fill(memory: Memory) -> None:
    memory.add(
        [
            {"content": f"Write to me at {email} please", "id": str(n)}
            for n, email in enumerate(EMAILS)
        ],
        user_id="u",
    )
    memory.wait()


def _restored(memory: Memory) -> set[str]:
    return {e["content"] for e in memory.export_user("u")["events"]}


@pytest.mark.sqlite_only  # the key file lives beside the embedded store
def test_rotation_with_the_key_file_reencrypts_everything(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        _fill(memory)
        before = _restored(memory)
        old_key = (path / KEY_FILE).read_bytes().strip()
        report = memory.rotate_vault_key()
        assert report["rotated"] == len(EMAILS)
        assert _restored(memory) == before  # this process reads on, with the new key
        memory.add(
            [{"content": "Write to me at person0@example.com please", "id": "again"}], user_id="u"
        )
        assert len(memory.export_user("u")["vault"]) == len(EMAILS)  # dedupe still holds
    new_key = (path / KEY_FILE).read_bytes().strip()
    assert new_key != old_key and b"\n" not in new_key
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        assert _restored(memory) == before
    with pytest.raises(VaultKeyError):
        Memory(path, embedder=HashingEmbedder(), vault_key=old_key.decode())


def test_rotation_with_an_environment_key_needs_the_new_key(tmp_path: Path) -> None:
    path, old, new = tmp_path / "m", Fernet.generate_key().decode(), Fernet.generate_key().decode()
    with Memory(path, embedder=HashingEmbedder(), background=False, vault_key=old) as memory:
        _fill(memory)
        before = _restored(memory)
        with pytest.raises(ValueError, match="MADELEINE_VAULT_KEY"):
            memory.rotate_vault_key()
        assert memory.rotate_vault_key(new)["rotated"] == len(EMAILS)
    with Memory(path, embedder=HashingEmbedder(), background=False, vault_key=new) as memory:
        assert _restored(memory) == before
    # while other processes move over, both keys (newest first) open everything
    with Memory(path, embedder=HashingEmbedder(), background=False, vault_key=f"{new},{old}") as m:
        assert _restored(m) == before


def test_the_store_stays_usable_during_a_rotation(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        _fill(memory)
        before = _restored(memory)
        errors: list[BaseException] = []

        def read() -> None:
            try:
                for _ in range(20):
                    assert _restored(memory) == before
            except BaseException as exc:  # reported below
                errors.append(exc)

        reader = threading.Thread(target=read)
        reader.start()
        memory.rotate_vault_key()
        reader.join()
        assert errors == []


def test_the_cli_rotates_the_key(tmp_path: Path) -> None:
    path = tmp_path / "m"
    message = '[{"content": "Write to me at mina@example.com please", "id": "m1"}]'
    assert _cli("add", "--user", "u", "-", data=path, stdin=message).returncode == 0
    old = (path / KEY_FILE).read_bytes()
    result = _cli("vault", "rotate-key", data=path)
    assert result.returncode == 0, result.stderr
    assert '"rotated": 1' in result.stdout and (path / KEY_FILE).read_bytes() != old
    exported = _cli("export", "--user", "u", data=path)
    assert "mina@example.com" in exported.stdout
