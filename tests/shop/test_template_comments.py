"""Django's `{# … #}` comment must open and close on one line: one that spans lines is not a comment, and its
text is printed in the page (the checkout's payment choice showed its own note to buyers until issue 34's merge).
Longer notes are `{% comment %}` blocks."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
UNCLOSED = re.compile(r"\{#(?:(?!#\}).)*$", re.MULTILINE)


def test_no_template_has_a_comment_spanning_lines() -> None:
    templates = [
        path
        for folder in ("templates", "shop", "orders", "payments", "fiscal", "bcp_app", "carriers")
        for path in (ROOT / folder).rglob("*.html")
    ]
    assert len(templates) > 50
    spanning = []
    for path in templates:
        text = path.read_text(encoding="utf-8")
        lines = [text[: m.start()].count("\n") + 1 for m in UNCLOSED.finditer(text)]
        spanning += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
    assert spanning == []
