"""A2A intents → BCP operations (BCP.md §13.3): product resolution, request bodies, contexts, messageId
idempotency, action dispatch and replies.

`handle_message(ctx, message)` is synchronous Django code called by the A2A server. It holds no business
rule: every change goes through `bcp_app.service.operations` (the same operations as REST and MCP); this
module only turns an intent into the operation's request body and the result into a reply. Read top down:

- Products come from `operations.find_products` (the checkout capability must be negotiated, like every
  other transport's reads): ids typed or sent by the platform, or the catalog's full-text search, matched by
  the pure `messages.match_product`. A refusal (an Error Response) is handed back as the `OperationResult`.
- Request bodies: BCP update is a full replacement (BCP.md §4.3), so an intent such as "add one more item"
  is the current writable state with that change, sent to `update_checkout`. Each returns the operation's
  response body (a checkout, or a §5.3 Error Response).
- Intents beyond the checkout vocabulary (§13.3 is open): `policies.search` and the cart intents, answered
  with a text part and a data part (`a2a.bcp.policies`, `a2a.bcp.cart`).
- `contextId` is created by the shop and stored in `A2AContext` with its checkout and caller; a later
  message with it continues that checkout; a terminal checkout lets the context start a new one.
- `messageId` is the idempotency key per caller (BCP-A2A-07): same id + same message → the stored reply,
  nothing re-executed; same id + another message → `idempotency_conflict`. A `get_order` message is read
  first and recorded with its reply in one statement (`reads.py`), with the same records and answers.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import orjson
from django.db import IntegrityError, transaction

from bcp_app.models import A2AContext
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import field_path
from bcp_app.protocol.results import OperationResult
from bcp_app.service import a2a_tasks, idempotency, operations
from bcp_app.transports.a2a import messages as intents
from bcp_app.transports.a2a.messages import (
    CANDIDATES_KEY,
    CHECKOUT_KEY,
    COLORS,
    ORDER_KEY,
    PAYMENT_KEY,
    SIGNALS_KEY,
    Intent,
    Match,
    ProductCandidate,
    Reply,
    VariantCandidate,
    agent_message,
    data_part,
    fold,
    match_product,
    order_reply_text,
    reply_text,
    text_part,
)
from bcp_app.transports.a2a.order_actions import ORDER_ACTIONS, handle_order_action, order_id_of

SEARCH_LIMIT = 10


def _candidate(product: Any) -> ProductCandidate:
    variants = []
    for variant in product.variants.all():
        title = f"{product.title} — {variant.title}" if variant.title else product.title
        options = {str(k): str(v) for k, v in (variant.options or {}).items()}
        variants.append(
            VariantCandidate(
                sku=variant.sku,
                title=title,
                price=int(variant.price),
                options=options,
                variant_title=variant.title or "",
            )
        )
    return ProductCandidate(product_id=product.public_id, title=product.title, variants=tuple(variants))


def _by_id(ctx: Any, item_id: str) -> Match | OperationResult | None:
    """A SKU is the item itself; a `prod_…` id needs one variant; None when the id names nothing."""
    found = operations.find_products(ctx, item_id=item_id)
    if isinstance(found, OperationResult) or not found:
        return found or None
    candidate = _candidate(found[0])
    skus = [variant.sku for variant in candidate.variants]
    if item_id in skus:
        return Match(outcome="matched", sku=item_id)
    if len(skus) == 1:
        return Match(outcome="matched", sku=skus[0])
    if not skus:
        return Match(outcome="not_found")
    return Match(outcome="ambiguous", candidates=candidate.variants)


def resolve_item_id(ctx: Any, item_id: str) -> Match | OperationResult:
    """A structured `product_id`/`variant_id`. Unknown ids go to the checkout engine, which reports them as a
    business outcome (item_unavailable)."""
    if not item_id.startswith("prod_"):
        # A SKU goes to the engine as it is, with no lookup here: the add operation checks the negotiation,
        # prices it from the catalog cache and reports an unknown one as item_unavailable.
        return Match(outcome="matched", sku=item_id)
    match = _by_id(ctx, item_id)
    return Match(outcome="matched", sku=item_id) if match is None else match


def search_candidates(ctx: Any, query: str) -> list[ProductCandidate] | OperationResult:
    found = operations.find_products(ctx, query=query, limit=SEARCH_LIMIT)
    return found if isinstance(found, OperationResult) else [_candidate(product) for product in found]


def resolve_text(ctx: Any, intent: Intent) -> Match | OperationResult:
    """The variant a natural-language intent names, or candidates to ask about (never a guess)."""
    for typed in intent.ids:
        match = _by_id(ctx, typed)
        if match is not None:
            return match
    candidates = search_candidates(ctx, intent.query)
    if isinstance(candidates, OperationResult):
        return candidates
    if not candidates and (intent.colors or intent.sizes):
        # Colour words may be part of the product name ("Café Preto"): search with them too.
        candidates = search_candidates(ctx, " ".join([intent.query, *intent.colors]))
        if isinstance(candidates, OperationResult):
            return candidates
    return match_product(intent, candidates)


TERMINAL = frozenset({"completed", "canceled"})
_BUYER_FIELDS = ("first_name", "last_name", "email", "phone_number", "tax_id", "consent")
_ADDRESS_FIELDS = (
    "first_name",
    "last_name",
    "phone_number",
    "street_address",
    "extended_address",
    "address_locality",
    "address_region",
    "postal_code",
    "address_country",
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
        state["payment"] = {
            "instruments": [
                {key: instrument[key] for key in INSTRUMENT_STATE if key in instrument}
                for instrument in payment["instruments"]
            ]
        }
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


# Set by `_dispatch` when the message itself says its language (its words, or the request's Accept-Language).
SPOKEN = "a2a_language_spoken"
EDITABLE = frozenset({"incomplete", "ready_for_complete", "requires_escalation"})


def in_spoken_language(ctx: Any, state: dict[str, Any]) -> dict[str, Any]:
    """`state` with `context.language` set to the message's language when the message says one, so the checkout's
    messages follow the buyer's language like the reply's sentence (a buyer who starts in English and goes on in
    Portuguese is answered in Portuguese); a message of data parts alone keeps the checkout's language."""
    if ctx.extra.get(SPOKEN):
        context = state.get("context")
        state["context"] = {**(context if isinstance(context, dict) else {}), "language": ctx.language}
    return state


