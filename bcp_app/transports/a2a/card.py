"""The A2A Agent Card (seed 004 "Transport discovery"; BCP.md §13.3, BCP-A2A-01).

Served at `/.well-known/agent-card.json` in exactly the seed's shape and member order. The BCP extension's
`params.capabilities` lists the checkout capability and the extensions of it the shop offers (from the
same registry as `/.well-known/bcp`), each as `{"version"}` / `{"version", "extends"}`.
"""

from __future__ import annotations

from typing import Any

from a2a.types import AgentCard
from django.conf import settings
from google.protobuf.json_format import ParseDict

from bcp_app.protocol.names import A2A_EXTENSION_URI, CART, CHECKOUT
from bcp_app.service.discovery import capability_registry, public_url

A2A_PATH = "/bcp/a2a"
AGENT_CARD_PATH = "/.well-known/agent-card.json"
A2A_PROTOCOL_VERSION = "1.0"
AGENT_VERSION = "1.0.0"


def card_capabilities() -> dict[str, list[dict[str, Any]]]:
    """Checkout and cart (the roots A2A intents serve) and their extensions, as the seed shows them
    (version, extends)."""
    capabilities: dict[str, list[dict[str, Any]]] = {}
    for name, entries in capability_registry().items():
        shown = []
        for entry in entries:
            extends = entry.get("extends")
            parents = extends if isinstance(extends, list) else [extends]
            if name not in (CHECKOUT, CART) and CHECKOUT not in parents and CART not in parents:
                continue
            item: dict[str, Any] = {"version": entry["version"]}
            if extends:
                item["extends"] = extends
            shown.append(item)
        if shown:
            capabilities[name] = shown
    return capabilities


def agent_card_dict() -> dict[str, Any]:
    shop = str(getattr(settings, "SHOP_NAME", "") or "Loja")
    return {
        "name": f"{shop} business agent",
        "description": "Business agent with BCP checkout",
        "version": AGENT_VERSION,
        "supportedInterfaces": [
            {"url": public_url(A2A_PATH), "protocolBinding": "JSONRPC", "protocolVersion": A2A_PROTOCOL_VERSION}
        ],
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extensions": [
                {
                    "uri": A2A_EXTENSION_URI,
                    "description": "Brazilian Commerce Protocol structured types",
                    "required": False,
                    "params": {"capabilities": card_capabilities()},
                }
            ],
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "bcp-checkout",
                "name": "BCP checkout",
                "description": "Creates, updates, and completes BCP checkout sessions",
                "tags": ["commerce", "checkout", "bcp"],
            },
            {
                "id": "bcp-cart",
                "name": "BCP cart",
                "description": "Creates, updates and cancels carts (create_cart, get_cart, update_cart, cancel_cart) "
                "and turns one into a checkout (create_checkout)",
                "tags": ["commerce", "cart", "bcp"],
            },
            {
                "id": "policies-search",
                "name": "Store policies",
                "description": "Answers questions about returns, shipping, privacy and terms (policies.search)",
                "tags": ["commerce", "policies", "bcp"],
                "examples": ["qual é a política de trocas?"],
            },
        ],
    }


def agent_card() -> AgentCard:
    """The same card as the SDK's protobuf type (validated by parsing it)."""
    return ParseDict(agent_card_dict(), AgentCard())
