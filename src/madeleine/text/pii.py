"""PII detection and policy: personal data is found and replaced before anything is stored,
indexed, logged or sent to an LLM.

Placeholders are a contract shared with the extractors, the store and the read path: a
vaulted value becomes ``[pii:<category>:<token>]`` (token ``v`` + 10 lowercase base32/hex
characters) and can be restored for its owner; a masked value becomes ``[pii:<category>]``
and is gone for good.

Detection favours evidence over guesswork: unlabelled numbers are flagged only when their
structure proves what they are (Luhn, resident-number checksum, IBAN mod 97, phone and SSN
layouts); account, loyalty, password, PIN and CVV values need a label ("routing number",
"비밀번호는", "CVV"), so dates, prices, years and order amounts stay untouched.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal, get_args


class PiiCategory(StrEnum):
    EMAIL = "email"
    PHONE = "phone"
    CARD_NUMBER = "card_number"
    RESIDENT_REGISTRATION_NUMBER = "resident_registration_number"
    SSN = "ssn"
    IBAN = "iban"
    ACCOUNT_NUMBER = "account_number"
    LOYALTY_NUMBER = "loyalty_number"
    PASSWORD = "password"
    PIN = "pin"
    CVV = "cvv"


Action = Literal["mask", "vault", "keep"]
ACTIONS: tuple[Action, ...] = get_args(Action)

# Secrets are useless to recall and dangerous to keep: masked. Identifiers the owner may ask
# for again ("what was my checking account number?") are vaulted.
DEFAULT_POLICY: Mapping[PiiCategory, Action] = MappingProxyType(
    {
        PiiCategory.PASSWORD: "mask",
        PiiCategory.PIN: "mask",
        PiiCategory.CVV: "mask",
        PiiCategory.RESIDENT_REGISTRATION_NUMBER: "mask",
        PiiCategory.SSN: "mask",
        PiiCategory.CARD_NUMBER: "mask",
        PiiCategory.ACCOUNT_NUMBER: "vault",
        PiiCategory.LOYALTY_NUMBER: "vault",
        PiiCategory.IBAN: "vault",
        PiiCategory.EMAIL: "vault",
        PiiCategory.PHONE: "vault",
    }
)

TOKEN_PATTERN = r"v[a-z0-9]{10}"
TOKEN = re.compile(TOKEN_PATTERN)
_CATEGORY_ALTERNATION = "|".join(sorted((c.value for c in PiiCategory), key=len, reverse=True))
PLACEHOLDER = re.compile(
    rf"\[pii:(?P<category>{_CATEGORY_ALTERNATION})(?::(?P<token>{TOKEN_PATTERN}))?\]"
)


def policy_from(overrides: Mapping[str, str]) -> dict[PiiCategory, Action]:
    """The default policy with a user's overrides (e.g. ``MADELEINE_PII_POLICY``), validated
    here so a typo fails at start-up instead of silently keeping a secret."""
    policy: dict[PiiCategory, Action] = dict(DEFAULT_POLICY)
    valid = ", ".join(c.value for c in PiiCategory)
    for name, action in overrides.items():
        key = str(name).strip().lower()
        if key not in {c.value for c in PiiCategory}:
            raise ValueError(f"unknown PII category {name!r}; valid categories: {valid}")
        normalized = str(action).strip().lower()
        if normalized not in ACTIONS:
            raise ValueError(
                f"PII action for {name!r} must be 'mask', 'vault' or 'keep', got {action!r}"
            )
        policy[PiiCategory(key)] = normalized
    return policy


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected value; ``value`` is the raw text and is kept out of ``repr`` so a logged
    finding does not leak it. ``label`` is the phrase that named it ("MileagePlus number")."""

    category: PiiCategory
    start: int
    end: int
    value: str = field(repr=False)
    label: str | None = None


@dataclass(frozen=True, slots=True)
class Redaction:
    """What happened to one finding, safe to log: never the raw value."""

    category: PiiCategory
    action: Action
    placeholder: str | None  # None when the value was kept
    label: str | None = None

    @property
    def token(self) -> str | None:
        match = PLACEHOLDER.fullmatch(self.placeholder or "")
        return match.group("token") if match else None


@dataclass(frozen=True, slots=True)
class Scrubbed:
    text: str
    findings: tuple[Redaction, ...] = ()

    @property
    def tokens(self) -> list[str]:
        """Vault tokens this text refers to (to delete them with the text)."""
        return [t for r in self.findings if (t := r.token) is not None]