def checkout_language(checkout: dict[str, Any]) -> str:
    """The language a checkout speaks as its body shows it: its `context.language`, else the default pt-BR."""
    context = checkout.get("context")
    language = str(context.get("language") or "") if isinstance(context, dict) else ""
    return "en" if language.lower().startswith("en") else "pt-br"


def add_line(ctx: Any, current: dict[str, Any] | None, sku: str, quantity: int) -> dict[str, Any]:
    """Add `quantity` of `sku` (to its line when present); a missing or finished checkout starts a new one."""
    operations = _operations()
    if current is None or current.get("status") in TERMINAL:
        created = in_spoken_language(ctx, {"line_items": [{"item": {"id": sku}, "quantity": quantity}]})
        return operations.create_checkout(ctx, created).body
    state = in_spoken_language(ctx, writable_state(current))
    for line in state["line_items"]:
        if line["item"]["id"] == sku:
            line["quantity"] += quantity
            break
    else:
        state["line_items"].append({"item": {"id": sku}, "quantity": quantity})
    return operations.update_checkout(ctx, current["id"], state).body


def remove_lines(ctx: Any, current: dict[str, Any], line_ids: list[str], quantity: int | None) -> dict[str, Any]:
    """Remove the lines (or `quantity` units of a single line); removing every line cancels the checkout."""
    state = in_spoken_language(ctx, writable_state(current))
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
    """`update_checkout` intent: buyer, address, fulfillment choice, coupon, payment, context, lines (a `context`
    the message gives replaces the spoken language)."""
    state = in_spoken_language(ctx, writable_state(current))
    for key in ("line_items", "context", "payment", "fulfillment", "signals"):
        if key in changes:
            state[key] = changes[key]
    buyer = changes.get("buyer")
    if isinstance(buyer, dict):
        state["buyer"] = {**state.get("buyer", {}), **buyer}
    elif buyer is not None:
        state["buyer"] = buyer  # not an object: the operation's validation names it, as on REST and MCP
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
    if address is not None:
        method["type"] = "shipping"
        # Not an object: passed on as it came, so the operation's validation names it instead of dropping it.
        written = address
        if isinstance(address, dict):
            written = {key: value for key, value in address.items() if key != "id"}
        method["destinations"] = [written]
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


