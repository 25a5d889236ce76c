"""The Get Order body (BCP §7) of an order whose presentation is stored, remembered per process.

A stored order reads the same on every Get Order until a service rewrites its `bcp_json`, so the
validated wire bytes (`OrderResponse.produce` of `presenters.order`, then compact JSON) are kept under
everything they are made of: the stored JSON, the permalink, the negotiated order version and the
order's policy snapshot. Without a snapshot (today's store policies) or with the fiscal-document
capability (NF-e read live) the body is rendered every time. Issue 11: the render was a large part of
a GET order's Python.
"""

from __future__ import annotations

from typing import Any

import orjson

from bcp_app.protocol.names import FISCAL_DOCUMENT, ORDER, ORDER_ACTIONS, PROTOCOL_VERSION
from bcp_app.protocol.results import EncodedResult, OperationResult, body_bytes
from bcp_app.protocol.schemas.order import OrderResponse
from bcp_app.service import presenters
from bcp_app.service.context import RequestContext
from bcp_app.service.policies import kept_policies
from orders.selectors import OrderRow

MEMO_SIZE = 512  # orders remembered per process (a few KB each)
_memo: dict[tuple[Any, ...], bytes] = {}
# `row_result`'s way in: (order id, negotiated version) → (`_row_key`, bytes). Looking a key up in `_memo` hashes its
# stored JSON and policy texts, fresh strings on every read (about 1 % of a Get Order, issue 34); here a short key
# finds the entry and the texts are compared, which costs a memcmp when they are unchanged.
_by_order: dict[tuple[str, str], tuple[tuple[Any, ...], bytes]] = {}


def row_result(row: OrderRow, ctx: RequestContext) -> OperationResult:
    """Get Order's body of the row `order_row` read: the remembered bytes when the row's parts are known, without
    building the order's model (issue 34); else `order_result` of its model, remembered under the same parts."""
    key = _row_key(row, ctx)
    if key is None:
        order = row.order()
        if order is None:  # a row always builds its model; kept for the type
            raise ValueError("order_row: no order in the row")
        return order_result(order, ctx, key=None)
    short = (row.public_id, key[2])
    kept = _by_order.get(short)
    if kept is not None and kept[0] == key:
        return EncodedResult(kept[1])
    raw = _memo.get(key)
    if raw is None:
        order = row.order()
        if order is None:  # a row always builds its model; kept for the type
            raise ValueError("order_row: no order in the row")
        result = order_result(order, ctx, key=key)
        if _memo.get(key) is None:  # not remembered (a snapshot that does not parse): neither here
            return result
        raw = result.encoded
    if len(_by_order) >= MEMO_SIZE:
        _by_order.clear()  # bounded; forgetting only costs one `_memo` lookup
    _by_order[short] = (key, raw)
    return EncodedResult(raw)


def live_parts(ctx: RequestContext) -> bool:
    """Whether the body has parts read live (NF-e documents, the order actions' offers): then it is rendered from the
    whole order every time; else from its stored presentation, `order_row(whole=False)`'s columns."""
    return ctx.has(FISCAL_DOCUMENT) or ctx.has(ORDER_ACTIONS)


def _row_key(row: OrderRow, ctx: RequestContext) -> tuple[Any, ...] | None:
    """`_key` of the row's model, with the policy snapshot as the database's JSON text (one text per content: jsonb)
    instead of its canonical dump; a row that came as a model has no such text and gets `_key` itself."""
    text = row.policies_text
    if text is None:
        order = row.order()
        return _key(order, ctx) if order is not None else None
    # `_key`'s conditions: a stored body, no live parts negotiated, a non-empty list (jsonb writes `[]` for none)
    if not row.bcp_json or live_parts(ctx) or text[:1] != "[" or text == "[]":
        return None
    return (row.bcp_json, row.permalink_url, ctx.capabilities.get(ORDER, PROTOCOL_VERSION), text, row.language)


_COMPUTED = object()  # `order_result` computes the key from the order


def order_result(order: Any, ctx: RequestContext, *, key: Any = _COMPUTED) -> OperationResult:
    """The order's Get Order body, remembered under `key` (`_key` of the order unless given: `row_result`'s)."""
    if key is _COMPUTED:
        key = _key(order, ctx)
    raw = _memo.get(key) if key is not None else None
    if raw is None:
        raw = body_bytes(OrderResponse.produce(presenters.order(order, ctx)))
        # a snapshot that does not parse is rendered with today's policies: not fixed by the key, not remembered
        if key is not None and kept_policies(getattr(order, "policies", None)) is not None:
            if len(_memo) >= MEMO_SIZE:
                _memo.clear()  # bounded; forgetting only costs a render
            _memo[key] = raw
    # The bytes are what REST sends and MCP's text block; the dict is decoded only for who reads it.
    return EncodedResult(raw)


def _key(order: Any, ctx: RequestContext) -> tuple[Any, ...] | None:
    kept = getattr(order, "policies", None)
    # Only a valid snapshot fixes the policies (checked once, when the body is remembered); otherwise
    # presenters.order reads today's store settings.
    if not order.bcp_json or live_parts(ctx) or not isinstance(kept, list) or not kept:
        return None
    return (
        order.bcp_json,
        order.permalink_url,
        ctx.capabilities.get(ORDER, PROTOCOL_VERSION),
        # the snapshot's content in one canonical form (bytes: never equal to `_row_key`'s text of the same content,
        # so the two keys of one order hold the same body twice at worst)
        orjson.dumps(kept, option=orjson.OPT_SORT_KEYS),
        getattr(order, "language", None),
    )
