"""Every tool the MCP server lists: the BCP tools of §13.2 and the typed catalogue tools of seed 002."""

from __future__ import annotations

from bcp_app.service.catalogue import Caller
from bcp_app.service.context import normalize_language
from bcp_app.service.platforms import platform_authenticate
from bcp_app.transports.mcp.bcp_tools import bcp_tools
from bcp_app.transports.mcp.core import CallInfo, McpTool, api_key_from
from bcp_app.transports.mcp.typed_tools import typed_tools


def typed_caller(call: CallInfo) -> Caller:
    """Typed tools carry no BCP profile, so only an API key identifies the caller (anonymous otherwise)."""
    language = normalize_language(call.headers.get("accept-language"))
    api_key = api_key_from(call)
    if api_key is None:
        return Caller(language=language)
    platform = platform_authenticate(api_key, client_ip=call.client or None)
    return Caller(platform_id=platform.public_id, language=language)


def all_tools() -> list[McpTool]:
    return [*bcp_tools(), *typed_tools(typed_caller)]
