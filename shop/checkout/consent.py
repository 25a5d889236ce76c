"""Buyer consent (LGPD; BCP buyer consent extension): what the buyer decided, when, and through whom.

Stored on the checkout as `buyer_consent` = {purpose: {"granted": bool, "captured_by": "...", "at": RFC 3339}}
for the purposes the buyer decided; a purpose never decided has no entry (the business default applies:
not granted). A decision keeps its timestamp while it stays the same; a change gets a new one and a
`consent_changed` timeline event (append-only history). `captured_by` is `storefront` (the shop's own
checkout page) or `platform:<id>` / `platform:anonymous` (an agent platform over BCP).

Honoured: the shop sends no marketing e-mail; abandoned-checkout reminders (a service e-mail about the
buyer's own checkout, with opt-out) are not sent to a buyer who refused marketing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils.translation import gettext_lazy as _

MARKETING = "marketing"
PURPOSES = ("marketing", "analytics", "preferences", "sale_of_data")
LABELS = {
    "marketing": _("Ofertas e novidades por e-mail (marketing)"),
    "analytics": _("Análise de navegação e compras (analytics)"),
    "preferences": _("Lembrar preferências"),
    "sale_of_data": _("Venda ou compartilhamento de dados com terceiros"),
}

Decisions = tuple[tuple[str, bool], ...]


def _stamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def consent_state(previous: dict | None, decisions: Decisions | None, captured_by: str, now: datetime) -> dict | None:
    """The stored consent after a write that gave `decisions` (None: the buyer gave no consent object)."""
    if decisions is None:
        return None
    previous = previous or {}
    state: dict[str, dict[str, object]] = {}
    for purpose, granted in decisions:
        if purpose not in PURPOSES:
            continue
        before = previous.get(purpose)
        if isinstance(before, dict) and before.get("granted") is granted:
            state[purpose] = before  # same decision: its original time and channel stay the evidence
        else:
            state[purpose] = {"granted": granted, "captured_by": captured_by or "platform:anonymous", "at": _stamp(now)}
    return state


def consent_decisions(stored: dict | None) -> Decisions | None:
    """The stored consent as input again (re-evaluations keep it unchanged)."""
    if stored is None:
        return None
    return tuple(
        (purpose, bool(entry.get("granted")))
        for purpose, entry in stored.items()
        if purpose in PURPOSES and isinstance(entry, dict)
    )


def marketing_refused(stored: dict | None) -> bool:
    entry = (stored or {}).get(MARKETING)
    return isinstance(entry, dict) and entry.get("granted") is False


def consent_rows(stored: dict | None) -> list[dict[str, object]]:
    """For the admin pages: one row per purpose, decided or not, in display order."""
    rows = []
    for purpose in PURPOSES:
        entry = (stored or {}).get(purpose)
        decided = isinstance(entry, dict)
        rows.append(
            {
                "purpose": purpose,
                "label": LABELS[purpose],
                "decided": decided,
                "granted": bool(entry.get("granted")) if decided else False,
                "captured_by": entry.get("captured_by", "") if decided else "",
                "at": entry.get("at", "") if decided else "",
            }
        )
    return rows
