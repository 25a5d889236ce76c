"""Deployment checks of the BCP layer (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Warning, register
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from bcp_app.protocol.keys import previous_key_until


@register(deploy=True)
def previous_signing_key_still_needed(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """After its 7 days the replaced key is out of keys[] already (BCP-SIG-07); its settings only keep a private key
    file around that signs nothing."""
    try:
        until = previous_key_until()
    except ImproperlyConfigured as exc:
        return [Warning(str(exc), id="bcp_app.W002")]
    if until is None or timezone.now() < until:
        return []
    return [
        Warning(
            f"The previous signing key {settings.BCP_PREVIOUS_SIGNING_KEY_ID} left keys[] on {until:%Y-%m-%d}: "
            "its settings are no longer needed.",
            hint="Remove BCP_PREVIOUS_SIGNING_KEY_FILE, _ID and _RETIRED_AT, and the old key file.",
            id="bcp_app.W001",
        )
    ]