# -- shared pieces ------------------------------------------------------------------------------

_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
# A number must not continue a longer token on either side; Hangul may touch it (particles).
_START = r"(?<![0-9A-Za-z.\-+/])"
_END = r"(?![0-9]|[-.][0-9])"
# Between a label and its value: a particle, "is", ":", "=", "#".
_GAP = (
    r"(?:\s*(?:는|은|이|가|을|를|도)(?![가-힣]))?"
    r"(?:\s*(?:(?:is|was|are|will\s+be)\b|[:：=#]|[-–](?=\s)))*\s*"
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _iban_ok(compact: str) -> bool:
    if not (15 <= len(compact) <= 34 and compact.isascii() and compact.isalnum()):
        return False
    if not (compact[:2].isalpha() and compact[2:4].isdigit()):
        return False
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(numeric) % 97 == 1


def _rrn_date_ok(digits: str) -> bool:
    # The 7th digit encodes the century (and sex, and foreign residents): 1 2 5 6 → 1900s.
    base = 1900 if digits[6] in "1256" else 2000
    try:
        date(base + int(digits[:2]), int(digits[2:4]), int(digits[4:6]))
    except ValueError:
        return False
    return True


def _rrn_checksum_ok(digits: str) -> bool:
    weights = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
    total = sum(int(d) * w for d, w in zip(digits[:12], weights, strict=True))
    return (11 - total % 11) % 10 == int(digits[12])


def _ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in {"000", "666"} and area[0] != "9" and group != "00" and serial != "0000"


# -- detectors (each yields candidates; scan() resolves overlaps) --------------------------------

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
    r"\.[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
)


def _emails(text: str) -> Iterator[Finding]:
    for m in _EMAIL.finditer(text):
        yield Finding(PiiCategory.EMAIL, m.start(), m.end(), m.group())


_KR_PREFIX = r"(?:\+82[ \-]?(?:\(0\))?|0)"
_PHONES = (
    # Korean mobile: separators optional (01012345678 is how people type it)
    re.compile(_START + _KR_PREFIX + r"1[016789](?P<s>[ .\-]?)\d{3,4}(?P=s)\d{4}" + _END),
    # Korean landline (Seoul 02, regions 031–064, 070): separators required
    re.compile(_START + _KR_PREFIX + r"(?:2|[3-6][1-5]|70)(?P<s>[ .\-])\d{3,4}(?P=s)\d{4}" + _END),
    re.compile(_START + r"\(0(?:2|[3-6][1-5]|70)\)\s?\d{3,4}-\d{4}" + _END),
    # North American numbers: separators required, area code 2–9
    re.compile(_START + r"(?:\+?1[ .\-]?)?[2-9]\d{2}(?P<s>[ .\-])\d{3}(?P=s)\d{4}" + _END),
    re.compile(r"(?<![0-9A-Za-z])(?:\+?1[ .\-]?)?\([2-9]\d{2}\)[ .\-]?\d{3}[ .\-]\d{4}" + _END),
)


def _phones(text: str) -> Iterator[Finding]:
    for pattern in _PHONES:
        for m in pattern.finditer(text):
            yield Finding(PiiCategory.PHONE, m.start(), m.end(), m.group())