POLICIES_KEY = "a2a.bcp.policies"
CART_KEY = "a2a.bcp.cart"
SUBSCRIPTION_KEY = "a2a.bcp.subscription"
# The subscription extension (issue 38): {"action": "create_subscription", "subscription": {...}} and
# {"action": "get_subscription" | "cancel_subscription", "subscription_id": "sub_…"}.
SUBSCRIPTION_ACTIONS = frozenset({"create_subscription", "get_subscription", "cancel_subscription"})
POLICIES_SEARCH = "policies.search"
CART_ACTIONS = frozenset({"create_cart", "get_cart", "update_cart", "cancel_cart"})
CONVERT = "create_checkout"  # {"action": "create_checkout", "cart_id"?}: the cart becomes the context's checkout
# cancel_order, request_return: extension br.dev.bcp.shopping.order_actions (a2a/order_actions.py, issue 35)
MORE_ACTIONS = frozenset({POLICIES_SEARCH, CONVERT, *CART_ACTIONS, *ORDER_ACTIONS, *SUBSCRIPTION_ACTIONS})

# A question about the shop's rules, not an instruction to change the checkout.
_POLICY_WORDS = re.compile(
    r"\b(politica|politicas|policy|policies|termos? de uso|terms|privacidade|privacy|lgpd|trocas?|devolucao|"
    r"devolucoes|devolver|reembolso|refund|returns?|prazo de entrega|frete gratis|garantia|warranty)\b"
)
_CHANGE_VERBS = re.compile(
    r"\b(adicion\w*|coloc\w*|inclu\w*|remov\w*|tir\w*|add|remove|finaliz\w*|cancel\w*|"
    r"aplic\w*|cupom|coupon)\b"
)


def text_action(text: str) -> str | None:
    """`policies.search` for a question about the shop's policies ("qual é a política de trocas?"), else None."""
    folded = fold(text)
    if _POLICY_WORDS.search(folded) and not _CHANGE_VERBS.search(folded):
        return POLICIES_SEARCH
    return None


def _cart_id(row: Any, structured: dict[str, Any]) -> str:
    cart_id = structured.get("cart_id") or (row.data or {}).get("cart_id")
    if not isinstance(cart_id, str) or not cart_id:
        raise ProtocolError("invalid_request", "Informe cart_id (ou crie um carrinho com create_cart).")
    return cart_id


def _cart_reply(row: Any, body: dict[str, Any], language: str) -> dict[str, Any]:
    if isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error":
        row.data = {**(row.data or {}), "cart_id": body["id"]}
        row.save(update_fields=["data", "updated_at"])
        text = "Cart updated." if language == "en" else "Carrinho atualizado."
    else:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
    return agent_message(context_id=row.context_id, parts=[text_part(text), data_part({CART_KEY: body})])


def _carts(ctx: Any, row: Any, action: str, structured: dict[str, Any]) -> dict[str, Any]:
    if action == "create_cart":
        # Paths from the data part's root (`$.cart.line_items[0].quantity`), as MCP names them (BCP-ERR-05).
        body = operations.create_cart(ctx, structured.get("cart") or {}, under=("cart",)).body
        return _cart_reply(row, body, ctx.language)
    if action == CONVERT:
        body = operations.create_checkout(ctx, {"cart_id": _cart_id(row, structured), "line_items": []}).body
        if isinstance(body.get("id"), str) and body.get("ucp", {}).get("status") != "error":
            row.checkout_id = body["id"]  # later checkout intents continue this checkout
            row.save(update_fields=["checkout_id", "updated_at"])
        return agent_message(context_id=row.context_id, parts=[data_part({CHECKOUT_KEY: body})])
    cart_id = _cart_id(row, structured)
    if action == "get_cart":
        body = operations.get_cart(ctx, cart_id).body
    elif action == "update_cart":
        body = operations.update_cart(ctx, cart_id, structured.get("cart") or {}, under=("cart",)).body
    else:
        body = operations.cancel_cart(ctx, cart_id).body
    return _cart_reply(row, body, ctx.language)


