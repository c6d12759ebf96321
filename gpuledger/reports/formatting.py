"""How the reports show the statement's numbers (the HTML, the PDF and the finance tables round the same way)
and name their per-team files."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

DASH = "\u2013"  # en dash: no value
_CENT = Decimal("0.01")
_TENTH = Decimal("0.1")


def money(value: str | Decimal | None, *, signed: bool = False) -> str:
    """An amount rounded half away from zero to cents, with thousands separators: ``-1,234.57`` (``+12.00`` when
    signed). Amounts of a table with a total come already rounded to cents so that they foot (``figures``)."""
    if value is None:
        return DASH
    shown = Decimal(value).quantize(_CENT, ROUND_HALF_UP)
    return f"{shown:+,.2f}" if signed else f"{shown:,.2f}"


def hours(value: str | None) -> str:
    """GPU-hours to a tenth: ``16,144.0``."""
    if value is None:
        return DASH
    return f"{Decimal(value).quantize(_TENTH, ROUND_HALF_UP):,.1f}"


def percent(value: str | None, *, signed: bool = False) -> str:
    """A ratio as a percentage to a tenth: ``39.4%`` (``+3.2%`` when signed)."""
    if value is None:
        return DASH
    shown = (Decimal(value) * 100).quantize(_TENTH, ROUND_HALF_UP)
    return f"{shown:+.1f}%" if signed else f"{shown:.1f}%"


def rate(value: str | None) -> str:
    """An exchange rate without trailing zeros: ``1.079``."""
    if value is None:
        return DASH
    return format(Decimal(value).normalize(), "f")


def currency(value: str | None) -> str:
    return value or "(none)"


def timestamp(value: str) -> str:
    """An ISO time to the second, in UTC: ``2026-12-02 03:00:00 UTC``."""
    return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def team_slugs(teams: list[str]) -> dict[str, str]:
    """A file-name-safe, collision-proof slug per team: lower-case ``[a-z0-9-]``, suffixed with a hash of the
    name where two names would share one (or a name has no usable character)."""
    base = {team: re.sub(r"[^a-z0-9]+", "-", team.lower()).strip("-")[:48] for team in teams}
    counts: dict[str, int] = {}
    for slug in base.values():
        counts[slug] = counts.get(slug, 0) + 1
    return {
        team: slug if slug and counts[slug] == 1 else f"{slug or 'team'}-{_digest(team)}" for team, slug in base.items()
    }


def _digest(team: str) -> str:
    return hashlib.sha256(team.encode("utf-8")).hexdigest()[:10]
