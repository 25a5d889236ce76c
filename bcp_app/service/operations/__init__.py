"""Transport-neutral BCP operations: REST, MCP and A2A call exactly these and only render the result.

Contract (for every transport):

    op(ctx: RequestContext, ...) -> OperationResult(status_code, body, headers, replayed)

* `ctx` comes from `bcp_app.service.context.resolve_context` (negotiated capabilities, caller, language,
  idempotency key). Operations never look at HTTP, JSON-RPC or A2A envelopes.
* Request bodies may be passed as the pydantic request model or as a plain mapping (validated
  here, unknown members ignored per BCP §1); a type error raises `ProtocolError("invalid_request")`
  naming the field, e.g. `line_items[0].quantity`.
* A business outcome is always an `OperationResult`: `body` is the BCP object (checkout, order,
  catalog response) or the §5.3 Error Response (`not_found`, `unauthorized`,
  `capabilities_incompatible`, impossible create); `status_code` is 201 for a created checkout and
  200 otherwise (REST uses it; MCP/A2A ignore it).
* A protocol failure raises `bcp_app.protocol.errors.ProtocolError` (nothing changed); transports map it
  to their error shape (REST status + `{code, content}`, JSON-RPC code + `data`).
* Idempotency is applied by the transport around the call with `bcp_app.service.idempotency.run` because
  the fingerprint is transport-specific (REST raw body, MCP JCS of name+arguments, A2A messageId);
  `idempotency.KEY_REQUIRED` says which operations need a key.

Operations: create_checkout, get_checkout, update_checkout, complete_checkout, cancel_checkout,
get_order, search_catalog, lookup_catalog, get_product; cancel_order and request_return (extension
order_actions, in `order_actions.py`); and for the agent tools that are not BCP
objects (A2A intents, seed 002 tools): find_products, stock_check, order_state (in `agent.py`).
Synchronous (ORM); async transports call them through `asgiref.sync.sync_to_async`.
"""

from __future__ import annotations

from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.validation import field_path, validate
from bcp_app.service import carts, policies, trust
from bcp_app.service.carts import checkout_from_cart, link_cart
from bcp_app.service.operations import checkout, order_actions, reads, subscriptions
from bcp_app.service.operations.agent import StockLine, find_products, order_state, stock_check

# The agent trust tiers (bcp_app/service/trust.py), applied here once for every transport: each operation a
# transport may call, with the permission it needs. Operations call each other through the unguarded names.
search_catalog = trust.guarded(trust.BROWSE)(reads.search_catalog)
lookup_catalog = trust.guarded(trust.BROWSE)(reads.lookup_catalog)
get_product = trust.guarded(trust.BROWSE)(reads.get_product)
search_policies = trust.guarded(trust.BROWSE)(policies.search_policies)
create_checkout = trust.guarded(trust.CHECKOUT_CREATE)(checkout.create_checkout)
get_checkout = trust.guarded(trust.CHECKOUT_CREATE)(checkout.get_checkout)
update_checkout = trust.guarded(trust.CHECKOUT_CREATE)(checkout.update_checkout)
cancel_checkout = trust.guarded(trust.CHECKOUT_CREATE)(checkout.cancel_checkout)
create_cart = trust.guarded(trust.CHECKOUT_CREATE)(carts.create_cart)
get_cart = trust.guarded(trust.CHECKOUT_CREATE)(carts.get_cart)
update_cart = trust.guarded(trust.CHECKOUT_CREATE)(carts.update_cart)
cancel_cart = trust.guarded(trust.CHECKOUT_CREATE)(carts.cancel_cart)
complete_checkout = trust.guarded(trust.CHECKOUT_COMPLETE)(checkout.complete_checkout)
get_order = trust.guarded(trust.ORDERS_READ)(reads.get_order)
cancel_order = trust.guarded(trust.ORDERS_ACT)(order_actions.cancel_order)
request_return = trust.guarded(trust.ORDERS_ACT)(order_actions.request_return)
# A subscription is a standing order the buyer authorizes once: made like a completed checkout, read and
# canceled like an order.
create_subscription = trust.guarded(trust.CHECKOUT_COMPLETE)(subscriptions.create_subscription)
get_subscription = trust.guarded(trust.ORDERS_READ)(subscriptions.get_subscription)
cancel_subscription = trust.guarded(trust.ORDERS_ACT)(subscriptions.cancel_subscription)

__all__ = [
    "OperationResult",
    "StockLine",
    "cancel_cart",
    "cancel_checkout",
    "cancel_order",
    "cancel_subscription",
    "checkout_from_cart",
    "complete_checkout",
    "create_cart",
    "create_checkout",
    "create_subscription",
    "field_path",
    "find_products",
    "get_cart",
    "get_checkout",
    "get_order",
    "get_product",
    "get_subscription",
    "link_cart",
    "lookup_catalog",
    "order_state",
    "request_return",
    "search_catalog",
    "search_policies",
    "stock_check",
    "update_cart",
    "update_checkout",
    "validate",
]
