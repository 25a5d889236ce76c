"""Settings read on every agent request, remembered by the process.

`settings.NAME` goes through `LazyObject.__getattribute__` (Python, with an attribute lookup that fails on most
values): some 4 k instructions a read, and an agent call read five (signatures, anonymous callers, rate limits,
failed-key budget twice; issue 34). Settings do not change while a process runs; a test that overrides one
(`override_settings`, pytest-django's `settings`) sends `setting_changed`, which forgets every remembered value.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

_MISSING = object()
_values: dict[tuple[str, Any], Any] = {}


def value(name: str, default: Any = None) -> Any:
    """`getattr(settings, name, default)`, read once per process (and again after a test changes settings)."""
    found = _values.get((name, default), _MISSING)
    if found is _MISSING:
        found = _values[(name, default)] = getattr(settings, name, default)
    return found


@receiver(setting_changed)
def _settings_changed(**_kwargs: object) -> None:
    _values.clear()
