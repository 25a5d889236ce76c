"""UCP's A2A binding (2026-01-11, `docs/specification/checkout-a2a.md` at the UCP spec's tag v2026-01-11) on the BCP
agent: the same executor, intents and operations, with UCP's names at the edges (issue 35 item 1).

A platform activates it with `A2A-Extensions: https://ucp.dev/specification/reference?v=2026-01-11` (instead of BCP's)
and names itself with `UCP-Agent`. Its data parts are renamed on the way in — `a2a.ucp.checkout.payment_data` (one
instrument, UCP's `payment_data`) becomes BCP's `a2a.bcp.checkout.payment` (`{instruments: [it]}`),
`a2a.ucp.checkout.risk_signals` BCP's signals — and the reply's on the way out: the checkout under
`a2a.ucp.checkout` and the order under `a2a.ucp.order`, in UCP 2026-01-11's shapes (`bcp_app/protocol/ucp.py`, the map
the REST and MCP faces use); a platform whose profile is written in UCP 2026-08-25 gets that version's shapes
(`ucp.body_2026_08_25`), as on the other faces. Idempotency stays the A2A `messageId`'s, as the binding asks.

A 2026-01-11 platform whose profile names no checkout is served the core checkout, as on UCP REST
(`served_context`). An operation refused for the checkout's status keeps its reply (the checkout with its
`invalid_checkout_status` message, in a `Message`): the binding at v2026-01-11 words no error of its own, unlike
REST's 409 and MCP's JSON-RPC error (`ucp.refused_for_status`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bcp_app.protocol import ucp
from bcp_app.protocol.names import A2A_EXTENSION_URI
from bcp_app.service.context import RequestContext
from bcp_app.service.negotiation import with_core_checkout_2026_01_11
from bcp_app.transports.a2a.actions import ACTIONS, message_parts, text_action
from bcp_app.transports.a2a.messages import CHECKOUT_KEY, GET_ORDER, ORDER_KEY, PAYMENT_KEY, SIGNALS_KEY

UCP_EXTENSION_URI = "https://ucp.dev/specification/reference?v=2026-01-11"
UCP_CHECKOUT_KEY = "a2a.ucp.checkout"
UCP_ORDER_KEY = "a2a.ucp.order"
UCP_PAYMENT_DATA_KEY = "a2a.ucp.checkout.payment_data"
UCP_RISK_SIGNALS_KEY = "a2a.ucp.checkout.risk_signals"


def requested_extensions(headers: Mapping[str, str]) -> set[str]:
    return {item.strip() for item in headers.get("a2a-extensions", "").split(",") if item.strip()}


def speaks_ucp(headers: Mapping[str, str]) -> bool:
    """The platform activated UCP's extension and not BCP's (with both, BCP's names win: BCP stays as it is)."""
    requested = requested_extensions(headers)
    return UCP_EXTENSION_URI in requested and A2A_EXTENSION_URI not in requested


def agent_header(headers: Mapping[str, str]) -> str | None:
    """`BCP-Agent`, else UCP's `UCP-Agent` (the same RFC 8941 Dictionary with `profile`)."""
    return headers.get("bcp-agent") or headers.get("ucp-agent")


def served_context(headers: Mapping[str, str], message: dict[str, Any], ctx: RequestContext) -> RequestContext:
    """The caller's context for `message`: on UCP's face, a checkout intent (`actions.ACTIONS` but the order's read,
    or a sentence that is not a policies question) runs under the capabilities UCP REST runs checkout operations
    under (`negotiation.with_core_checkout_2026_01_11`: a 2026-01-11 profile that names no checkout is served the
    core checkout). Carts, orders' actions, subscriptions and policies, and BCP's face, keep `ctx` as negotiated."""
    if not speaks_ucp(headers):
        return ctx
    structured, _, text = message_parts(message)
    action = structured.get("action") if structured else None
    checkout_intent = action in ACTIONS - {GET_ORDER} if structured else text_action(text) is None
    if not checkout_intent:
        return ctx
    capabilities = with_core_checkout_2026_01_11(ctx.profile, ctx.capabilities)
    return ctx if capabilities is ctx.capabilities else replace(ctx, capabilities=capabilities)


# The intents that create or update a checkout: their part carries what a UCP REST Create/Update body would
# (`payment`, `currency`), read with the same map and answered with the same warnings.
CHECKOUT_WRITES = frozenset({"add_to_checkout", "update_checkout"})


def _data_in(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "payment" and data.get("action") in CHECKOUT_WRITES and value is not None:
            out[key] = ucp.payment_request_to_bcp(value)  # 2026-01-11's selected_instrument_id, as UCP REST
        elif key == UCP_PAYMENT_DATA_KEY:
            out[PAYMENT_KEY] = ucp.complete_request_to_bcp({"payment_data": value}).get("payment", value)
        elif key == UCP_RISK_SIGNALS_KEY:
            out[SIGNALS_KEY] = value
        elif key == UCP_CHECKOUT_KEY and isinstance(value, dict):
            out[CHECKOUT_KEY] = ucp.checkout_request_to_bcp(value)
        else:
            out[key] = value
    return out


def _with_data(message: dict[str, Any], rename: Any) -> dict[str, Any]:
    """`message` with `rename` applied to the data of each of its data parts."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        return dict(message)
    renamed = [
        {**part, "data": rename(part["data"])} if isinstance(part, dict) and isinstance(part.get("data"), dict)
        else part
        for part in parts
    ]  # fmt: skip
    return {**message, "parts": renamed}


def incoming_to_bcp(message: dict[str, Any]) -> dict[str, Any]:
    """A UCP platform's message with its data parts under BCP's names."""
    return _with_data(message, _data_in)


def checkout_request(message: dict[str, Any]) -> dict[str, Any] | None:
    """The intent part of a UCP platform's message that creates or updates a checkout (`CHECKOUT_WRITES`), as sent:
    what `ucp.with_request_warnings` reads for the reply. None for any other message."""
    for part in message.get("parts") or []:
        data = part.get("data") if isinstance(part, dict) else None
        if isinstance(data, dict) and "action" in data:  # the intent's part, as `actions.message_parts` picks it
            return data if data["action"] in CHECKOUT_WRITES else None
    return None


def _data_out(data: dict[str, Any], request: dict[str, Any] | None, late: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == CHECKOUT_KEY and isinstance(value, dict):
            checkout = ucp.with_request_warnings(value, request)
            out[UCP_CHECKOUT_KEY] = ucp.body_2026_08_25(checkout) if late else ucp.checkout_to_ucp(checkout)
        elif key == ORDER_KEY and isinstance(value, dict):
            out[UCP_ORDER_KEY] = ucp.body_2026_08_25(value) if late else ucp.order_to_ucp(value)
        else:
            out[key] = value  # our own extensions' parts (cart, policies, subscription) keep their BCP names
    return out


def _message_out(message: dict[str, Any], request: dict[str, Any] | None, late: bool) -> dict[str, Any]:
    out = _with_data(message, lambda data: _data_out(data, request, late))
    if isinstance(message.get("extensions"), list):
        out["extensions"] = [UCP_EXTENSION_URI if uri == A2A_EXTENSION_URI else uri for uri in message["extensions"]]
    return out


def reply_to_ucp(reply: dict[str, Any], request: dict[str, Any] | None = None, profile: Any = None) -> dict[str, Any]:
    """Our reply (a direct message, or `{"task": …}` of a Pix complete) with UCP's names and shapes; `request`: the
    Create/Update intent part it answers (`checkout_request`), whose warnings the checkout then carries; `profile`:
    the caller's resolved profile — one written in UCP 2026-08-25 gets that version's shapes, as on UCP REST."""
    late = ucp.platform_ucp_version(profile) == ucp.UCP_2026_08_25
    task = reply.get("task")
    if isinstance(task, dict):
        status = task.get("status")
        if isinstance(status, dict) and isinstance(status.get("message"), dict):
            task = {**task, "status": {**status, "message": _message_out(status["message"], request, late)}}
        return {**reply, "task": task}
    return _message_out(reply, request, late)


def card_extension(capabilities: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The Agent Card's entry for UCP's extension: its capabilities in 2026-01-11's list form and names."""
    listed = []
    for name, entries in capabilities.items():
        ucp_name = ucp.to_ucp_name(name)
        local = ucp_name.removeprefix("dev.ucp.shopping.")
        if local != ucp_name and local not in ucp.CAPABILITIES_2026_01_11:
            continue  # not in 2026-01-11 (the cart): offered to BCP platforms only
        for entry in entries:
            item: dict[str, Any] = {"name": ucp_name, "version": ucp.UCP_2026_01_11}
            extends = entry.get("extends")
            if isinstance(extends, list):
                extends = extends[0] if extends else None
            if isinstance(extends, str):
                item["extends"] = ucp.to_ucp_name(extends)
            if not ucp_name.startswith("dev.ucp."):
                item["version"] = entry.get("version")  # our own extensions keep BCP's version
            listed.append(item)
    return {
        "uri": UCP_EXTENSION_URI,
        "description": "Business agent supporting UCP (2026-01-11), on the same engine as BCP",
        "required": False,
        "params": {"capabilities": listed},
    }
