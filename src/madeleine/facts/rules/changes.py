"""Builders for what stops: things the user gave up ("I stopped eating meat", "커피를
끊었어요") and accounts that close ("my Chase account closes on May 1"). Their cards carry a
``status`` so that resolution ends what they stop (``madeleine.facts.slots``)."""

from __future__ import annotations

import re

from madeleine.facts.rules import en_words
from madeleine.facts.rules.common import (
    HANGUL,
    Builder,
    Fact,
    Said,
    attr,
    moved_since,
    refer_to,
    slug,
    subject_of,
)
from madeleine.facts.rules.items import NOT_ITEM_START, korean_item

_NOT_AVOIDED = frozenset(
    """my job work working it that this them him her there here by for to the a an being
    doing going talking trying waiting caring worrying thinking""".split()
)
_TIME_START = frozenset(
    "last this next yesterday today ago recently years months weeks a an since in on".split()
)
_VERB_WORDS = {"eat": "eating", "drink": "drinking", "have": "having", "use": "using"}


def _build_avoid(match: re.Match[str], said: Said) -> list[Fact]:
    groups = match.groupdict()
    raw = re.sub(r"\s+", " ", (groups.get("item") or "").strip(" .,")).strip()
    raw = re.sub(r"\s+(?:anymore|any more|altogether|completely|entirely)$", "", raw, flags=re.I)
    verb = (groups.get("verb") or "").lower()
    if raw.split()[:1] and raw.split()[0].lower() in _TIME_START:
        if not verb.endswith("ing"):
            return []
        raw, verb = verb, ""  # "I quit smoking last year": smoking is what stopped
    if HANGUL.search(raw):
        item = korean_item(raw, said)
    else:
        words = raw.split()
        if not words or words[0].lower() in NOT_ITEM_START | _NOT_AVOIDED:
            return []
        if any(w[:1].isupper() for w in words):
            return []  # "I quit Google": a job, read by another row
        item = raw.lower()
    if not item or item in _NOT_AVOIDED:
        return []
    subject, relationship = subject_of(match, said)
    if not subject:
        return []
    verb = _VERB_WORDS.get(verb, verb)
    who = refer_to(subject, relationship)
    statement = f"{who} stopped {verb} {item}." if verb else f"{who} gave up {item}."
    return [
        Fact(
            "avoid",
            f"preference.avoid.{slug(item)}",
            statement,
            (attr("item", item), attr("status", "stopped")),
            subject,
            relationship,
            valid_from=moved_since(said),
        )
    ]


_DONE = re.compile(r"\b(?:closed|cancell?ed|terminated)\b", re.I)
_ACCOUNT_WORDS = re.compile(r"\b(?:checking|savings|bank|credit|debit)\b|은행|계좌|뱅크", re.I)


def _build_close_account(match: re.Match[str], said: Said) -> list[Fact]:
    """ "my Chase account closes on May 1", "I closed my Netflix subscription"."""
    label = re.sub(r"\s+", " ", (match.groupdict().get("label") or "").strip(" .,'")).strip()
    org = (match.groupdict().get("org") or "").strip()
    if org:  # "my checking account at Chase": "Chase checking"
        label = f"{org} {label}".strip()
    words = [w for w in label.split() if w.lower() not in ("my", "our", "the")]
    name = " ".join(words)
    if name and name.split()[0] in en_words.NOT_NAMES:
        return []
    banked = en_words.BRAND_TOPICS.get(name.split()[0].lower()) == "bank" if name else True
    family = "bank" if banked or _ACCOUNT_WORDS.search(name) else "service"
    specific = [w for w in words if w.lower() not in ("bank", "account")]
    key = f"account.{family}.{slug(' '.join(specific)) if specific else 'account'}"
    attributes = [attr("status", "closed")]
    if name:
        attributes.insert(0, attr("name", name))
    when = said.when(said.text[match.start() :])
    what = f"{name} account" if name and "account" not in name.lower() else name or "account"
    if _DONE.search(match.group(0)):
        statement = f"The user closed their {what}"
    else:
        statement = f"The user's {what} closes"
    if when is not None:
        attributes.append(attr("closes_on", when.start.isoformat(), "date"))
        statement += f" on {when.start.isoformat()}"
    return [Fact("account_closed", key, statement + ".", tuple(attributes))]


BUILDERS: dict[str, Builder] = {
    "avoid": _build_avoid,
    "close_account": _build_close_account,
}