# Phone numbers by digit count and grouping rather than by one layout each: a North American
# number typed without separators or with mixed ones (5551234567, 555 1234567), and any number
# in international form (+44 20 7946 0958). Guards: a number named as something else (order,
# invoice, id, #...) or priced is no phone; years, dates and amounts never have this shape.
_NANP_LOOSE = re.compile(_START + r"(?:\+?1[ .\-]?)?[2-9]\d{2}[ .\-]?\d{3}[ .\-]?\d{4}" + _END)
_INTERNATIONAL = re.compile(r"(?<![0-9A-Za-z+])\+[1-9]\d{0,2}(?:[ .\-]?\(?\d{1,5}\)?){2,5}" + _END)
_PHONE_LABEL = re.compile(
    r"(?:\b(?:phone|cell(?:phone)?|mobile|tel(?:ephone)?|fax|whats\s?app|landline)\b"
    r"(?:\s*(?:number|num|no\.?|#))?"
    r"|\b(?:call|text|ring|reach|contact)\s+(?:me|us|him|her|them)\s+(?:at|on)\b"
    r"|전화\s*번호|휴대\s*(?:폰|전화)|핸드폰|연락처)",
    re.IGNORECASE,
)
_PHONE_VALUE = re.compile(r"\+?\(?\d[\d .\-()]{6,20}\d" + _END)
# What a number is named as, just before it: "order 5551234567" is no phone, and "checking
# account (4429853327)" or "account is 8829447651" is an account number.
_NAMED_AS = r"(?:\s*(?:number|num|no\.?|#|id))?(?:\s*(?:is|was|[:=#(]))*\s*$"
_NOT_A_PHONE_BEFORE = re.compile(
    r"(?:\b(?:order|invoice|ticket|tracking|ref(?:erence)?|confirmation|booking|transaction"
    r"|serial|isbn|id|card|policy|case|claim|model|part|sku|version|build)"
    rf"{_NAMED_AS}|#\s*$|[$€£¥₩]\s*$|(?:주문|송장|예약)\s*번호\s*(?:는|은|:)?\s*$)",
    re.IGNORECASE,
)
_ACCOUNT_BEFORE = re.compile(
    rf"\b(?:account|acct|routing)\b{_NAMED_AS}|계좌\s*(?:번호)?\s*(?:는|은|:)?\s*$",
    re.IGNORECASE,
)
_NOT_A_PHONE_AFTER = re.compile(
    r"^\s*(?:dollars?|usd|eur|euros?|won|krw|yen|원|달러|points?|miles?|views?|bytes?)\b",
    re.IGNORECASE,
)


def _digits(value: str) -> int:
    return sum(ch.isdigit() for ch in value)


def _phone_or_named(text: str, start: int, end: int) -> PiiCategory | None:
    """PHONE for a number of phone shape, ACCOUNT_NUMBER when named as an account, None
    when named as something else (an order, a price)."""
    before = text[max(0, start - 32) : start]
    if _ACCOUNT_BEFORE.search(before):
        return PiiCategory.ACCOUNT_NUMBER
    if _NOT_A_PHONE_BEFORE.search(before) or _NOT_A_PHONE_AFTER.match(text[end : end + 12]):
        return None
    return PiiCategory.PHONE


def _loose_phones(text: str) -> Iterator[Finding]:
    for m in _NANP_LOOSE.finditer(text):
        if (category := _phone_or_named(text, m.start(), m.end())) is not None:
            yield Finding(category, m.start(), m.end(), m.group())
    for m in _INTERNATIONAL.finditer(text):
        if not 8 <= _digits(m.group()) <= 15:
            continue
        if (category := _phone_or_named(text, m.start(), m.end())) is not None:
            yield Finding(category, m.start(), m.end(), m.group())


def _labelled_phones(text: str) -> Iterator[Finding]:
    """Any grouping of 10 to 15 digits right after a phone word ("mobile: 555 12 34 567")."""
    for label in _PHONE_LABEL.finditer(text):
        gap = re.match(_GAP, text[label.end() : label.end() + 24])
        at = label.end() + (gap.end() if gap else 0)
        m = _PHONE_VALUE.match(text, at)
        if m is None:
            continue
        value = m.group().rstrip(" .-(")
        if value.count("(") != value.count(")") or not 10 <= _digits(value) <= 15:
            continue
        yield Finding(PiiCategory.PHONE, m.start(), m.start() + len(value), value, label.group())


_CARD = re.compile(_START + r"(?:\d[ \-]?){12,18}\d" + _END)
# Issuer prefixes in use (Visa, Mastercard 51–55/22–27, Amex/Diners/JCB 3, Discover/UnionPay
# 6): rules out compact timestamps (2024…) and other long digit runs that pass Luhn by chance.
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3|6")


def _cards(text: str) -> Iterator[Finding]:
    for m in _CARD.finditer(text):
        groups = re.split(r"[ \-]", m.group())
        digits = "".join(groups)
        if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
            continue
        if any(len(g) < 3 for g in groups[:-1]) or not _CARD_PREFIX.match(digits):
            continue
        if _luhn_ok(digits):
            yield Finding(PiiCategory.CARD_NUMBER, m.start(), m.end(), m.group())


_RRN = re.compile(_START + r"\d{6}-?[1-8]\d{6}" + _END)
_RRN_LABELLED = re.compile(
    r"(?P<label>주민\s*(?:등록)?\s*번호|resident\s+registration\s+(?:number|no\.?)|\bRRN\b)"
    + _GAP
    + r"(?P<num>\d{6}-?[1-8]\d{6})"
    + _END,
    re.IGNORECASE,
)


