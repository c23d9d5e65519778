"""PII detection, policy and the vault: real regexes, a real SQLite file, real Fernet keys."""

from __future__ import annotations

import itertools
import sqlite3
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from madeleine.store.crypto import KEY_FILE, VaultCipher, VaultError, VaultKeyError, load_key
from madeleine.store.sqlite.vault import VAULT_SCHEMA, SQLiteVault
from madeleine.text.pii import (
    DEFAULT_POLICY,
    PLACEHOLDER,
    Finding,
    PiiCategory,
    apply_policy,
    policy_from,
    restore,
    scan,
    scrub,
    tokens_in,
)

C = PiiCategory


def found(text: str) -> list[tuple[str, str]]:
    return [(f.category.value, f.value) for f in scan(text)]


# -- detectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category", "value"),
    [
        ("write to mina.kim+travel@example.co.kr please", C.EMAIL, "mina.kim+travel@example.co.kr"),
        ("call (555) 123-4567 tonight", C.PHONE, "(555) 123-4567"),
        ("call 555-123-4567", C.PHONE, "555-123-4567"),
        ("call 555.123.4567", C.PHONE, "555.123.4567"),
        ("call +1 555 123 4567", C.PHONE, "+1 555 123 4567"),
        ("card 4111 1111 1111 1111 exp 09/27", C.CARD_NUMBER, "4111 1111 1111 1111"),
        ("card 5500-0000-0000-0004", C.CARD_NUMBER, "5500-0000-0000-0004"),
        ("amex 378282246310005.", C.CARD_NUMBER, "378282246310005"),
        ("SSN 123-45-6789", C.SSN, "123-45-6789"),
        ("my SSN is 123456789", C.SSN, "123456789"),
        ("IBAN DE89 3704 0044 0532 0130 00 AND more", C.IBAN, "DE89 3704 0044 0532 0130 00"),
        ("pay GB82WEST12345698765432 today", C.IBAN, "GB82WEST12345698765432"),
        ("my checking account number is 123456789", C.ACCOUNT_NUMBER, "123456789"),
        ("routing number 021000021", C.ACCOUNT_NUMBER, "021000021"),
        ("use my United MileagePlus number 12345678", C.LOYALTY_NUMBER, "12345678"),
        ("frequent flyer number: BA1234567", C.LOYALTY_NUMBER, "BA1234567"),
        ("my membership number is 55512345", C.LOYALTY_NUMBER, "55512345"),
        ("member number 7654321", C.LOYALTY_NUMBER, "7654321"),
        ("loyalty number 99887766", C.LOYALTY_NUMBER, "99887766"),
        ("rewards number #4455667788", C.LOYALTY_NUMBER, "4455667788"),
        ("member ID AB12-3456-7890-1234", C.LOYALTY_NUMBER, "AB12-3456-7890-1234"),
        ("my password is hunter2!", C.PASSWORD, "hunter2!"),
        ("password: s3cret.", C.PASSWORD, "s3cret"),
        ('my password is "open sesame" ok', C.PASSWORD, "open sesame"),
        ("Password=Tr0ub4dor&3;", C.PASSWORD, "Tr0ub4dor&3"),
        ("my pin is 4321", C.PIN, "4321"),
        ("PIN 4321", C.PIN, "4321"),
        ("the door PIN is 0000", C.PIN, "0000"),
        ("CVV 123", C.CVV, "123"),
        ("security code 987", C.CVV, "987"),
        # the value before its label, and login pairs (issue 13: stored in clear before)
        ("hunter2! is my password", C.PASSWORD, "hunter2!"),
        ("Fluffy was my old password", C.PASSWORD, "Fluffy"),
        ('"correct horse" is my passphrase', C.PASSWORD, "correct horse"),
        ("4321 is my PIN", C.PIN, "4321"),
        ("login mina / pass hunter2!", C.PASSWORD, "hunter2!"),
        ("user: mina, pw: s3cret!", C.PASSWORD, "s3cret!"),
        ("login: mina; password: Fluffy", C.PASSWORD, "Fluffy"),
        # issue 30: a secret word, a short qualifier, a connector, the value
        ("I changed my password to hunter2!", C.PASSWORD, "hunter2!"),
        ("I changed my password to sunshine", C.PASSWORD, "sunshine"),
        ("Password for the bank: Tr0ub4dor&3", C.PASSWORD, "Tr0ub4dor&3"),
        ("the password to my account is abc123", C.PASSWORD, "abc123"),
        ("my wifi password is now xyz77", C.PASSWORD, "xyz77"),
        ("passwords for the accounts: x1y2z3", C.PASSWORD, "x1y2z3"),
        ("the API key (staging) = sk-abc123def", C.PASSWORD, "sk-abc123def"),
        ("I set the PIN to 4321 yesterday", C.PIN, "4321"),
        # phone numbers by digit count and grouping
        ("my number is 5551234567 ok", C.PHONE, "5551234567"),
        ("call me at 555 1234567", C.PHONE, "555 1234567"),
        ("mobile: 555 12 34 567", C.PHONE, "555 12 34 567"),
        ("reach me on +44 20 7946 0958 tomorrow", C.PHONE, "+44 20 7946 0958"),
        ("+33 6 12 34 56 78", C.PHONE, "+33 6 12 34 56 78"),
        # a number of phone shape named as an account is an account number
        ("the checking account (4429853327) is new", C.ACCOUNT_NUMBER, "4429853327"),
        ("Routing is on file and account is 8829447651.", C.ACCOUNT_NUMBER, "8829447651"),
    ],
)
def test_english_detectors(text: str, category: PiiCategory, value: str) -> None:
    findings = scan(text)
    assert [(f.category, f.value) for f in findings] == [(category, value)]
    assert text[findings[0].start : findings[0].end] == value