def _subscriptions(ctx: Any, row: Any, action: str, structured: dict[str, Any]) -> dict[str, Any]:
    """The same operations as REST and MCP; the subscription (or its Error Response) under `a2a.bcp.subscription`."""
    if action == "create_subscription":
        subscription = structured.get("subscription") or {}
        body = operations.create_subscription(ctx, subscription, under=("subscription",)).body
    else:
        subscription_id = structured.get("subscription_id")
        if not isinstance(subscription_id, str) or not subscription_id:
            raise ProtocolError("invalid_request", f"{action} precisa de subscription_id.")
        call = operations.get_subscription if action == "get_subscription" else operations.cancel_subscription
        body = call(ctx, subscription_id).body
    messages = body.get("messages") or []
    text = " ".join(str(m.get("content", "")) for m in messages) or str(body.get("status", ""))
    return agent_message(context_id=row.context_id, parts=[text_part(text), data_part({SUBSCRIPTION_KEY: body})])


def handle(ctx: Any, row: Any, action: str, structured: dict[str, Any], text: str) -> dict[str, Any]:
    """The reply to one of `MORE_ACTIONS` (`row`: the conversation's `A2AContext`)."""
    context_id = row.context_id
    if action in CART_ACTIONS or action == CONVERT:
        return _carts(ctx, row, action, structured)
    if action in ORDER_ACTIONS:
        return handle_order_action(ctx, context_id, action, structured)
    if action in SUBSCRIPTION_ACTIONS:
        return _subscriptions(ctx, row, action, structured)

    if action == POLICIES_SEARCH:
        query = structured.get("query", text) if structured else text
        if not isinstance(query, str) or not query.strip():
            raise ProtocolError("invalid_request", "policies.search precisa de query (a pergunta do comprador).")
        body = operations.search_policies(ctx, {"query": query[:500], "language": structured.get("language")}).body
        return agent_message(context_id=context_id, parts=[text_part(body["answer"]), data_part({POLICIES_KEY: body})])
    raise ProtocolError("invalid_request", f"action desconhecida: {action!r}.")


OPERATION = "a2a_send_message"
MAX_TEXT = 2000
CONTEXT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_EXTRA_KEYS = frozenset({PAYMENT_KEY, SIGNALS_KEY, "ap2"})
ACTIONS = frozenset(
    {intents.ADD, intents.REMOVE, intents.UPDATE, intents.GET, intents.CANCEL, intents.COMPLETE, intents.GET_ORDER}
)


def handle_message(ctx: Any, message: dict[str, Any], *, language_given: bool = False) -> dict[str, Any]:
    """The reply `Message` (ProtoJSON dict) to one incoming A2A message, at most once per messageId."""
    message_id = message.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        raise ProtocolError("invalid_request", "message.messageId é obrigatório.")
    result = idempotency.run(
        principal=ctx.principal,
        operation=OPERATION,
        key=message_id,
        fingerprint=fingerprint(message),
        execute=lambda: stored_reply(_dispatch(ctx, message, language_given)),
        field_name="messageId",
    )
    return json.loads(result.body["message_json"])


FINGERPRINT_MEMO_SIZE = 1024  # distinct fingerprinted contents remembered per process
_fingerprints: dict[bytes, str] = {}