def _resident_numbers(text: str) -> Iterator[Finding]:
    for m in _RRN.finditer(text):
        digits = m.group().replace("-", "")
        if _rrn_date_ok(digits) and _rrn_checksum_ok(digits):
            yield Finding(PiiCategory.RESIDENT_REGISTRATION_NUMBER, m.start(), m.end(), m.group())


def _labelled_resident_numbers(text: str) -> Iterator[Finding]:
    # Numbers issued since October 2020 carry no checksum: a label plus a valid date suffices.
    for m in _RRN_LABELLED.finditer(text):
        if _rrn_date_ok(m.group("num").replace("-", "")):
            yield Finding(
                PiiCategory.RESIDENT_REGISTRATION_NUMBER,
                m.start("num"),
                m.end("num"),
                m.group("num"),
                m.group("label"),
            )


_SSN = re.compile(_START + r"(\d{3})-(\d{2})-(\d{4})" + _END)
_SSN_LABELLED = re.compile(
    r"(?P<label>\bSSN\b|social\s+security\s+(?:number|no\.?|#))"
    + _GAP
    + r"(?P<num>(\d{3})[ \-]?(\d{2})[ \-]?(\d{4}))"
    + _END,
    re.IGNORECASE,
)


def _ssns(text: str) -> Iterator[Finding]:
    for m in _SSN.finditer(text):
        if _ssn_ok(m.group(1), m.group(2), m.group(3)):
            yield Finding(PiiCategory.SSN, m.start(), m.end(), m.group())


def _labelled_ssns(text: str) -> Iterator[Finding]:
    for m in _SSN_LABELLED.finditer(text):
        if _ssn_ok(m.group(3), m.group(4), m.group(5)):
            num = m.group("num")
            yield Finding(PiiCategory.SSN, m.start("num"), m.end("num"), num, m.group("label"))


_IBAN = re.compile(r"(?<![0-9A-Za-z])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}")


def _ibans(text: str) -> Iterator[Finding]:
    for m in _IBAN.finditer(text):
        candidate = m.group()
        # The greedy match may run into a following uppercase word: try the longest valid prefix
        # that ends where the surrounding text allows a token to end.
        for cut in range(len(candidate), 14, -1):
            nxt = text[m.start() + cut : m.start() + cut + 1]
            if candidate[cut - 1] == " " or (nxt and re.match(r"[0-9A-Za-z]", nxt)):
                continue
            if _iban_ok(candidate[:cut].replace(" ", "")):
                yield Finding(PiiCategory.IBAN, m.start(), m.start() + cut, candidate[:cut])
                break


_ACCOUNT_LABEL = (
    r"(?:(?:checking|savings|bank|current|deposit|brokerage)\s+)?account\s*"
    r"(?:number|num|no\.?|#)"
    r"|(?:checking|savings|bank)\s+account"
    r"|\bacct\.?\s*(?:number|no\.?|#)?"
    r"|(?:ABA\s+)?routing\s*(?:number|no\.?|#)"
    r"|sort\s+code"
    r"|\bBSB(?:\s+number)?"
    r"|(?:입금\s*)?계좌\s*번호|계좌|통장\s*번호"
)
_PROGRAMMES = (
    r"MileagePlus|Mileage\s+Plus|SkyMiles|AAdvantage|SKYPASS|Asiana\s+Club|Executive\s+Club"
    r"|Flying\s+Blue|KrisFlyer|Miles\s*&\s*More|Avios|Bonvoy|Hilton\s+Honors|Aeroplan"
    r"|World\s+of\s+Hyatt|Rapid\s+Rewards|TrueBlue|Clubcard"
)
_LOYALTY_LABEL = (
    rf"(?:{_PROGRAMMES})(?:\s+(?:membership|member|account))?(?:\s*(?:number|num|no\.?|#|ID))?"
    r"|(?:frequent[\s\-]+fl(?:y|i)er|loyalty|rewards?|member(?:ship)?|mileage|points?)"
    r"(?:\s+(?:program(?:me)?|card|club|account))?\s*(?:number|num|no\.?|#|ID)"
    r"|(?:(?:마일리지|멤버십|포인트\s*카드|스카이패스|아시아나\s*클럽)\s*)?회원\s*번호"
    r"|(?:마일리지|멤버십|멤버쉽|포인트\s*카드|스카이패스|적립)\s*번호"
)
# The number itself: digits in groups joined by dashes (or spaces between 4-digit groups), an
# optional short uppercase prefix (BA12345678), at least four digits in all.
_LABELLED_NUMBER = (
    r"(?P<num>(?-i:[A-Z]{1,3})[\- ]?\d{2,}(?:-\d{1,})*"
    r"|\d{2,}(?:-\d{1,})+|\d{4}(?: \d{4})+|\d{4,})(?![0-9A-Za-z]|-[0-9])"
)
_ACCOUNT = re.compile(rf"(?P<label>{_ACCOUNT_LABEL}){_GAP}{_LABELLED_NUMBER}", re.IGNORECASE)
_LOYALTY = re.compile(
    rf"(?<![A-Za-z])(?P<label>{_LOYALTY_LABEL}){_GAP}{_LABELLED_NUMBER}", re.IGNORECASE
)


