"""Intent → operation request bodies. BCP update is a full replacement (BCP.md §4.3), so an A2A intent
such as "add one more item" is the current writable state with that change, sent to `update_checkout`.

Every function returns the operation's response body (a checkout, or a §5.3 Error Response).
"""

from __future__ import annotations

from typing import Any

from bcp_app.service import operations
from bcp_app.transports.a2a.intents import COLORS, Intent, fold

TERMINAL = frozenset({"completed", "canceled"})
_BUYER_FIELDS = ("first_name", "last_name", "email", "phone_number", "tax_id", "consent")
_ADDRESS_FIELDS = (
    "first_name", "last_name", "phone_number", "street_address", "extended_address", "address_locality",
    "address_region", "postal_code", "address_country",
)


def _operations() -> Any:
    return operations


def is_checkout(body: dict[str, Any] | None) -> bool:
    return isinstance(body, dict) and isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error"


def current_checkout(ctx: Any, checkout_id: str) -> dict[str, Any] | None:
    body = _operations().get_checkout(ctx, checkout_id).body
    return body if is_checkout(body) else None


def writable_state(checkout: dict[str, Any]) -> dict[str, Any]:
    """The request body that reproduces `checkout`'s writable state (response-only members dropped)."""
    state: dict[str, Any] = {
        "line_items": [
            {"id": line["id"], "item": {"id": line["item"]["id"]}, "quantity": line["quantity"]}
            for line in checkout.get("line_items") or []
            if not line.get("parent_id")
        ]
    }
    buyer = checkout.get("buyer")
    if isinstance(buyer, dict):
        state["buyer"] = {key: buyer[key] for key in _BUYER_FIELDS if buyer.get(key)}
    if isinstance(checkout.get("context"), dict):
        state["context"] = checkout["context"]
    fulfillment = checkout.get("fulfillment")
    if isinstance(fulfillment, dict) and fulfillment.get("methods"):
        state["fulfillment"] = {"methods": [_method_state(method) for method in fulfillment["methods"]]}
    discounts = checkout.get("discounts")
    if isinstance(discounts, dict) and discounts.get("codes"):
        state["discounts"] = {"codes": list(discounts["codes"])}
    payment = checkout.get("payment")
    if isinstance(payment, dict) and payment.get("instruments"):
        state["payment"] = {"instruments": [
            {key: instrument[key] for key in INSTRUMENT_STATE if key in instrument}
            for instrument in payment["instruments"]
        ]}
    return state


# What a full-replacement update must repeat of an instrument (a card's installments included).
INSTRUMENT_STATE = ("id", "handler_id", "type", "selected", "installments")


