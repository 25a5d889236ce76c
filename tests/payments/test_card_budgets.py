"""Statement budgets of the card write paths (each one short transaction, fixed cost)."""

from __future__ import annotations

import json

import pytest

from payments.card.webhook import receive_card_webhook
from tests.payments.fake_pagarme import WEBHOOK_PASSWORD, WEBHOOK_USER, webhook_authorization

pytestmark = pytest.mark.django_db


def test_storing_a_card_webhook_is_a_fixed_handful_of_statements(settings, django_assert_max_num_queries) -> None:
    settings.PAGARME_WEBHOOK_USER, settings.PAGARME_WEBHOOK_PASSWORD = WEBHOOK_USER, WEBHOOK_PASSWORD
    body = json.dumps({"id": "hook_budget", "type": "order.paid", "data": {"id": "or_1"}}).encode()
    headers = {"Authorization": webhook_authorization()}

    with django_assert_max_num_queries(4):  # get_or_create: select, savepoint, insert, release
        assert receive_card_webhook(body, headers) == (200, {"received": 1, "duplicates": 0})
    with django_assert_max_num_queries(1):
        assert receive_card_webhook(body, headers) == (200, {"received": 0, "duplicates": 1})