def _labelled_numbers(text: str) -> Iterator[Finding]:
    for pattern, category in (
        (_ACCOUNT, PiiCategory.ACCOUNT_NUMBER),
        (_LOYALTY, PiiCategory.LOYALTY_NUMBER),
    ):
        for m in pattern.finditer(text):
            num = m.group("num")
            if sum(ch.isdigit() for ch in num) < 4:
                continue
            kind = PiiCategory.IBAN if _iban_ok(num.replace(" ", "").upper()) else category
            label = re.sub(r"\s+", " ", m.group("label").strip())
            yield Finding(kind, m.start("num"), m.end("num"), num, label)


_PASSWORD_LABEL = r"\b(?:pass(?:word|code|phrase)|passwd|pwd|pw)\b|비밀\s*번호|비번|패스워드|암호"
_PIN_LABEL = r"\bPIN(?:\s*(?:number|code|no\.?|#|번호))?(?![A-Za-z])|핀\s*(?:번호|코드)"
_CVV_LABEL = (
    r"\b(?:CVV2?|CVC2?|CVN|CSC|security\s+code|card\s+verification\s+(?:value|code))"
    r"(?![A-Za-z])(?:\s*번호)?|보안\s*코드"
)
# A non-empty gap: "password?token", "password-protected" or "비밀번호변경" state no password.
_SECRET_GAP = rf"(?=[\s:：=는은이가을를도]){_GAP}"
_PASSWORD = re.compile(
    rf"(?P<label>{_PASSWORD_LABEL})(?P<gap>{_SECRET_GAP})"
    r"(?:\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|“(?P<cq>[^”\n]{1,128})”"
    r"|(?P<raw>\S{1,128}))",
    re.IGNORECASE,
)
_PIN = re.compile(rf"(?P<label>{_PIN_LABEL}){_SECRET_GAP}(?P<raw>\d{{4,12}})(?![0-9])", re.I)
# The value before its label: "hunter2! is my password", "4321 is my PIN". The phrase is
# evidence enough, so any word but a pronoun or filler counts (starts at a word only: linear).
_IS_MY = r"\s+(?:is|was)\s+(?:my|the|our|his|her|their)\s+(?:new\s+|old\s+|current\s+)?"
_PASSWORD_BEFORE = re.compile(
    r"(?<!\S)(?:\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|(?P<raw>[^\s\"']{1,128}))"
    rf"{_IS_MY}(?P<label>pass(?:word|code|phrase)|passwd|pwd)\b",
    re.IGNORECASE,
)
_PIN_BEFORE = re.compile(
    rf"(?<![0-9])(?P<raw>\d{{4,12}}){_IS_MY}(?P<label>PIN(?:\s*(?:number|code))?)(?![A-Za-z])",
    re.IGNORECASE,
)
# A login written as a pair: "login mina / pass hunter2!", "user: mina, pw: hunter2!".
_CREDENTIALS = re.compile(
    r"(?<![\w])(?:log\s?in|user(?:\s?name)?|id)\s*[:=]?\s*[^\s/,;|]{1,64}\s*[/,;|]\s*"
    r"(?P<label>pass(?:word)?|pw|pwd)(?P<gap>\s*[:=]?\s*)(?P<raw>\S{1,128})",
    re.IGNORECASE,
)
_CVV = re.compile(rf"(?P<label>{_CVV_LABEL}){_SECRET_GAP}(?P<raw>\d{{3,4}})(?![0-9])", re.I)
# Words that follow "my password is" without being the password.
_NOT_A_PASSWORD = frozenset(
    """a an the not no too very so still now also just really probably same wrong incorrect
    correct right expired changed reset required invalid weak strong long short missing lost
    forgotten saved stored set case sensitive different secure safe easy hard my your his her
    their our it this that in on at for with of and or but what something nothing there here
    written below above attached updated locked blocked being been be going getting isn't
    wasn't doesn't didn't won't can't""".split()
)
# With only a space after an English label ("password manager"), a bare word is not a secret:
# the token must look like one.
_SECRETISH = re.compile(r"[0-9!@#$%^&*_+=~|\\/<>{}\[\]-]")
_TRAILING = ".,;:?)]}>\"'”’"
_LEADING = "([{<\"'“‘"