def _method_state(method: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = {"type": method.get("type", "shipping")}
    for key in ("id", "line_item_ids", "selected_destination_id"):
        if method.get(key) is not None:
            state[key] = method[key]
    # Pickup locations are business-owned and ignored on input; only shipping addresses are written.
    destinations = [
        {key: value for key, value in destination.items() if key == "id" or key in _ADDRESS_FIELDS}
        for destination in method.get("destinations") or []
        if destination.get("type", "shipping_address") == "shipping_address"
    ]
    if destinations:
        state["destinations"] = destinations
    groups = [
        {key: group[key] for key in ("id", "selected_option_id") if group.get(key) is not None}
        for group in method.get("groups") or []
    ]
    if groups:
        state["groups"] = groups
    return state


def add_line(ctx: Any, current: dict[str, Any] | None, sku: str, quantity: int) -> dict[str, Any]:
    """Add `quantity` of `sku` (to its line when present); a missing or finished checkout starts a new one."""
    operations = _operations()
    if current is None or current.get("status") in TERMINAL:
        return operations.create_checkout(ctx, {"line_items": [{"item": {"id": sku}, "quantity": quantity}]}).body
    state = writable_state(current)
    for line in state["line_items"]:
        if line["item"]["id"] == sku:
            line["quantity"] += quantity
            break
    else:
        state["line_items"].append({"item": {"id": sku}, "quantity": quantity})
    return operations.update_checkout(ctx, current["id"], state).body


def remove_lines(ctx: Any, current: dict[str, Any], line_ids: list[str], quantity: int | None) -> dict[str, Any]:
    """Remove the lines (or `quantity` units of a single line); removing every line cancels the checkout."""
    state = writable_state(current)
    kept = []
    for line in state["line_items"]:
        if line["id"] in line_ids:
            if quantity is not None and len(line_ids) == 1 and line["quantity"] > quantity:
                kept.append({**line, "quantity": line["quantity"] - quantity})
            continue
        kept.append(line)
    if not kept:
        return cancel(ctx, current)
    state["line_items"] = kept
    return _operations().update_checkout(ctx, current["id"], state).body


def update(ctx: Any, current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`update_checkout` intent: buyer, address, fulfillment choice, coupon, payment, context, lines."""
    state = writable_state(current)
    for key in ("line_items", "context", "payment", "fulfillment", "signals"):
        if key in changes:
            state[key] = changes[key]
    if isinstance(changes.get("buyer"), dict):
        state["buyer"] = {**state.get("buyer", {}), **changes["buyer"]}
    _apply_fulfillment_choice(state, changes)
    codes = changes.get("discount_codes", changes.get("codes"))
    if "coupon" in changes:
        codes = [changes["coupon"]] if changes["coupon"] else []
    if codes is not None:
        state["discounts"] = {"codes": list(codes) if isinstance(codes, list) else codes}
    return _operations().update_checkout(ctx, current["id"], state).body


def _apply_fulfillment_choice(state: dict[str, Any], changes: dict[str, Any]) -> None:
    address = changes.get("address", changes.get("shipping_address"))
    method_type = changes.get("fulfillment_type")
    destination_id = changes.get("selected_destination_id")
    option_id = changes.get("fulfillment_option_id", changes.get("selected_option_id"))
    if address is None and method_type is None and destination_id is None and option_id is None:
        return
    methods = state.setdefault("fulfillment", {"methods": []}).setdefault("methods", [])
    if not methods:
        methods.append({"type": method_type or "shipping"})
    method = methods[0]
    if method_type is not None and method_type != method.get("type"):
        method.clear()
        method["type"] = method_type
    if isinstance(address, dict):
        method["type"] = "shipping"
        method["destinations"] = [{key: value for key, value in address.items() if key != "id"}]
        method.pop("selected_destination_id", None)
        method.pop("groups", None)
    if destination_id is not None:
        method["selected_destination_id"] = destination_id
    if option_id is not None:
        groups = method.setdefault("groups", [{}])
        groups[0]["selected_option_id"] = option_id


def complete(ctx: Any, current: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return _operations().complete_checkout(ctx, current["id"], body).body


def cancel(ctx: Any, current: dict[str, Any]) -> dict[str, Any]:
    return _operations().cancel_checkout(ctx, current["id"]).body


def lines_matching(lines: list[dict[str, Any]], intent: Intent) -> list[dict[str, Any]]:
    """Checkout lines a natural-language remove names: by typed id, else by the words of the title."""
    if intent.ids:
        return [line for line in lines if line["item"]["id"] in intent.ids or line["id"] in intent.ids]
    wanted = [_stem(word) for word in fold(" ".join([intent.query, *intent.sizes])).split()]
    if not wanted and not intent.colors:
        return list(lines) if len(lines) == 1 else []
    found = []
    for line in lines:
        words = fold(str(line["item"].get("title", ""))).replace("/", " ").split()
        title = {_stem(word) for word in words}
        colors = {COLORS[word] for word in words if word in COLORS}
        if all(any(word == candidate or candidate.startswith(word) for candidate in title) for word in wanted) and all(
            color in colors for color in intent.colors
        ):
            found.append(line)
    return found


def _stem(word: str) -> str:
    # "camisetas" ~ "camiseta", "pretas" ~ "preta": enough for matching a line the buyer sees.
    word = word.strip(".,;:!?—-")
    return word[:-1] if len(word) > 3 and word.endswith("s") else word