def fingerprint(message: dict[str, Any]) -> str:
    """A message's idempotency fingerprint (same messageId + another fingerprint → `idempotency_conflict`).

    Remembered per process by the fingerprinted members' orjson bytes (issue 34): the JCS encoding (`rfc8785`, pure
    Python) cost a few hundred microseconds per message, and an agent reading an order again sends the same
    conversation and parts under a new messageId, which the fingerprint leaves out. The bytes tell apart every two
    values whose JCS could differ: orjson keeps member order (another order is only a miss), 1 and 1.0, true and 1
    apart. Its one merge, NaN and infinities written as null, cannot happen here: a message is ProtoJSON
    (`message_to_dict`), and protobuf refuses to write those. What orjson refuses is fingerprinted as before."""
    fingerprinted = {key: message.get(key) for key in ("contextId", "taskId", "parts", "metadata", "referenceTaskIds")}
    try:
        key = orjson.dumps(fingerprinted)
    except TypeError:  # orjson.JSONEncodeError is one (a lone surrogate, an integer past 64 bits)
        return idempotency.fingerprint_jcs(fingerprinted)
    found = _fingerprints.get(key)
    if found is None:
        found = idempotency.fingerprint_jcs(fingerprinted)
        if len(_fingerprints) >= FINGERPRINT_MEMO_SIZE:
            _fingerprints.clear()  # bounded; forgetting only costs an encoding
        _fingerprints[key] = found
    return found


def stored_reply(reply: dict[str, Any]) -> OperationResult:
    """A reply as its idempotency record keeps it: JSON text, since Postgres jsonb would reorder the members of a
    replayed reply. Encoded by orjson (issue 34: `json.dumps` of the reply, order body included, was about 6 % of an
    A2A Get Order's CPU); what orjson refuses (a lone surrogate, an integer past 64 bits) by `json` as before. Either
    text reads back as the same reply."""
    return stored_reply_and_json(reply)[0]


def stored_reply_and_json(reply: dict[str, Any]) -> tuple[OperationResult, bytes | None]:
    """`stored_reply`, and the reply's compact JSON when orjson wrote it (the wire form of the reply itself, which
    the dispatcher then sends without encoding it again: `server.BcpDispatcher`); None when `json` did."""
    try:
        raw: bytes | None = orjson.dumps(reply)
    except TypeError:  # orjson.JSONEncodeError is one
        raw = None
    text = raw.decode() if raw is not None else json.dumps(reply)
    return OperationResult(status_code=200, body={"message_json": text}), raw


# --- context ---------------------------------------------------------------------------------------------


def _context(ctx: Any, context_id: str | None) -> A2AContext:
    """The caller's conversation: an existing `contextId` (bound to its caller) or a new one."""
    data = {"principal": ctx.principal, **({"language": ctx.language} if ctx.extra.get(SPOKEN) else {})}
    if not context_id:
        return A2AContext.objects.create(context_id=str(uuid.uuid4()), platform_id=ctx.platform_id or "", data=data)
    if not CONTEXT_ID.match(context_id):
        raise ProtocolError("invalid_request", "contextId deve ter de 1 a 64 caracteres [A-Za-z0-9._:-].")
    row = A2AContext.objects.filter(context_id=context_id).first()
    if row is None:
        # A contextId we never issued (e.g. created by another deployment): adopt it for this caller.
        try:
            with transaction.atomic():
                row = A2AContext.objects.create(context_id=context_id, platform_id=ctx.platform_id or "", data=data)
        except IntegrityError:
            row = A2AContext.objects.get(context_id=context_id)
    if row.data.get("principal") != ctx.principal:
        raise ProtocolError("forbidden", "Este contextId pertence a outra plataforma.")
    return row


def _conversation_language(ctx: Any, row: A2AContext) -> None:
    """A conversation speaks the language its buyer last used: a message with words (or an Accept-Language) sets
    it; a message of data parts alone speaks it (an order action's sentence, a question about candidates), where it
    spoke pt-BR in an English conversation."""
    if not ctx.extra.get(SPOKEN):
        ctx.language = row.data.get("language") or ctx.language
    elif row.data.get("language") != ctx.language:
        row.data = {**row.data, "language": ctx.language}
        row.save(update_fields=["data", "updated_at"])


