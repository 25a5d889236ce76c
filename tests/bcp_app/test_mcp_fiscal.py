"""The fiscal_document extension over MCP with the official `mcp` client against a live uvicorn:
`get_order` carries `fiscal_documents` only for a platform that negotiated it (issue 18)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.test_mcp_get_order import place_seed_order
from tests.bcp_app.test_mcp_helpers import Agent, call
from tests.fiscal.helpers import authorized_view, invoice

agent = test_mcp_helpers.agent
live_mcp = test_mcp_helpers.live_mcp
profile_host = test_mcp_helpers.profile_host

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
FISCAL = "br.dev.bcp.shopping.fiscal_document"
ORDER = "br.dev.bcp.shopping.order"
PATH = "/fiscal/.well-known/bcp"


@pytest.fixture
def fiscal_agent(profile_host: str, settings: Any, transactional_db: None) -> Iterator[Agent]:
    from bcp_app.service.platforms import platform_create

    profile = test_mcp_helpers.platform_profile()
    profile["ucp"]["capabilities"][FISCAL] = test_mcp_helpers._capability(FISCAL, ORDER)
    test_mcp_helpers._ProfileHandler.documents[PATH] = json.dumps(profile).encode()
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    created = platform_create(name="Agente Fiscal", profile_url=f"{profile_host}{PATH}")
    yield Agent(created.platform.profile_url, created.api_key, created.platform.public_id)
    test_mcp_helpers._ProfileHandler.documents.pop(PATH, None)


def _issue(order: Any) -> Any:
    from fiscal.models import FiscalDocument
    from fiscal.services import document_request_issue

    # Committed for real here: the after-commit task runs the sandbox issue (Celery is eager in tests).
    with transaction.atomic():
        document_request_issue(
            order_ref=order.public_id, order_number=order.number, invoice=invoice(order_ref=order.public_id),
            problems=[], reissue=True,
        )  # fmt: skip
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    assert document.status == "authorized"
    return document


def test_get_order_over_mcp_carries_the_negotiated_fiscal_documents(live_mcp, fiscal_agent, settings) -> None:
    order = place_seed_order(fiscal_agent.platform_id, checkout_id="checkout_fiscal1")
    document = _issue(order)
    result = call(
        live_mcp.mcp_url,
        "get_order",
        {"meta": fiscal_agent.meta(), "id": order.public_id},
        headers=fiscal_agent.headers,
    )
    body = result.structured_content
    assert body["ucp"]["capabilities"][FISCAL] == [{"version": "2026-07-28"}]
    assert body["fiscal_documents"] == [authorized_view(document, settings.BCP_PUBLIC_URL)]


def test_get_order_over_mcp_without_the_extension_has_no_fiscal_member(live_mcp, agent) -> None:
    order = place_seed_order(agent.platform_id, checkout_id="checkout_fiscal2")
    _issue(order)
    result = call(live_mcp.mcp_url, "get_order", {"meta": agent.meta(), "id": order.public_id}, headers=agent.headers)
    assert "fiscal_documents" not in result.structured_content
    assert FISCAL not in result.structured_content["ucp"]["capabilities"]
