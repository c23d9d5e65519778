"""How the vocabularies of both languages are written (prose specs read by ``table``), and
the PII placeholder that both accept where a value was masked before extraction."""

from __future__ import annotations

PLACEHOLDER = r"\[pii:[a-z_]+(?::[a-z0-9]+)?\]"


def table(spec: str, canonical_is_alias: bool = True) -> dict[str, str]:
    """Parse "canonical: alias, alias; canonical: …" into {alias: canonical}, aliases lower-
    cased, so vocabularies read as prose rather than as hundreds of dict lines."""
    found: dict[str, str] = {}
    for entry in spec.split(";"):
        if ":" not in entry:
            continue
        canonical, aliases = entry.split(":", 1)
        canonical = canonical.strip()
        names = aliases.split(",") + ([canonical] if canonical_is_alias else [])
        for alias in names:
            if alias.strip():
                found[alias.strip().lower()] = canonical
    return found