def _remember(row: A2AContext, body: dict[str, Any]) -> None:
    checkout_id = body.get("id")
    if isinstance(checkout_id, str) and checkout_id != row.checkout_id:
        row.checkout_id = checkout_id
        row.save(update_fields=["checkout_id", "updated_at"])


# --- parts -------------------------------------------------------------------------------------------------


def message_parts(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(structured intent, merged extra data members, joined text) of the message parts."""
    action: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    texts: list[str] = []
    for part in message.get("parts") or []:
        if not isinstance(part, dict):
            continue
        data = part.get("data")
        if isinstance(data, dict):
            if "action" in data and not action:
                action = data
                # Payment, signals or ap2 may ride in the intent's own part.
                extra.update({key: value for key, value in data.items() if key in _EXTRA_KEYS})
            else:
                extra.update(data)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    # Intents are short sentences; a cap keeps parsing cheap whatever a caller sends.
    return action, extra, "\n".join(texts)[:MAX_TEXT]


def _int(value: Any, name: str, *, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53 - 1:
        # The member's JSONPath in the intent's data part, in the form every transport's validation error uses
        raise ProtocolError("invalid_request", f"Campo inválido {field_path((name,))}: deve ser um número inteiro ≥ 1")
    return value


# --- dispatch ------------------------------------------------------------------------------------------------


def _dispatch(ctx: Any, message: dict[str, Any], language_given: bool) -> dict[str, Any]:
    structured, extra, text = message_parts(message)
    # Words are read for their language only when no data part names the action (as the branches below do).
    ctx.extra[SPOKEN] = language_given or (not structured and bool(text.strip()))
    intent: intents.Intent | None = None
    if structured:
        action = structured.get("action")
        if action not in ACTIONS | MORE_ACTIONS:
            known = ", ".join(sorted(ACTIONS | MORE_ACTIONS))
            raise ProtocolError("invalid_request", f"action desconhecida: {action!r}. Use uma de: {known}.")
    elif (more := text_action(text)) is not None:
        action = more
        if not language_given:
            ctx.language = intents.detect_language(text)
    else:
        intent = intents.parse_intent(text)
        action = intent.action
        if not language_given:
            ctx.language = intent.language
    ctx.idempotency_key = message["messageId"]
    row = _context(ctx, message.get("contextId"))
    _conversation_language(ctx, row)
    ctx.extra["a2a_context_id"] = row.context_id
    if action in MORE_ACTIONS:
        return handle(ctx, row, str(action), structured, text)
    reply = _run(ctx, row, str(action), structured, extra, intent)
    if reply.checkout is not None:
        _remember(row, reply.checkout)
    if reply.task and reply.checkout is not None:
        return {"task": _open_task(ctx, row, reply.checkout)}
    return reply_message(row.context_id, reply)


def reply_message(context_id: str, reply: Reply) -> dict[str, Any]:
    """The direct `Message` carrying a `Reply`: its sentence, candidates, checkout and order, in that order."""
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append(text_part(reply.text))
    if reply.candidates:
        parts.append(data_part({CANDIDATES_KEY: reply.candidates}))
    if reply.checkout is not None:
        parts.append(data_part({CHECKOUT_KEY: reply.checkout}))
    if reply.order is not None:
        parts.append(data_part({ORDER_KEY: reply.order}))
    return agent_message(context_id=context_id, parts=parts)


def _run(
    ctx: Any,
    row: A2AContext,
    action: str,
    structured: dict[str, Any],
    extra: dict[str, Any],
    intent: intents.Intent | None,
) -> Reply:
    if action == intents.GET_ORDER:  # the context's checkout is not part of the answer: not read
        return get_order_reply(ctx, structured, intent)
    current = current_checkout(ctx, row.checkout_id) if row.checkout_id else None
    language = ctx.language
    if action == intents.UNKNOWN:
        return Reply(text=reply_text("help", language), checkout=current)
    if action == intents.ADD:
        if intent is not None:
            match = resolve_text(ctx, intent)
            quantity, query = intent.quantity or 1, intent.query
        else:
            item_id = next(
                (structured.get(k) for k in ("variant_id", "item_id", "sku", "product_id") if structured.get(k)), None
            )
            if not isinstance(item_id, str):
                raise ProtocolError("invalid_request", "add_to_checkout precisa de product_id (ou variant_id).")
            quantity = _int(structured.get("quantity"), "quantity", default=1)
            match = resolve_item_id(ctx, item_id)
            query = item_id  # a structured add names its product by id: a question quotes it (it quoted "")
        if isinstance(match, OperationResult):  # the checkout capability was not negotiated (BCP-NEG-06)
            return Reply(checkout=match.body)
        if match.outcome != "matched":
            candidates = [{"id": c.sku, "title": c.title, "price": c.price} for c in match.candidates]
            key = "ambiguous" if candidates else "not_found"
            return Reply(
                text=reply_text(key, language, query=query),
                candidates=candidates or None,
                checkout=current,
            )
        body = add_line(ctx, current, match.sku, quantity)
        return Reply(text=_summary("added", language, body, intent, quantity=quantity, sku=match.sku), checkout=body)
    if current is None:
        return Reply(text=reply_text("empty", language))
    if action == intents.GET:
        current = _in_spoken_language(ctx, current)
        return Reply(text=_summary("current", language, current, intent), checkout=current)
    if action == intents.CANCEL:
        body = cancel(ctx, current)
        return Reply(text=_refusal_or_summary("canceled", language, body, intent), checkout=body)
    if action == intents.REMOVE:
        return _remove(ctx, current, structured, intent)
    if action == intents.UPDATE:
        changes = dict(structured)
        if intent is not None:
            changes = {"coupon": intent.coupon}
        if PAYMENT_KEY in extra:
            changes["payment"] = extra[PAYMENT_KEY]
        body = update(ctx, current, changes)
        return Reply(text=_refusal_or_summary("updated", language, body, intent), checkout=body)
    # complete_checkout: its messages (and the order it places) in the language of the message asking for it, also
    # when the buyer switches language exactly at "finalizar compra".
    current = _in_spoken_language(ctx, current)
    complete_body: dict[str, Any] = {}
    if PAYMENT_KEY in extra:
        complete_body["payment"] = extra[PAYMENT_KEY]
    else:
        # "finalizar compra" without a payment part: complete with the instrument already selected.
        selected = [
            i for i in writable_state(current).get("payment", {}).get("instruments", []) if i.get("selected", True)
        ]
        if not selected:
            return Reply(text=reply_text("payment_needed", language), checkout=current)
        complete_body["payment"] = {"instruments": selected[:1]}
    if SIGNALS_KEY in extra:
        complete_body["signals"] = extra[SIGNALS_KEY]
    if isinstance(extra.get("ap2"), dict):
        complete_body["ap2"] = extra["ap2"]
    body = complete(ctx, current, complete_body)
    refusal = _status_refusal(body)
    if refusal and intent is not None:
        # Not submitted: the checkout's own refusal is the whole answer, in the checkout's language (a completed one
        # takes no change of language), not "Pedido enviado para finalização" beside it.
        return Reply(text=refusal, checkout=body, task=_awaits_pix(body))
    return Reply(text=_summary("completed", language, body, intent), checkout=body, task=_awaits_pix(body))


def _refusal_or_summary(
    key: str, language: str, body: dict[str, Any], intent: intents.Intent | None, **values: Any
) -> str:
    """The sentence of a change ("atualizar", "cancelar"): the checkout's own `invalid_checkout_status` refusal
    alone when it took none (e.g. on a completed checkout), in the checkout's language, as for "finalizar compra";
    else the change's summary."""
    refusal = _status_refusal(body)
    if refusal and intent is not None:
        return refusal
    return _summary(key, language, body, intent, **values)


def _status_refusal(checkout: dict[str, Any]) -> str:
    """The content of the checkout's `invalid_checkout_status` (BCP §4.3: the operation is not allowed in its status,
    e.g. complete on `completed`), "" when it has none."""
    return " ".join(
        str(m.get("content", ""))
        for m in checkout.get("messages") or []
        if isinstance(m, dict) and m.get("type") == "error" and m.get("code") == "invalid_checkout_status"
    )


def _in_spoken_language(ctx: Any, current: dict[str, Any]) -> dict[str, Any]:
    """The checkout said again in the buyer's new language (the same state) when this message's words switched it;
    else as it is. A checkout whose Pix is paid already takes no change (PIX.md §3.1), its language neither: not
    asked (the update would only be refused)."""
    if not ctx.extra.get(SPOKEN) or current.get("status") not in EDITABLE or checkout_language(current) == ctx.language:
        return current
    if any(isinstance(m, dict) and m.get("code") == "pix_payment_received" for m in current.get("messages") or []):
        return current
    return update(ctx, current, {})


def _awaits_pix(checkout: dict[str, Any]) -> bool:
    """A complete that waits for a Pix payment (PIX.md §2: `complete_in_progress` until the PSP settles)."""
    if checkout.get("status") != "complete_in_progress":
        return False
    instruments = (checkout.get("payment") or {}).get("instruments") or []
    return any(i.get("type") == "pix" and i.get("selected", True) for i in instruments if isinstance(i, dict))


def _open_task(ctx: Any, row: A2AContext, checkout: dict[str, Any]) -> dict[str, Any]:
    """The Task answering a Pix complete (issue 35), pushed to the URL the platform named for it (`a2a_push`,
    set by the server from the message's `taskPushNotificationConfig`) or its registered one at settlement."""
    push_url, push_token = ctx.extra.get("a2a_push") or ("", "")
    task = a2a_tasks.task_open(
        ctx, context_id=row.context_id, checkout=checkout, push_url=push_url, push_token=push_token
    )
    row.task_id, row.task_state = task["id"], task["status"]["state"]
    row.save(update_fields=["task_id", "task_state", "updated_at"])
    return task


def _remove(ctx: Any, current: dict[str, Any], structured: dict[str, Any], intent: intents.Intent | None) -> Reply:
    language = ctx.language
    lines = current.get("line_items") or []
    if intent is not None:
        if intent.everything:
            chosen = list(lines)
        else:
            chosen = lines_matching(lines, intent)
            if len(chosen) > 1:
                candidates = [
                    {"id": line["item"]["id"], "title": line["item"]["title"], "line_item_id": line["id"]}
                    for line in chosen
                ]
                return Reply(text=reply_text("ambiguous_line", language), candidates=candidates, checkout=current)
        quantity = intent.quantity
    else:
        wanted = {structured.get(k) for k in ("line_item_id", "variant_id", "item_id", "sku", "product_id")} - {None}
        if not wanted:
            raise ProtocolError("invalid_request", "remove_from_checkout precisa de line_item_id ou product_id.")
        chosen = [line for line in lines if line["id"] in wanted or line["item"]["id"] in wanted]
        quantity = None if structured.get("quantity") is None else _int(structured.get("quantity"), "quantity")
    if not chosen:
        return Reply(text=reply_text("line_not_found", language), checkout=current)
    body = remove_lines(ctx, current, [line["id"] for line in chosen], quantity)
    return Reply(text=_summary("removed", language, body, intent), checkout=body)


def get_order_reply(ctx: Any, structured: dict[str, Any], intent: intents.Intent | None) -> Reply:
    """BCP §7 Get Order through the same operation as REST and MCP: the same order object (with the
    negotiated extensions, e.g. `fiscal_documents`) or its Error Response, under `a2a.bcp.order`."""
    order_id = intent.ids[0] if intent is not None else order_id_of(structured, "get_order")
    body = operations.get_order(ctx, order_id).body
    # Structured intents get the bare data part (as the seed's checkout intents); text also gets a sentence, and
    # so does an Error Response (not found, not this platform's), as `cancel_order` says why (order_actions.py).
    said = intent is not None or not body.get("id")
    return Reply(text=order_reply_text(ctx.language, body) if said else "", order=body)


def _summary(key: str, language: str, body: dict[str, Any], intent: intents.Intent | None, **values: Any) -> str:
    # Structured intents get the seed's bare data part; natural language also gets a sentence.
    if intent is None:
        return ""
    return reply_text(key, language, checkout=body, **values)