@pytest.mark.parametrize(
    ("text", "category", "value"),
    [
        ("010-1234-5678로 연락 주세요", C.PHONE, "010-1234-5678"),
        ("제 번호는 01012345678이에요", C.PHONE, "01012345678"),
        ("010 1234 5678", C.PHONE, "010 1234 5678"),
        ("+82 10-1234-5678", C.PHONE, "+82 10-1234-5678"),
        ("사무실은 02-123-4567입니다", C.PHONE, "02-123-4567"),
        ("031-123-4567으로", C.PHONE, "031-123-4567"),
        ("mina@example.com으로 보내줘", C.EMAIL, "mina@example.com"),
        ("900101-1234568", C.RESIDENT_REGISTRATION_NUMBER, "900101-1234568"),
        ("9001011234568은 제 번호", C.RESIDENT_REGISTRATION_NUMBER, "9001011234568"),
        # since Oct 2020 the last digit is no checksum: a label and a valid date suffice
        ("주민등록번호는 900101-1234567", C.RESIDENT_REGISTRATION_NUMBER, "900101-1234567"),
        ("계좌번호는 110-123-456789 입니다", C.ACCOUNT_NUMBER, "110-123-456789"),
        ("국민은행 계좌 123-45-678901로 보내", C.ACCOUNT_NUMBER, "123-45-678901"),
        ("회원번호 12345678이에요", C.LOYALTY_NUMBER, "12345678"),
        ("스카이패스 회원번호는 112233445566", C.LOYALTY_NUMBER, "112233445566"),
        ("비밀번호는 qwer1234", C.PASSWORD, "qwer1234"),
        ("비밀번호는 qwer1234예요", C.PASSWORD, "qwer1234"),
        ("비번 1234야", C.PASSWORD, "1234"),
        ("비밀번호를 abcd!9로 바꿨어", C.PASSWORD, "abcd!9"),
        ("은행 비밀번호를 qwer1234로 변경했어", C.PASSWORD, "qwer1234"),
        ("은행 비밀번호: 1234", C.PASSWORD, "1234"),
        ("연락처 010 1234 5678", C.PHONE, "010 1234 5678"),
        ("핀번호 5678", C.PIN, "5678"),
        ("보안코드 321", C.CVV, "321"),
    ],
)
def test_korean_detectors_and_glued_particles(text: str, category: PiiCategory, value: str) -> None:
    assert found(text) == [(category.value, value)]


