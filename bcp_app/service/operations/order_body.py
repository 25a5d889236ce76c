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

MEMO_SIZE = 512  # orders remembered per process (a few KB each)
_memo: dict[tuple[Any, ...], bytes] = {}


def order_result(order: Any, ctx: RequestContext) -> OperationResult:
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
    if (
        not order.bcp_json
        or ctx.has(FISCAL_DOCUMENT)
        or ctx.has(ORDER_ACTIONS)
        or not isinstance(kept, list)
        or not kept
    ):
        return None
    return (
        order.bcp_json,
        order.permalink_url,
        ctx.capabilities.get(ORDER, PROTOCOL_VERSION),
        orjson.dumps(kept, option=orjson.OPT_SORT_KEYS),  # the snapshot's content, in one canonical form
        getattr(order, "language", None),
    )
