"""The shop's time zone in words for the admin's date widgets: Django's note said "informe os horários no fuso
America/Sao_Paulo", a technical name a merchant does not use (merchant walk)."""

from __future__ import annotations

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _

register = template.Library()

# The IANA zones on Brasília time (UTC−3 all year since 2019).
BRASILIA_ZONES = frozenset(
    {
        "America/Sao_Paulo",
        "America/Bahia",
        "America/Fortaleza",
        "America/Recife",
        "America/Belem",
        "America/Maceio",
        "America/Araguaina",
        "America/Santarem",
    }
)


@register.simple_tag
def time_zone_words() -> str:
    """ "horário de Brasília" for the shop's zone, else "fuso <IANA name>" (the note reads "no …")."""
    name = timezone.get_current_timezone_name()
    return _("horário de Brasília") if name in BRASILIA_ZONES else _("fuso %(zone)s") % {"zone": name}
