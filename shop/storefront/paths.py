"""The path of one of our URLs with one variable part, without a `reverse()` per call (issue 34).

`reverse()` walks the resolver, builds and matches a pattern per call: on the cart and checkout pages, the product
link of each cart line and the checkout form's two addresses cost more CPU than anything else in their rows. The
path is reversed once with a placeholder, per URL prefix and URLconf, and the value put in its place: the same path
`reverse()` gives for a value of letters, digits, "_" and "-" (which it neither quotes nor refuses). Any other
value is reversed as before.
"""

from __future__ import annotations

import re

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.urls import get_script_prefix, get_urlconf, reverse

PLACEHOLDER = "zz-path-value-zz"
_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
_PATTERNS: dict[tuple[str, str, str, object], str] = {}


def path_with(name: str, kwarg: str, value: str) -> str:
    """`reverse(name, kwargs={kwarg: value})`."""
    if not _PLAIN.fullmatch(value):
        return reverse(name, kwargs={kwarg: value})
    key = (name, kwarg, get_script_prefix(), get_urlconf())
    pattern = _PATTERNS.get(key)
    if pattern is None:
        pattern = _PATTERNS[key] = reverse(name, kwargs={kwarg: PLACEHOLDER})
    return pattern.replace(PLACEHOLDER, value)


@receiver(setting_changed)
def _settings_changed(**_kwargs: object) -> None:
    _PATTERNS.clear()  # a test's ROOT_URLCONF (or anything else): reversed again
