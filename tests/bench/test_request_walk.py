"""The path of one agent's Pix complete through our own modules (issue 32), printed by `make bench`.

A request that zigzags between modules is hard to read and to change. This traces the REST
`POST /checkout-sessions/{id}/complete` with a Pix instrument in steady state (profile, identity and
shipping table already cached, as in tests/bcp_app/test_statement_budgets.py) and counts, over the
Python calls made in our packages only:
- modules visited: distinct modules of ours that ran at least one function;
- re-entries: times the walk came back into a module it had already left (A → B → A counts one).
Printed, not asserted: it is a reading for the layout, not a rule about time.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from django.test import Client

from tests.bcp_app.bcp_fixtures import bcp_settings, fake_platform  # noqa: F401
from tests.bcp_app.rest_helpers import PIX, call
from tests.bcp_app.test_statement_budgets import _ready, headers  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]

OUR_PACKAGES = ("bcp_app", "shop", "orders", "payments", "fiscal", "kernel", "config")


def _our_module(frame: FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    if name.split(".", 1)[0] in OUR_PACKAGES:
        return name
    return None


class Walk:
    """The sequence of our modules entered, collapsed so a module calling itself is one step."""

    def __init__(self) -> None:
        self.steps: list[str] = []

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        module = _our_module(frame)
        if module is not None and (not self.steps or self.steps[-1] != module):
            self.steps.append(module)

    def modules(self) -> list[str]:
        return sorted(set(self.steps))

    def re_entries(self) -> int:
        return len(self.steps) - len(set(self.steps))


@pytest.fixture
def walk() -> Iterator[Walk]:
    yield Walk()


def test_agent_pix_complete_walk(client: Client, headers: dict[str, str], walk: Walk) -> None:  # noqa: F811
    ready, _ = _ready(client, headers, PIX)
    path = f"/checkout-sessions/{ready['id']}/complete"
    sys.setprofile(walk.profile)
    try:
        response = call(
            client, "post", path, {**headers, "Idempotency-Key": "walk-1"}, {"payment": {"instruments": [PIX]}}
        )
    finally:
        sys.setprofile(None)
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "complete_in_progress"
    modules = walk.modules()
    print(f"\nagent Pix complete: {len(modules)} modules of ours visited, {walk.re_entries()} re-entries")
    entries = Counter(walk.steps)
    for module in modules:
        print(f"   {module:<45} entered {entries[module]}×")
