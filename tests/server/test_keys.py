"""The key ring: tenant names, private files, scopes and limits as stored, the CLI."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from madeleine.kb.collection import require_collection_name
from madeleine.server.keys import key_ring, require_tenant
from madeleine.store.postgres.connection import require_schema_name

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["acme\n", "acme\r\n", "\nacme", "ac me", "", "-acme", "a" * 65])
def test_a_bad_tenant_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="tenant must be"):
        require_tenant(name)


@pytest.mark.parametrize(
    ("check", "name"),
    [(require_collection_name, "hr\n"), (require_schema_name, "memory\n")],
)
def test_other_name_checks_refuse_a_trailing_newline(check: object, name: str) -> None:
    with pytest.raises(ValueError):
        check(name)  # type: ignore[operator]


def test_the_key_file_and_its_directory_are_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = os.umask(0o022)
    try:
        ring = key_ring(data)
        ring.create("acme")
        ring.list()
    finally:
        os.umask(old)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith("keys.db")]
    assert {p.name for p in files} >= {"keys.db", "keys.db-wal", "keys.db-shm"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}


def test_an_existing_world_readable_key_file_is_narrowed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "keys.db").touch(mode=0o644)
    key_ring(data)
    assert stat.S_IMODE((data / "keys.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700


def test_scopes_and_limits_are_stored_and_checked(tmp_path: Path) -> None:
    ring = key_ring(tmp_path / "data")
    record, key = ring.create("acme", "hr", scopes=["read"], collections=["hr"], users=["u1"])
    grant = ring.grant_of(key)
    assert grant is not None and grant.key_id == str(record.id) and grant.tenant == "acme"
    assert grant.scopes == frozenset({"read"}) and grant.collections == frozenset({"hr"})
    assert grant.users == frozenset({"u1"})
    operator = ring.grant_of(ring.create(None, "ops", operator=True)[1])
    assert operator is not None and operator.operator and operator.tenant is None
    for bad, error in (
        ({"scopes": ["delete"]}, "scope must be one of"),
        ({"scopes": []}, "at least one"),
        ({"collections": []}, "collections must name at least one"),
        ({"users": "u1"}, "users must be a list"),
        ({"users": [""]}, "non-empty strings"),
    ):
        with pytest.raises((ValueError, TypeError), match=error):
            ring.create("acme", **bad)
    with pytest.raises(ValueError, match="operator key belongs to no tenant"):
        ring.create("acme", operator=True)
    assert len(ring.list()) == 2  # nothing written when refused


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "madeleine.cli", "keys", *args, "--data", str(data)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_cli_creates_scoped_and_operator_keys(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = _cli(data, "create", "--tenant", "acme", "--scope", "read", "--collections", "hr")
    assert made.returncode == 0, made.stderr
    assert "(read; collections: hr)" in made.stderr
    grant = key_ring(data).grant_of(made.stdout.strip())
    assert grant is not None and grant.scopes == frozenset({"read"})
    assert grant.collections == frozenset({"hr"})
    both = _cli(data, "create", "--tenant", "acme", "--scope", "read,admin", "--users", "a,b")
    assert "(read, admin; users: a, b)" in both.stderr
    assert "(read, write)" in _cli(data, "create", "--tenant", "acme").stderr
    ops = _cli(data, "create", "--operator")
    assert ops.returncode == 0 and "for the server operator" in ops.stderr
    listed = _cli(data, "list").stdout
    assert "collections=hr" in listed and "operator" in listed and "read,admin" in listed
    bad = _cli(data, "create", "--tenant", "acme", "--scope", "delete")
    assert bad.returncode != 0 and "scope must be one of" in bad.stderr
    assert len(key_ring(data).list()) == 4
