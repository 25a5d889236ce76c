"""`manage.py mcp_stdio` driven by the official SDK's stdio client (a real subprocess on the test DB)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.bcp_app.live import ROOT, require_committed_data, subprocess_env
from tests.bcp_app.test_mcp_get_order import SEED_ORDER_CAPABILITIES, place_seed_order
from tests.bcp_app.test_mcp_helpers import run

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def stdio_params(api_key: str = "") -> StdioServerParameters:
    # The subprocess is configured as this test process is (same allowlist, key, database): placing the
    # order here already fetched the platform profile, and both processes must agree on what it allows.
    require_committed_data("the stdio MCP subprocess")
    env = subprocess_env(CELERY_TASK_ALWAYS_EAGER="true")
    args = ["manage.py", "mcp_stdio", "--language", "en", *(["--api-key", api_key] if api_key else [])]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))


def test_stdio_lists_tools_and_answers_get_order(fake_platform, bcp_settings, transactional_db) -> None:
    # given an order of a platform whose API key the operator configured
    from bcp_app.models import ProfileCacheEntry
    from bcp_app.service.platforms import platform_create

    profile_url = fake_platform.publish()
    created = platform_create(name="Agente de desktop", profile_url=profile_url)
    order = place_seed_order(created.platform.public_id)
    # (placing it fetched the loopback profile in this process: a refusal would be cached with a backoff that
    # the subprocess then reads, passing or failing with how fast it starts — issue 19)
    assert not ProfileCacheEntry.objects.filter(failed_until__isnull=False).exists()
    meta = {"ucp-agent": {"profile": profile_url}}

    async def go() -> tuple[list[str], Any, Any]:
        async with Client(stdio_params(created.api_key), cache=None) as client:
            tools = await client.list_tools()
            found = await client.call_tool("get_order", {"meta": meta, "id": order.public_id})
            missing = await client.call_tool("get_order", {"meta": meta, "id": "order_abc123"})
            return [tool.name for tool in tools.tools], found, missing

    # when the SDK's stdio client drives the command
    names, found, missing = run(go)
    # then the same tools are listed and get_order answers as over HTTP
    assert "get_order" in names
    assert "catalogue.list" in names
    # 10 BCP checkout/order/catalog/policy tools, 2 order actions, 3 subscription tools, 4 cart tools, 5 typed
    assert len(names) == 24
    assert found.structured_content["id"] == order.public_id
    assert found.structured_content["ucp"]["capabilities"] == SEED_ORDER_CAPABILITIES
    assert missing.structured_content["messages"][0]["content"] == "Order not found."
    assert missing.content[0].text == "Order not found."
