"""Project facts from coding sessions: what a project decided, which versions it runs, where
it is deployed and which conventions it keeps. Keys are scoped by project,
``project.<project>.{decision,version,environment,convention}.<what>``, so a decision about
auth in one repository never supersedes one in another, and a later "we moved auth to
sessions" supersedes "we use JWT for auth" in the same one.

They are read from every line of a message that belongs to a project (an imported session
holds both sides: "user: …" / "assistant: …"), in English and Korean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from madeleine.facts.rules.common import Fact, Said, attr, slug
from madeleine.facts.rules.tech import ENVIRONMENTS, tech_name, tech_topic

_SPEAKER = re.compile(r"^\s*(?:user|assistant|human|ai)\s*:\s*", re.I)
_TECH_WORD = r"[A-Za-z][\w.+#-]*(?:\s+(?:on\s+)?[A-Z][\w.+#-]*)?"
_ENV = r"(?P<env>prod|production|staging|stage|dev|development|ci|local(?:ly)?|test)"
_VALUE = r"(?P<value>[A-Za-z0-9][\w.+#/-]*(?:\s+[A-Za-z0-9][\w.+#/-]*){0,3}?)"

_DECISION = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:we|I|the\s+team)\s*(?:'ve|have)?\s*(?:decided|agreed|chose|settled)\s+(?:to\s+"
        r"(?:use|go\s+with|adopt|switch\s+to|move\s+to|stick\s+with)|on)\s+"
        rf"{_VALUE}(?:\s+(?:for|as)\s+(?:the\s+|our\s+)?(?P<topic>[\w -]{{2,30}}?))?(?=\s*[,.;!?]"
        r"|\s*$|\s+(?:instead|because|since|over|rather|and|but|from\s+now)\b)",
        r"\b(?:(?:let's|let\s+us|we'll|we\s+will|we're\s+going\s+to)\s+(?:use|go\s+with|adopt"
        r"|switch\s+to|move\s+to|stick\s+with)|(?:we're|we\s+are)\s+(?:going|sticking)\s+with"
        rf"|we\s+(?:went|go)\s+with|we\s+(?:picked|chose|selected|adopted))\s+{_VALUE}(?:\s+(?:for|as)\s+(?:the\s+|our\s+)?"
        r"(?P<topic>[\w -]{2,30}?))?(?=\s*[,.;!?]|\s*$|\s+(?:instead|because|since|over|rather"
        r"|and|but|from\s+now)\b)",
        r"\b(?:we|I)\s*(?:'ve|have)?\s*(?:switched|moved|migrated)\s+(?:the\s+|our\s+)?"
        r"(?P<topic>[\w -]{2,30}?)\s+(?:from\s+[\w.+#-]+\s+)?to\s+"
        rf"{_VALUE}(?=\s*[,.;!?]|\s*$|\s+(?:instead|because|since|and|but)\b)",
        r"\bdecision\s*:\s*(?:use\s+)?" + _VALUE + r"(?:\s+(?:for|as)\s+(?P<topic>[\w -]{2,30}?))?"
        r"(?=\s*[,.;!?]|\s*$)",
        # Korean: "Redis를 캐시로 쓰기로 했어요", "인증은 JWT로 하기로 했어요"
        r"(?P<value>[A-Za-z0-9][\w.+#-]*)\s*(?:을|를)\s*(?P<topic>[가-힣A-Za-z]+?)(?:으로|로)\s*"
        r"(?:쓰기로|사용하기로|하기로|결정|정했)",
        r"(?:(?P<topic>[가-힣A-Za-z]+?)(?:은|는)\s+)?(?P<value>[A-Za-z0-9][\w.+#-]*)\s*(?:을|를|으로|로)"
        r"\s*(?:쓰기로|사용하기로|하기로|가기로|결정|정했)",
    )
)
# "we use pytest for testing", "we use pnpm, not npm": only a known technology
_USES = re.compile(
    r"\b(?:we|the\s+team|this\s+project|the\s+project)\s*(?:'re|are)?\s*(?:use|uses|using"
    r"|rely\s+on|relies\s+on|standardi[sz]ed\s+on)\s+" + _VALUE + r"(?:\s+(?:for|as)\s+"
    r"(?:the\s+|our\s+)?(?P<topic>[\w -]{2,30}?))?(?=\s*[,.;!?]|\s*$|\s+(?:instead|because"
    r"|since|over|rather|and|but|not|in|on)\b)",
    re.I,
)
_VERSION = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:we|I|prod|production|staging|it|the\s+app|the\s+project|this\s+project)\s*"
        r"(?:'re|'s|are|is|am)?\s*(?:run|runs|running|use|uses|using|on|deploy|deploys|target"
        r"|targets|targeting|pinned|pin|require|requires|upgraded\s+to|migrated\s+to|moved\s+to"
        rf"|(?:are|is)\s+on|support|supports)\s+(?:to\s+)?(?P<tech>{_TECH_WORD}?)\s+v?"
        r"(?P<version>\d+(?:\.\d+){0,2}(?:\.x)?)\b",
        rf"(?P<tech>{_TECH_WORD}?)\s+v?(?P<version>\d+(?:\.\d+){{0,2}})(?:\.x|\+)?\s+(?:is|are)\s+"
        r"(?:required|needed|the\s+minimum|the\s+target|supported|pinned)\b",
        r"\b(?:requires|needs|targets|pins)\s+(?P<tech>" + _TECH_WORD + r"?)\s+v?"
        r"(?P<version>\d+(?:\.\d+){0,2})\b",
        rf"(?P<tech>{_TECH_WORD}?)\s+v?(?P<version>\d+(?:\.\d+){{0,2}})\s*(?:을|를)?\s*(?:써요|씁니다"
        r"|사용(?:해요|합니다|하고|중)|쓰고\s*있|돌리고\s*있|돌려요)",
    )
)
_ENV_IN = re.compile(
    r"\b(?:in|on|for)\s+(?:the\s+)?"
    + _ENV
    + r"\b|(?P<envko>프로덕션|운영\s*환경|운영|스테이징|개발\s*환경"
    r"|로컬)(?:에서|은|는)?",
    re.I,
)
_HOSTING = re.compile(
    r"\b(?:we|it|the\s+app|prod|production|staging)\s*(?:'re|'s|are|is)?\s*(?:deploy(?:s|ed)?"
    r"|hosted|host|runs?|running|deployed)\s+(?:to|on|in)\s+(?P<value>(?-i:[A-Z][\w.+-]*"
    r"(?:\s+[A-Z][\w.+-]*)?))",
    re.I,
)
_CONVENTION = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:our|the)\s+(?:convention|rule|style|standard)\s+is\s+(?:to\s+)?(?P<rule>[^.;!?\n]{4,160})",
        r"^(?:(?:and|also|oh|ok|okay|so|btw|note|remember)\W+)*(?:please\s+)?(?:we\s+)?"
        r"(?P<rule>(?:always|never)\s+(?!been\b|had\b|was\b)[^.;!?\n]{4,160})",
        r"\bin\s+this\s+(?:repo|project|codebase),?\s+we\s+(?P<rule>[^.;!?\n]{4,160})",
    )
)
_NOT_VALUES = frozenset("it this that them a an the some one to".split())


def project_facts(said: Said, project: str) -> list[Fact]:
    """The project facts of one sentence of a message of ``project``."""
    text = _SPEAKER.sub("", said.text).strip()
    if not text or text.rstrip().endswith("?"):
        return []
    scope = f"project.{slug(project)}"
    facts: list[Fact] = []
    facts.extend(_versions(text, scope, project))
    facts.extend(_decisions(text, scope, project))
    facts.extend(_hosting(text, scope, project))
    if not facts:
        facts.extend(_conventions(text, scope, project))
    return facts


def _environment(text: str) -> str | None:
    found = _ENV_IN.search(text)
    if found is None:
        return None
    word = (found["env"] or found["envko"] or "").lower()
    return ENVIRONMENTS.get(word) or ENVIRONMENTS.get(re.sub(r"\s+", " ", word))


def _versions(text: str, scope: str, project: str) -> Iterable[Fact]:
    for pattern in _VERSION:
        for match in pattern.finditer(text):
            raw = match["tech"].strip()
            name = tech_name(raw) or tech_name(raw.split()[-1])
            if name is None and not raw[:1].isupper():
                continue
            name = name or raw
            version = match["version"]
            env = _environment(text)
            attributes = [
                attr("project", project),
                attr("tech", name),
                attr("version", version),
            ]
            where = ""
            if env is not None:
                attributes.append(attr("environment", env))
                where = f" in {env}"
            yield Fact(
                "project",
                f"{scope}.version.{slug(name)}",
                f"Project {project} runs {name} {version}{where}.",
                tuple(attributes),
            )


def _decisions(text: str, scope: str, project: str) -> Iterable[Fact]:
    matches = [m for pattern in _DECISION for m in pattern.finditer(text)]
    matches += [m for m in _USES.finditer(text) if tech_name(m["value"].strip(" .,"))]
    seen: set[str] = set()
    for match in matches:
        raw = match["value"].strip(" .,")
        if not raw or raw.split()[0].lower() in _NOT_VALUES or raw.lower() in seen:
            continue
        seen.add(raw.lower())
        value = tech_name(raw) or raw
        topic_raw = (match.groupdict().get("topic") or "").strip().lower()
        topic_raw = re.sub(r"^(?:the|our)\s+", "", topic_raw)
        topic = _topic_word(topic_raw) or tech_topic(value) or slug(value)
        attributes = [attr("project", project), attr("decision", value), attr("topic", topic)]
        about = f" for {topic.replace('_', ' ')}" if topic != slug(value) else ""
        yield Fact(
            "project",
            f"{scope}.decision.{slug(topic)}",
            f"Project {project} decided to use {value}{about}.",
            tuple(attributes),
        )


_TOPIC_WORDS = {
    "authentication": "auth",
    "auth": "auth",
    "login": "auth",
    "인증": "auth",
    "the database": "database",
    "database": "database",
    "db": "database",
    "storage": "database",
    "데이터베이스": "database",
    "디비": "database",
    "caching": "cache",
    "cache": "cache",
    "캐시": "cache",
    "hosting": "hosting",
    "deployment": "hosting",
    "배포": "hosting",
    "testing": "testing",
    "tests": "testing",
    "테스트": "testing",
    "the frontend": "frontend",
    "frontend": "frontend",
    "프론트엔드": "frontend",
    "the api": "api",
    "api": "api",
    "styling": "styling",
    "styles": "styling",
    "css": "styling",
    "package management": "packaging",
    "packages": "packaging",
    "dependencies": "packaging",
    "the orm": "orm",
    "orm": "orm",
    "linting": "linting",
    "lint": "linting",
    "formatting": "linting",
    "ci": "ci",
    "monitoring": "monitoring",
    "logging": "monitoring",
    "queues": "queue",
    "background jobs": "queue",
    "jobs": "queue",
    "search": "search",
}


def _topic_word(raw: str) -> str | None:
    if not raw:
        return None
    return _TOPIC_WORDS.get(raw) or slug(raw)


def _hosting(text: str, scope: str, project: str) -> Iterable[Fact]:
    for match in _HOSTING.finditer(text):
        raw = match["value"].strip()
        name = tech_name(raw) or tech_name(raw.split()[0])
        if name is None or tech_topic(name) not in ("hosting", "orchestration"):
            continue
        env = _environment(text) or "prod"
        yield Fact(
            "project",
            f"{scope}.environment.{env}",
            f"Project {project} deploys {env} to {name}.",
            (attr("project", project), attr("environment", env), attr("platform", name)),
        )


def _conventions(text: str, scope: str, project: str) -> Iterable[Fact]:
    for pattern in _CONVENTION:
        match = pattern.search(text)
        if match is None:
            continue
        rule = re.sub(r"\s+", " ", match["rule"]).strip(" .,")
        words = [w for w in re.findall(r"[A-Za-z0-9가-힣_]+", rule.lower()) if len(w) > 2]
        if len(words) < 2:
            continue
        yield Fact(
            "project",
            f"{scope}.convention.{slug(' '.join(words[:4]))}",
            f"Project {project} convention: {rule}.",
            (attr("project", project), attr("convention", rule)),
        )
        return