@pytest.mark.parametrize(
    "text",
    [
        "on 2024-05-01 at 10:30 we met",
        "2024.05.01 12:30:45, 5/1/2024 and 05/01/2024",
        "it cost $1,234.56, then ₩15,000 and 1,000,000원",
        "order #12345 total 1234567 won in 2023",
        "order number 12345678, confirmation 20240501103045",
        "총 45,000원 결제, 주문번호 2024050112345",
        "2024년 5월 1일 오후 3시, 3일 전",
        "room 1204, gate 32, seat 14A, flight UA 837, 3 pm",
        "my account has 1234 points; rewards points 12000; 마일리지 12000",
        "call me at 1234-5678 or 555-1234",  # no area code
        "ts 1714557600000 and 1234567890123",
        "card 4111 1111 1111 1112",  # Luhn-invalid
        "900101-1234567",  # resident number with a bad checksum, no label
        "991332-1234567",  # no 13th month
        "000-12-3456, 666-12-3456, 901-12-3456, 123-00-4567, 123-45-0000",  # impossible SSNs
        "DE00 3704 0044 0532 0130 00",  # IBAN failing mod 97
        "my pin is 12",
        "my password is wrong",
        "password manager, password-protected, reset-password?token=abc",
        "the password is on the fridge; passwords are hard",
        "비밀번호가 뭐였지? 비밀번호 변경했어",
        "계좌이체 했어요",
        # the generalized secret and phone rules keep their guards
        "reset my password to get in",
        "the password policy is strict; Password reset instructions: click the link",
        "I changed my password to something else",
        "order 5551234567, invoice #5551234567, id: 5551234567",
        "it cost $5551234567 or 5551234567 won",
        "the year 2024, 1714557600 seconds, 20240501 and 1,234,567,890",
        "set my pin to 12",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert scan(text) == []


def test_luhn_decides_card_numbers() -> None:
    valid = "4539 1488 0343 6467"
    assert found(f"card {valid}") == [("card_number", valid)]
    for last in "0123456789":
        if last != valid[-1]:
            assert scan(f"card {valid[:-1]}{last}") == []


def test_findings_are_sorted_and_label_wins_over_pattern() -> None:
    text = (
        "password: x9y8z7 · mail a@b.io · account number 4111111111111111 · "
        "010-1234-5678 · SSN 123-45-6789"
    )
    findings = scan(text)
    assert [f.start for f in findings] == sorted(f.start for f in findings)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    # a Luhn-valid number the user called an account number is an account number
    assert [(f.category, f.value) for f in findings] == [
        (C.PASSWORD, "x9y8z7"),
        (C.EMAIL, "a@b.io"),
        (C.ACCOUNT_NUMBER, "4111111111111111"),
        (C.PHONE, "010-1234-5678"),
        (C.SSN, "123-45-6789"),
    ]
    assert findings[2].label == "account number"


def test_a_finding_does_not_print_its_value() -> None:
    (finding,) = scan("my password is hunter2!")
    assert "hunter2" not in repr(finding)
    assert finding.label == "password"


# -- policy -------------------------------------------------------------------------------------


def test_default_policy() -> None:
    assert set(DEFAULT_POLICY) == set(PiiCategory)
    for secret in (C.PASSWORD, C.PIN, C.CVV, C.RESIDENT_REGISTRATION_NUMBER, C.SSN, C.CARD_NUMBER):
        assert DEFAULT_POLICY[secret] == "mask"
    for kept_for_owner in (C.ACCOUNT_NUMBER, C.LOYALTY_NUMBER, C.IBAN, C.EMAIL, C.PHONE):
        assert DEFAULT_POLICY[kept_for_owner] == "vault"
    with pytest.raises(TypeError):
        DEFAULT_POLICY[C.EMAIL] = "keep"  # type: ignore[index]


def test_policy_overrides_and_errors() -> None:
    policy = policy_from({"email": "keep", "password": "vault"})
    assert policy[C.EMAIL] == "keep" and policy[C.PASSWORD] == "vault"
    assert policy[C.SSN] == "mask"
    assert policy_from({}) == dict(DEFAULT_POLICY)
    with pytest.raises(ValueError, match=r"unknown PII category 'passport'.*loyalty_number"):
        policy_from({"passport": "mask"})
    with pytest.raises(ValueError, match=r"'email'.*'mask', 'vault' or 'keep'.*'hide'"):
        policy_from({"email": "hide"})


# -- scrub and restore (with a real vault) -----------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(VAULT_SCHEMA)
    yield conn
    conn.close()


@pytest.fixture
def vault(tmp_path: Path, db: sqlite3.Connection) -> SQLiteVault:
    return SQLiteVault(lambda: db, VaultCipher(load_key(tmp_path, None)))


MISSION = (
    "Help me book a flight to Tokyo next Friday. I prefer window seats and I'm vegetarian… "
    "use my United MileagePlus number 12345678"
)


def test_mission_example_vaults_the_loyalty_number(
    db: sqlite3.Connection, vault: SQLiteVault
) -> None:
    result = scrub(MISSION, DEFAULT_POLICY, vault.putter(None, "mina"))
    assert "12345678" not in result.text
    assert "I prefer window seats and I'm vegetarian" in result.text
    (redaction,) = result.findings
    assert redaction.category == C.LOYALTY_NUMBER and redaction.action == "vault"
    assert redaction.label == "MileagePlus number"
    assert result.text.endswith(f"MileagePlus number {redaction.placeholder}")
    assert redaction.placeholder is not None
    assert PLACEHOLDER.fullmatch(redaction.placeholder)
    assert result.tokens == tokens_in(result.text) == [redaction.token]
    assert restore(result.text, vault.getter(None, "mina")) == MISSION


def test_scrub_applies_each_action(db: sqlite3.Connection, vault: SQLiteVault) -> None:
    text = "pw: hunter2! call 010-1234-5678, mail mina@example.com, routing number 021000021"
    policy = policy_from({"email": "keep"})
    handed: list[tuple[PiiCategory, str]] = []

    def put(category: PiiCategory, value: str) -> str:
        handed.append((category, value))
        return vault.put(None, "mina", category, value)

    result = scrub(text, policy, put)
    assert handed == [(C.PHONE, "010-1234-5678"), (C.ACCOUNT_NUMBER, "021000021")]
    assert "[pii:password]" in result.text and "hunter2" not in result.text
    assert "mina@example.com" in result.text  # kept
    assert [(r.category, r.action) for r in result.findings] == [
        (C.PASSWORD, "mask"),
        (C.PHONE, "vault"),
        (C.EMAIL, "keep"),
        (C.ACCOUNT_NUMBER, "vault"),
    ]
    for raw in ("hunter2", "010-1234-5678", "021000021"):
        assert raw not in repr(result.findings)
    restored = restore(result.text, vault.getter(None, "mina"))
    assert restored == text.replace("hunter2!", "[pii:password]")
    # scrubbing scrubbed text changes nothing and stores nothing new
    again = scrub(result.text, policy, put)
    assert again.text == result.text and len(handed) == 2


def test_restore_is_for_the_owner_only(db: sqlite3.Connection, vault: SQLiteVault) -> None:
    text = scrub(
        "my checking account number is 123456789", DEFAULT_POLICY, vault.putter(None, "mina")
    )
    assert restore(text.text, vault.getter(None, "mina")).endswith("123456789")
    assert restore(text.text, vault.getter(None, "eve")) == text.text
    (token,) = text.tokens
    assert vault.get(None, "eve", token) is None
    assert vault.get(None, "mina", "[pii:x]") is None  # not a token at all
    assert restore("unknown [pii:phone:v0000000000] stays", vault.getter(None, "mina")).endswith(
        "[pii:phone:v0000000000] stays"
    )


def test_apply_policy_rejects_foreign_findings_and_bad_tokens() -> None:
    text = "PIN 4321"
    with pytest.raises(ValueError, match="non-overlapping spans"):
        apply_policy("PIN 9999", scan(text), DEFAULT_POLICY, lambda c, v: "v0123456789")
    email = [Finding(C.EMAIL, 0, 6, "a@b.io")]
    with pytest.raises(ValueError, match="token"):
        apply_policy("a@b.io", email, DEFAULT_POLICY, lambda c, v: "not-a-token")


# -- vault storage ------------------------------------------------------------------------------


def test_raw_values_never_reach_the_database_file(
    tmp_path: Path, db: sqlite3.Connection, vault: SQLiteVault
) -> None:
    secret = "MP-98765432-zq"
    token = vault.put(None, "mina", C.LOYALTY_NUMBER, secret)
    assert vault.get(None, "mina", token) == secret
    files = [tmp_path / "store.db", tmp_path / "store.db-wal"]
    assert files[1].exists()  # the write is in the WAL: check it too
    raw = b"".join(p.read_bytes() for p in files)
    assert secret.encode() not in raw and b"98765432" not in raw
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert secret.encode() not in (tmp_path / "store.db").read_bytes()


def test_put_joins_the_callers_transaction(db: sqlite3.Connection, vault: SQLiteVault) -> None:
    db.execute("BEGIN IMMEDIATE")
    token = vault.put(None, "mina", C.PHONE, "010-1234-5678")
    db.execute("ROLLBACK")
    assert vault.get(None, "mina", token) is None
    db.execute("BEGIN IMMEDIATE")
    token = vault.put(None, "mina", C.PHONE, "010-1234-5678")
    db.execute("COMMIT")
    assert vault.get(None, "mina", token) == "010-1234-5678"


def test_tokens_are_idempotent_per_user_and_category(
    db: sqlite3.Connection, vault: SQLiteVault
) -> None:
    first = vault.put(None, "mina", C.ACCOUNT_NUMBER, "123456789")
    assert vault.put(None, "mina", "account_number", "123456789") == first
    assert vault.put(None, "eve", C.ACCOUNT_NUMBER, "123456789") != first
    assert vault.put(None, "mina", C.LOYALTY_NUMBER, "123456789") != first
    assert db.execute("SELECT count(*) FROM vault").fetchone()[0] == 3
    # re-adding the same message yields the same scrubbed text
    once = scrub(MISSION, DEFAULT_POLICY, vault.putter(None, "mina")).text
    assert scrub(MISSION, DEFAULT_POLICY, vault.putter(None, "mina")).text == once


def test_delete_and_forget(db: sqlite3.Connection, vault: SQLiteVault) -> None:
    a = vault.put(None, "mina", C.PHONE, "010-1111-2222")
    b = vault.put(None, "mina", C.EMAIL, "mina@example.com")
    c = vault.put(None, "eve", C.PHONE, "010-3333-4444")
    assert vault.delete_tokens(None, "mina", [a, c]) == 1  # eve's token is not mina's to delete
    assert vault.get(None, "mina", a) is None and vault.get(None, "eve", c) == "010-3333-4444"
    assert [(e.token, e.category, e.value) for e in vault.entries(None, "mina")] == [
        (b, C.EMAIL, "mina@example.com")
    ]
    assert vault.forget_user(None, "mina") == 1
    assert vault.get(None, "mina", b) is None and vault.entries(None, "mina") == []
    assert vault.get(None, "eve", c) == "010-3333-4444"


def test_a_row_moved_to_another_user_is_refused(db: sqlite3.Connection, vault: SQLiteVault) -> None:
    token = vault.put(None, "mina", C.IBAN, "GB82WEST12345698765432")
    db.execute("UPDATE vault SET user_id = 'eve' WHERE token = ?", (token,))
    with pytest.raises(VaultError, match="does not belong"):
        vault.get(None, "eve", token)


# -- keys ---------------------------------------------------------------------------------------


def test_key_file_is_private_and_reused(tmp_path: Path) -> None:
    store = tmp_path / "new-store"
    key = load_key(store, None)
    path = store / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(store, None) == key
    Fernet(key)  # a usable key
    assert [p.name for p in store.iterdir()] == [KEY_FILE]  # no temp files left behind


def test_concurrent_first_opens_agree_on_one_key(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: load_key(tmp_path / "s", None), range(16)))
    assert len(keys) == 1


def test_configured_key_wins(tmp_path: Path) -> None:
    configured = Fernet.generate_key().decode()
    assert load_key(tmp_path, configured) == configured.encode()
    assert not (tmp_path / KEY_FILE).exists()
    assert load_key(tmp_path, "  ") != configured.encode()  # blank means unset: key file
    with pytest.raises(VaultKeyError, match="MADELEINE_VAULT_KEY is not a valid vault key"):
        load_key(tmp_path, "not-a-key")


def test_malformed_key_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_text("garbage\n")
    with pytest.raises(VaultKeyError, match=r"vault\.key is not a valid vault key"):
        load_key(tmp_path, None)


def test_wrong_key_raises_instead_of_pretending_the_value_is_gone(
    db: sqlite3.Connection, vault: SQLiteVault
) -> None:
    token = vault.put(None, "mina", C.ACCOUNT_NUMBER, "123456789")
    other = SQLiteVault(lambda: db, VaultCipher(Fernet.generate_key()))
    with pytest.raises(VaultKeyError, match="not the one these values were stored with"):
        other.get(None, "mina", token)
    with pytest.raises(VaultKeyError):
        other.check_key()
    vault.check_key()
    # a wrong key also misses the dedupe digest, so it cannot even confirm a guessed value
    assert other.put(None, "mina", C.ACCOUNT_NUMBER, "123456789") != token


@pytest.mark.parametrize(
    "text",
    [
        "this is my password",
        "it was my old password",
        "boarding pass 12B",
        "I will pass the exam",
        "The login page / pass through",
    ],
)
def test_phrases_around_a_password_that_state_none(text: str) -> None:
    assert [f for f in scan(text) if f.category in (C.PASSWORD, C.PIN)] == []
