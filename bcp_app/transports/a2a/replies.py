"""Reply sentences of the A2A agent (pt-BR by default, English when the buyer writes or asks in English).

Only text parts use these; the checkout itself always travels as data (`a2a.bcp.checkout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernel.money import format_brl


@dataclass(frozen=True)
class Reply:
    text: str = ""
    checkout: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] | None = None
    order: dict[str, Any] | None = None


_TEXTS: dict[str, dict[str, str]] = {
    "help": {
        "pt-br": "Não entendi. Posso adicionar ou remover produtos (\"adicione 2 camisetas pretas M ao carrinho\"), "
        "aplicar um cupom, mostrar o carrinho, finalizar ou cancelar a compra.",
        "en": "Sorry, I did not understand. I can add or remove products (\"add a Pixel 10 Pro to my checkout\"), "
        "apply a coupon, show the checkout, complete or cancel the purchase.",
    },
    "ambiguous": {
        "pt-br": "Encontrei mais de uma opção para \"{query}\". Qual delas você quer? Responda com o id do item.",
        "en": "I found more than one option for \"{query}\". Which one do you want? Reply with the item id.",
    },
    "not_found": {
        "pt-br": "Não encontrei nenhum produto para \"{query}\". Pode descrever de outro jeito?",
        "en": "I could not find any product for \"{query}\". Could you describe it differently?",
    },
    "ambiguous_line": {
        "pt-br": "Há mais de um item no carrinho que corresponde. Qual deles devo remover?",
        "en": "More than one item in the checkout matches. Which one should I remove?",
    },
    "line_not_found": {
        "pt-br": "Esse item não está no carrinho.",
        "en": "That item is not in the checkout.",
    },
    "empty": {
        "pt-br": "Seu carrinho está vazio. Diga o que deseja comprar.",
        "en": "Your checkout is empty. Tell me what you would like to buy.",
    },
    "payment_needed": {
        "pt-br": "Para finalizar, escolha a forma de pagamento (por exemplo Pix) com update_checkout e "
        "a2a.bcp.checkout.payment.",
        "en": "To complete, choose the payment method (for example Pix) with update_checkout and "
        "a2a.bcp.checkout.payment.",
    },
    "added": {
        "pt-br": "Adicionei {quantity} × {title} ao carrinho.",
        "en": "Added {quantity} × {title} to your checkout.",
    },
    "removed": {"pt-br": "Pronto, removi do carrinho.", "en": "Done, removed from your checkout."},
    "updated": {"pt-br": "Carrinho atualizado.", "en": "Checkout updated."},
    "current": {"pt-br": "Este é o seu carrinho.", "en": "Here is your checkout."},
    "canceled": {"pt-br": "Compra cancelada.", "en": "Purchase canceled."},
    "completed": {"pt-br": "Pedido enviado para finalização.", "en": "Order submitted for completion."},
    "order": {"pt-br": "Este é o pedido {label}.", "en": "Here is order {label}."},
    "order_error": {"pt-br": "Não foi possível mostrar o pedido.", "en": "The order cannot be shown."},
}
_STATUS: dict[str, dict[str, str]] = {
    "incomplete": {"pt-br": "Ainda faltam dados para finalizar.", "en": "Some information is still missing."},
    "requires_escalation": {"pt-br": "É preciso continuar no site da loja.", "en": "Please continue on the shop site."},
    "ready_for_complete": {"pt-br": "Pronto para finalizar.", "en": "Ready to complete."},
    "complete_in_progress": {"pt-br": "Aguardando o pagamento.", "en": "Waiting for the payment."},
    "completed": {"pt-br": "Pedido confirmado.", "en": "Order confirmed."},
    "canceled": {"pt-br": "Este carrinho foi cancelado.", "en": "This checkout is canceled."},
}


brl = format_brl  # the one money module


def _total(checkout: dict[str, Any]) -> int | None:
    for total in checkout.get("totals") or []:
        if isinstance(total, dict) and total.get("type") == "total":
            return int(total.get("amount", 0))
    return None


def reply_text(key: str, language: str, *, checkout: dict[str, Any] | None = None, **values: Any) -> str:
    lang = "en" if language == "en" else "pt-br"
    if checkout is not None and "sku" in values:
        values.setdefault("title", next((line["item"].get("title", values["sku"])
                                         for line in checkout.get("line_items") or []
                                         if line.get("item", {}).get("id") == values["sku"]), values["sku"]))
    text = _TEXTS[key][lang].format(**{"query": "", **values})
    if checkout is None:
        return text
    status = checkout.get("status")
    if status is None:  # an Error Response: its message says what went wrong
        contents = [m.get("content", "") for m in checkout.get("messages") or [] if isinstance(m, dict)]
        return " ".join([text, *contents]).strip()
    extra = [_STATUS.get(str(status), {}).get(lang, "")]
    if status in {"incomplete", "requires_escalation"}:
        # Say what is missing: the checkout's own error messages (already in the checkout's language).
        extra += [str(m.get("content", "")) for m in checkout.get("messages") or []
                  if isinstance(m, dict) and m.get("type") == "error"][:3]
    total = _total(checkout)
    if total is not None:
        extra.append(f"Total: {brl(total)}.")
    order = checkout.get("order")
    if isinstance(order, dict) and order.get("permalink_url"):
        extra.append(("Order page: " if lang == "en" else "Acompanhe o pedido: ") + str(order["permalink_url"]))
    return " ".join(part for part in [text, *extra] if part)


def order_reply_text(language: str, order: dict[str, Any]) -> str:
    """The sentence beside an `a2a.bcp.order` part: the order's label and page, or why it is not shown."""
    lang = "en" if language == "en" else "pt-br"
    if not order.get("id"):  # an Error Response (not found, not this platform's order)
        contents = [str(m.get("content", "")) for m in order.get("messages") or [] if isinstance(m, dict)]
        return " ".join([_TEXTS["order_error"][lang], *contents]).strip()
    text = _TEXTS["order"][lang].format(label=order.get("label") or order["id"])
    page = order.get("permalink_url")
    return f"{text} " + ("Order page: " if lang == "en" else "Acompanhe: ") + str(page) if page else text
