"""Catalog rules a person's input is checked against before the database (admin form, bulk import), said in
Portuguese on the field they concern."""

from __future__ import annotations

from django.utils.translation import gettext as _

from kernel.money import format_brl

# The highest price a variant may have: far above what a small shop sells, far below the typo that adds three
# zeros (R$ 99.999.999.999,99 was accepted). A bound for people, not for the database (BigIntegerField).
PRICE_MAX = 100_000_000  # R$ 1.000.000,00


def price_problem(cents: int | None, *, label: str) -> str | None:
    """What is wrong with a typed price (`label` names it: "O preço"), or None."""
    if cents is not None and cents > PRICE_MAX:
        return _("%(label)s passa do máximo de %(max)s: confira se não sobrou um zero.") % {
            "label": label,
            "max": format_brl(PRICE_MAX),
        }
    return None


def zero_price_warning() -> str:
    return _(
        "Preço R$ 0,00: a variante sairá de graça na loja e para os agentes. Se é isso mesmo (brinde, amostra), "
        "marque “Confirmo o preço R$ 0,00” e salve de novo."
    )