def _secret_span(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """Where the secret itself lies: quotes and sentence punctuation are trimmed, a Korean
    particle glued to it ("qwer1234예요") is cut off, and common words are not secrets."""
    for group in ("dq", "sq", "cq"):
        if group in m.re.groupindex and m.group(group) is not None:
            return m.start(group), m.end(group)
    start, end = m.start("raw"), m.end("raw")
    hangul = _HANGUL.search(text, start, end)
    if hangul:
        end = hangul.start()
    while start < end and text[start] in _LEADING:
        start += 1
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    secret = text[start:end]
    if start >= end or secret.lower() in _NOT_A_PASSWORD:
        return None
    bare_gap = "gap" in m.re.groupindex and not m.group("gap").strip()
    if bare_gap and m.group("label").isascii() and not _SECRETISH.search(secret):
        return None
    return start, end


# Secrets stated in a phrase rather than right after their label: "I changed my password to
# X", "Password for the bank: X", "my wifi password is now X", "the API key (staging) = X",
# "비밀번호를 X로 바꿨어". A secret word, then within a short qualifier ("for the bank",
# "(staging)", "on Netflix") a connector (is / was / to / as / : / =), then the value. Weak
# connectors ("to", "as") need a value that looks like a secret, or a verb of setting before
# the label ("changed my password to sunshine"), so "reset my password to get in" is no secret.
_KEY_LABEL = (
    r"\b(?:api[\s_\-]?key|secret[\s_\-]?key|access[\s_\-]?key|private[\s_\-]?key"
    r"|(?:access|auth|bearer|api|refresh)[\s_\-]?token|client[\s_\-]?secret)\b"
    r"|API\s*키|비밀\s*키|시크릿\s*키"
)
_PHRASED_LABEL = re.compile(
    rf"(?P<password>{_PASSWORD_LABEL}|\bpasswords\b)|(?P<pin>{_PIN_LABEL})|(?P<key>{_KEY_LABEL})",
    re.IGNORECASE,
)
_QUALIFIER = re.compile(
    r"\s*\([^()\n]{1,40}\)"
    r"|\s+(?:for|on|of|at|to|with|from|in)\s+(?:[^\s:=.,;!?()\"']+\s+){0,3}[^\s:=.,;!?()\"']+"
    r"|\s*[^\s:=.,;!?()\"'a-zA-Z]{1,12}"  # a Korean word or two ("은행 비밀번호 (앱)")
)
_CONNECTOR = re.compile(
    r"\s*(?P<strong>[:：=])\s*"
    r"|\s+(?P<word>is|was|are|were|will\s+be|becomes?|became)"
    r"(?:\s+(?:now|still|just|simply|actually))?\s+"
    r"|\s+(?P<weak>to|as|into)\s+",
    re.IGNORECASE,
)
_SETTING_VERB = re.compile(
    r"\b(?:chang(?:e|ed|ing)|set(?:ting)?|reset(?:ting)?|updat(?:e|ed|ing)|switch(?:ed|ing)?"
    r"|made|make|rotat(?:e|ed|ing)|renew(?:ed)?)\b[^.!?\n]{0,30}$",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(
    r"\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|“(?P<cq>[^”\n]{1,128})”|(?P<raw>\S{1,128})"
)
_KO_SET_TO = re.compile(
    rf"(?P<label>{_PASSWORD_LABEL}|{_PIN_LABEL})\s*(?:을|를|은|는)?\s*"
    r"(?P<raw>[!-~]{2,64}?)(?:으로|로)\s*(?:바꿨|바꿈|바꾸|바꿔|변경|설정|정했|했|해)",
    re.IGNORECASE,
)
# Words that follow a connector without being a secret ("reset my password to get in").
_NOT_A_SECRET = _NOT_A_PASSWORD | frozenset(
    """get log login access sign enter use make do see be have open unlock change reset keep
    remember protect secure everyone anyone someone nobody me you him them us something
    anything everything nothing same default blank empty""".split()
)


def _phrased_value(text: str, label: re.Match[str]) -> tuple[int, int] | None:
    """The value a secret word leads to, or None (first connector whose value passes)."""
    end = label.end()
    window = text[end : end + 96]
    stop = re.search(r"[\n]|[.!?](?:\s|$)", window)
    window = window[: stop.start() + 1] if stop else window
    for c in _CONNECTOR.finditer(window):
        between = window[: c.start()]
        if between and not _QUALIFIER.fullmatch(between):
            continue
        v = _SECRET_VALUE.match(text, end + c.end())
        if v is None:
            continue
        quoted = v.group("raw") is None
        span = _secret_span(text, v)
        if span is None:
            continue
        secret = text[span[0] : span[1]]
        if not quoted and secret.lower() in _NOT_A_SECRET:
            continue
        looks = quoted or bool(_SECRETISH.search(secret))
        if label.group("pin") and not re.fullmatch(r"\d{4,12}", secret):
            continue
        if label.group("key") and not looks:
            continue
        setting = _SETTING_VERB.search(text[max(0, label.start() - 40) : label.start()])
        if c.group("weak") and not looks and not setting:
            continue
        if (c.group("word") or c.group("weak")) and between and not looks:
            continue  # "the password policy is strict": a qualifier and a plain word
        return span
    return None


def _phrased_secrets(text: str) -> Iterator[Finding]:
    for label in _PHRASED_LABEL.finditer(text):
        span = _phrased_value(text, label)
        if span is not None:
            category = PiiCategory.PIN if label.group("pin") else PiiCategory.PASSWORD
            name = re.sub(r"\s+", " ", label.group().strip())
            yield Finding(category, span[0], span[1], text[span[0] : span[1]], name)
    for m in _KO_SET_TO.finditer(text):
        span = _secret_span(text, m)
        if span is not None:
            said = re.sub(r"\s+", " ", m.group("label").strip())
            pin = re.match(_PIN_LABEL, said, re.IGNORECASE)
            category = PiiCategory.PIN if pin else PiiCategory.PASSWORD
            yield Finding(category, span[0], span[1], text[span[0] : span[1]], said)


def _secrets(text: str) -> Iterator[Finding]:
    for pattern, category in (
        (_PASSWORD, PiiCategory.PASSWORD),
        (_PASSWORD_BEFORE, PiiCategory.PASSWORD),
        (_CREDENTIALS, PiiCategory.PASSWORD),
        (_PIN, PiiCategory.PIN),
        (_PIN_BEFORE, PiiCategory.PIN),
        (_CVV, PiiCategory.CVV),
    ):
        for m in pattern.finditer(text):
            span = _secret_span(text, m)
            if span is not None:
                label = re.sub(r"\s+", " ", m.group("label").strip())
                yield Finding(category, span[0], span[1], text[span[0] : span[1]], label)


# Strongest evidence first: what the user named wins over what a pattern suggests, and a
# checksum beats a layout. Within one rank the longer span wins.
_DETECTORS: tuple[Callable[[str], Iterable[Finding]], ...] = (
    _secrets,
    _phrased_secrets,
    _labelled_resident_numbers,
    _labelled_ssns,
    _labelled_numbers,
    _emails,
    _ibans,
    _resident_numbers,
    _ssns,
    _cards,
    _phones,
    _labelled_phones,
    _loose_phones,
)


def scan(text: str) -> list[Finding]:
    """Every PII value in ``text``, sorted and non-overlapping; existing placeholders are
    left alone so scrubbing twice changes nothing."""
    candidates = [(rank, f) for rank, detect in enumerate(_DETECTORS) for f in detect(text)]
    candidates.sort(key=lambda c: (c[0], c[1].start - c[1].end, c[1].start))
    starts: list[int] = []
    ends: list[int] = []
    for m in PLACEHOLDER.finditer(text):
        _claim(starts, ends, m.start(), m.end())
    chosen = [f for _, f in candidates if _claim(starts, ends, f.start, f.end)]
    return sorted(chosen, key=lambda f: f.start)


def _claim(starts: list[int], ends: list[int], start: int, end: int) -> bool:
    """Reserve [start, end) among disjoint sorted spans unless it overlaps one."""
    i = bisect.bisect_left(starts, start)
    if i > 0 and ends[i - 1] > start:
        return False
    if i < len(starts) and starts[i] < end:
        return False
    starts.insert(i, start)
    ends.insert(i, end)
    return True


def apply_policy(
    text: str,
    findings: Iterable[Finding],
    policy: Mapping[PiiCategory, Action],
    vault_put: Callable[[PiiCategory, str], str],
) -> Scrubbed:
    """Replace each finding by its placeholder; only ``vault_put`` ever sees a raw value.
    Categories missing from ``policy`` follow ``DEFAULT_POLICY``."""
    parts: list[str] = []
    redactions: list[Redaction] = []
    pos = 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < pos or text[f.start : f.end] != f.value:
            raise ValueError("findings must be non-overlapping spans of this text (use scan())")
        action = policy.get(f.category, DEFAULT_POLICY[f.category])
        if action == "keep":
            redactions.append(Redaction(f.category, "keep", None, f.label))
            continue
        if action == "vault":
            token = vault_put(f.category, f.value)
            if not TOKEN.fullmatch(token):
                raise ValueError(f"vault_put must return a token like 'v3k9q2m7xa', got {token!r}")
            placeholder = f"[pii:{f.category.value}:{token}]"
        else:
            placeholder = f"[pii:{f.category.value}]"
        parts += (text[pos : f.start], placeholder)
        pos = f.end
        redactions.append(Redaction(f.category, action, placeholder, f.label))
    parts.append(text[pos:])
    return Scrubbed("".join(parts), tuple(redactions))


def scrub(
    text: str,
    policy: Mapping[PiiCategory, Action],
    vault_put: Callable[[PiiCategory, str], str],
) -> Scrubbed:
    return apply_policy(text, scan(text), policy, vault_put)


def restore(text: str, vault_get: Callable[[str], str | None]) -> str:
    """Put vaulted values back for their owner (``vault_get`` is bound to one user); unknown or
    deleted tokens and masked values stay placeholders."""
    resolved: dict[str, str | None] = {}

    def _value(m: re.Match[str]) -> str:
        token = m.group("token")
        if token is None:
            return m.group()
        if token not in resolved:
            resolved[token] = vault_get(token)
        value = resolved[token]
        return m.group() if value is None else value

    return PLACEHOLDER.sub(_value, text)


def tokens_in(text: str) -> list[str]:
    """Vault tokens referenced by a (scrubbed) text, in order, without repeats."""
    seen = dict.fromkeys(t for m in PLACEHOLDER.finditer(text) if (t := m.group("token")))
    return list(seen)


def _label_of(key: str) -> str:
    """A JSON key read as the label of its value: ``card_number`` / ``cardNumber`` →
    ``card number``, so {"password": "hunter2"} is scanned as "password: hunter2"."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)
    return re.sub(r"[_\-.]+", " ", spaced).strip()


def scrub_labelled(
    text: str,
    label: str | None,
    policy: Mapping[PiiCategory, Action],
    vault_put: Callable[[PiiCategory, str], str],
) -> Scrubbed:
    """``text`` scrubbed as if ``label`` stood before it: a value under a key that names it
    ("password", "phone") needs no label of its own. Only ``text`` is changed."""
    if not label:
        return scrub(text, policy, vault_put)
    prefix = f"{label}: "
    shift = len(prefix)
    findings = [
        Finding(f.category, f.start - shift, f.end - shift, f.value, f.label)
        for f in scan(prefix + text)
        if f.start >= shift
    ]
    return apply_policy(text, findings, policy, vault_put)


def scrub_tree(
    value: object,
    policy: Mapping[PiiCategory, Action],
    vault_put: Callable[[PiiCategory, str], str],
    label: str | None = None,
) -> Any:
    """Every string in nested dicts and lists scrubbed, each read with its key as a label;
    a number under a key that makes it PII ({"card": 4111111111111111}) becomes its
    placeholder. Keys are kept as they are."""
    if isinstance(value, str):
        return scrub_labelled(value, label, policy, vault_put).text
    if isinstance(value, Mapping):
        return {
            k: scrub_tree(v, policy, vault_put, _label_of(str(k)) or label)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub_tree(v, policy, vault_put, label) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        written = str(value)
        scrubbed = scrub_labelled(written, label, policy, vault_put)
        return value if scrubbed.text == written else scrubbed.text
    return value
