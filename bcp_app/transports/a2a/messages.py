"""What the A2A agent reads and says (BCP.md §13.3): intents parsed from text parts, reply sentences, and
the wire format of the messages that carry them. Everything here is pure: no database, no operation.

Intents. `parse_intent(text)` gives the same `Intent` for the same text (Portuguese and English). It
recognises the BCP A2A action vocabulary — add, remove, get, cancel, complete, apply a coupon — plus a
quantity, the product words for the catalog search, sizes, colours and SKU-like ids. `match_product(intent,
candidates)` picks exactly one variant or answers "ambiguous" with the candidates (never a guess) or
"not_found"; the catalog search itself happens in `actions`.

Replies. The sentences of the agent, pt-BR by default and English when the buyer writes or asks in English.
Only text parts use them; the checkout itself always travels as data (`a2a.bcp.checkout`).

Wire. ProtoJSON dicts ↔ SDK protobuf messages, integers kept integers: the SDK carries `Part.data` as a
protobuf `Value`, which stores every number as a double (599900 comes out as 599900.0). BCP money is integer
centavos (BCP.md §1), so integral floats are turned back into ints on the way in (`intify`) and replies are
rendered from our own dicts on the way out.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Message, Part, Role
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from bcp_app.protocol.names import A2A_EXTENSION_URI
from kernel.money import format_brl

CHECKOUT_KEY = "a2a.bcp.checkout"
PAYMENT_KEY = "a2a.bcp.checkout.payment"
SIGNALS_KEY = "a2a.bcp.checkout.signals"
CANDIDATES_KEY = "a2a.bcp.candidates"
ORDER_KEY = "a2a.bcp.order"  # the order (BCP §7) read with the get_order intent, extensions included
JSON_MEDIA_TYPE = "application/json"
MAX_SAFE_INTEGER = 2**53 - 1


def intify(value: Any) -> Any:
    """Integral floats → int, recursively (1.0 → 1); other values unchanged."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        return {key: intify(item) for key, item in value.items()}
    if isinstance(value, list):
        return [intify(item) for item in value]
    return value


def message_to_dict(message: Message) -> dict[str, Any]:
    """ProtoJSON of an incoming message with integers restored (the idempotency fingerprint uses it)."""
    return intify(MessageToDict(message))


def data_part(data: dict[str, Any]) -> dict[str, Any]:
    return {"data": data, "mediaType": JSON_MEDIA_TYPE}


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def agent_message(*, context_id: str, parts: list[dict[str, Any]], message_id: str | None = None) -> dict[str, Any]:
    """A direct reply in the seed's member order (BCP-A2A-05: ROLE_AGENT, the extension declared)."""
    return {
        "contextId": context_id,
        "messageId": message_id or str(uuid.uuid4()),
        "parts": parts,
        "role": "ROLE_AGENT",
        "extensions": [A2A_EXTENSION_URI],
    }


def to_proto(message: dict[str, Any]) -> Message:
    proto = Message(
        message_id=message["messageId"],
        context_id=message.get("contextId", ""),
        role=Role.ROLE_AGENT,
        extensions=list(message.get("extensions", [])),
    )
    for part in message["parts"]:
        if "data" in part:
            proto.parts.append(
                Part(data=ParseDict(part["data"], struct_pb2.Value()), media_type=part.get("mediaType", ""))
            )
        else:
            proto.parts.append(Part(text=part.get("text", "")))
    return proto


ADD = "add_to_checkout"
REMOVE = "remove_from_checkout"
UPDATE = "update_checkout"
GET = "get_checkout"
CANCEL = "cancel_checkout"
COMPLETE = "complete_checkout"
GET_ORDER = "get_order"  # [BCP proposal] read an order (BCP §7 Get Order) over A2A, like REST and MCP
UNKNOWN = "unknown"

MAX_QUANTITY = 999

NUMBER_WORDS: dict[str, int] = {
    "um": 1,
    "uma": 1,
    "dois": 2,
    "duas": 2,
    "tres": 3,
    "quatro": 4,
    "cinco": 5,
    "seis": 6,
    "sete": 7,
    "oito": 8,
    "nove": 9,
    "dez": 10,
    "doze": 12,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "a": 1,
    "an": 1,
}
ARTICLES = frozenset({"o", "os", "as", "the", "some", "mais", "more", "another", "outra", "outro", "me", "pra", "para"})
FILLER = frozenset(
    {
        "por",
        "favor",
        "please",
        "pls",
        "de",
        "do",
        "da",
        "dos",
        "das",
        "com",
        "with",
        "of",
        "e",
        "and",
        "tamanho",
        "tam",
        "size",
        "cor",
        "color",
        "colour",
        "na",
        "no",
        "em",
        "in",
        "unidade",
        "unidades",
        "unit",
        "units",
        "item",
        "itens",
        "items",
        "produto",
        "produtos",
        "product",
        "products",
    }
)
SIZES = frozenset({"pp", "p", "m", "g", "gg", "xg", "xgg", "eg", "xs", "s", "l", "xl", "xxl", "u", "unico"})
SIZE_WORDS = frozenset({"tamanho", "tam", "size"})
# Colour words (accents removed) → one canonical name, so "pretas", "Preto" and "black" all match "Preta".
COLORS: dict[str, str] = {}
for _canon, _words in {
    "preto": "preto preta pretos pretas black",
    "branco": "branco branca brancos brancas white",
    "azul": "azul azuis blue",
    "vermelho": "vermelho vermelha vermelhos vermelhas red",
    "verde": "verde verdes green",
    "amarelo": "amarelo amarela amarelos amarelas yellow",
    "rosa": "rosa rosas pink",
    "cinza": "cinza cinzas gray grey",
    "marrom": "marrom marrons brown",
    "bege": "bege beges beige",
    "roxo": "roxo roxa roxos roxas purple",
    "laranja": "laranja laranjas orange",
    "vinho": "vinho burgundy",
}.items():
    for _word in _words.split():
        COLORS[_word] = _canon

# Action patterns on the normalized text, tried in this order (cancel before complete: "cancelar a compra").
_CART = r"(carrinho|sacola|cesta|checkout|cart|basket|bag|pedido|order|compra|purchase)"
_ACTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (CANCEL, re.compile(rf"\b(cancel\w*|desist\w*|esvazi\w*|abandon\w*|empty (my |the )?{_CART})\b")),
    (
        COMPLETE,
        re.compile(
            r"\b(finaliz\w*|conclu\w*|fech(ar|e|a) (o |a |meu |minha )?(pedido|compra|carrinho)|pagar|pague|"
            r"complete|finish|finalize|place (the |my )?order|pay|check ?out now|complete_checkout)\b"
        ),
    ),
    (REMOVE, re.compile(r"\b(remov\w*|retir\w*|tira|tire|tirar|exclu\w*|delet\w*|apag\w*|take out|drop)\b")),
    (UPDATE, re.compile(r"\b(cupom|cupon|coupon|voucher|promo code|codigo promocional|discount code)\b")),
    (
        ADD,
        re.compile(
            r"\b(adicion\w*|acrescent\w*|coloc\w*|coloq\w*|ponha|poe|inclu\w*|quero|queria|gostaria( de)?|"
            r"compr(ar|e|o)|"
            r"add|put|include|buy|want|get me|i'?d like|id like)\b"
        ),
    ),
    (
        GET,
        re.compile(
            rf"\b(ver|veja|mostr\w*|exib\w*|show|view|see|what'?s in|o que tem|resumo|summary|status)\b"
            rf"|^(meu |minha |my )?"
            rf"{_CART}\??$"
        ),
    ),
)
# "… ao carrinho", "… to my checkout": the product words stop here.
_DESTINATION = re.compile(
    rf"\b(ao|a|no|na|pro|para o|para a|do|da|de|to|into|in|from|on|off)\s+(meu |minha |o |a |my |the |your )?{_CART}\b"
)
_PT_MARKERS = frozenset(
    {
        "adicione",
        "adicionar",
        "coloque",
        "quero",
        "carrinho",
        "ao",
        "no",
        "do",
        "da",
        "remova",
        "remover",
        "tire",
        "finalizar",
        "compra",
        "pedido",
        "cancelar",
        "cupom",
        "por",
        "favor",
        "meu",
        "minha",
        "ver",
        "mostrar",
        "um",
        "uma",
        "dois",
        "duas",
        "de",
        "e",
        "aplicar",
        "aplique",
        "finalize",
        "concluir",
    }
)
_EN_MARKERS = frozenset(
    {
        "add",
        "to",
        "my",
        "checkout",
        "cart",
        "remove",
        "the",
        "please",
        "complete",
        "place",
        "order",
        "cancel",
        "coupon",
        "apply",
        "show",
        "a",
        "an",
        "of",
        "and",
        "buy",
        "want",
        "finish",
        "pay",
        "what",
        "in",
        "hello",
        "hi",
        "help",
        "can",
        "you",
        "i",
        "thanks",
        "there",
        "is",
        "it",
    }
)
_EVERYTHING = [["tudo"], ["todos"], ["todas"], ["everything"], ["all"], ["all", "items"], ["todos", "os", "itens"]]
_SKU = re.compile(r"^(prod_[a-z0-9]+|[A-Z0-9][A-Z0-9._-]*[-_][A-Z0-9._-]+|[A-Z]{2,}[0-9][A-Z0-9]*)$")
_COUPON = re.compile(
    r"\b(?:cupom|cupon|coupon|voucher|promo code|c[oó]digo promocional|discount code)\b[\s:]*"
    r"(?:de desconto\s+|code\s+)?([A-Za-z0-9][A-Za-z0-9_-]{1,39})",
    re.IGNORECASE,
)


# An order's public id typed in the text ("status do pedido order_3f9a…"): the one thing A2A reads about orders.
_ORDER_ID = re.compile(r"\b(order_[A-Za-z0-9]{6,58})\b")


def fold(text: str) -> str:
    """Lowercase without accents ("Cafés Pretos" → "cafes pretos")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def _fold_aligned(text: str) -> str:
    # Same length as `text`, so offsets found in the folded text slice the original one.
    return "".join(folded if len(folded := fold(ch)) == 1 else ch.lower() for ch in text)


@dataclass(frozen=True)
class Intent:
    action: str
    language: str = "pt-br"  # "pt-br" | "en": the language of the reply text
    quantity: int | None = None  # None = not said (add → 1)
    query: str = ""  # product words for the catalog search (sizes and colours removed)
    sizes: tuple[str, ...] = ()  # upper-case sizes ("M", "GG", "42")
    colors: tuple[str, ...] = ()  # canonical colour names ("preto")
    ids: tuple[str, ...] = ()  # SKU-like or product ids typed verbatim
    coupon: str = ""
    everything: bool = False  # "remove tudo" / "remove everything"


def detect_language(text: str) -> str:
    # Only plain words count: an order or checkout id ("ord_a1is2it…") would otherwise lend its random
    # letters ("is", "it", "a") to English.
    plain = " ".join(token for token in text.split() if not re.search(r"[\d_]", token))
    words = re.findall(r"[a-z']+", fold(plain))
    portuguese = sum(word in _PT_MARKERS for word in words)
    english = sum(word in _EN_MARKERS for word in words)
    return "en" if english > portuguese else "pt-br"


def _tokens(text: str) -> list[str]:
    return re.findall(r"[\w][\w.\-/']*", text)


def _product_words(segment: str) -> tuple[int | None, list[str], list[str], list[str], list[str]]:
    """Split the text after the verb into (quantity, query words, sizes, colours, ids)."""
    tokens = [token.strip(".-/'") for token in _tokens(segment)]
    tokens = [token for token in tokens if token]
    quantity: int | None = None
    position = 0
    # Leading articles and quantity ("mais 2", "a", "2x", "duas"); a later number belongs to the name.
    while position < len(tokens):
        word = fold(tokens[position])
        number = re.fullmatch(r"(\d{1,4})x?|x(\d{1,4})", word)
        if number and quantity is None:
            quantity = int(number.group(1) or number.group(2))
            position += 1
        elif word in NUMBER_WORDS and quantity is None:
            quantity = NUMBER_WORDS[word]
            position += 1
        elif word in ARTICLES:
            position += 1
        else:
            break
    query: list[str] = []
    sizes: list[str] = []
    colors: list[str] = []
    ids: list[str] = []
    after_size_word = False
    for token in tokens[position:]:
        word = fold(token)
        if word in SIZE_WORDS:
            after_size_word = True
            continue
        # "M" counts as a size when written in capitals or after "tamanho"/"size"; "m" alone is noise.
        is_size = (word in SIZES and (token.isupper() or after_size_word)) or (after_size_word and word.isdigit())
        if is_size:
            sizes.append(token.upper())
        elif word in COLORS:
            colors.append(COLORS[word])
        elif _SKU.match(token):
            ids.append(token)
        elif word in FILLER or word in {"a", "an", "um", "uma"}:
            pass
        else:
            query.append(token)
        after_size_word = False
    # A trailing "x2" / "quantidade 2" style quantity.
    if quantity is None and len(query) >= 2 and re.fullmatch(r"x\d{1,4}", fold(query[-1])):
        quantity = int(query.pop()[1:])
    return quantity, query, sizes, colors, ids


def parse_intent(text: str) -> Intent:
    """The intent of one text part. Unrecognised text → action `unknown` (the agent asks, never guesses)."""
    text = " ".join((text or "").split())
    language = detect_language(text)
    folded = _fold_aligned(text)
    action, found = UNKNOWN, None
    for candidate, pattern in _ACTIONS:
        found = pattern.search(folded)
        if found:
            action = candidate
            break
    order_id = _ORDER_ID.search(text)
    if order_id:
        # A text naming an order is about that order, never the conversation's checkout: "cancele o pedido
        # order_…" cancelled the buyer's open checkout. The order is shown (its `order_actions` say what may be
        # done: cancel and return are structured actions).
        return Intent(action=GET_ORDER, language=language, ids=(order_id.group(1),))
    if found is None:
        return Intent(action=UNKNOWN, language=language)
    if action == UPDATE:
        coupon = _COUPON.search(text)
        if coupon is None:
            return Intent(action=UNKNOWN, language=language)
        return Intent(action=UPDATE, language=language, coupon=coupon.group(1).upper())
    if action not in {ADD, REMOVE}:
        return Intent(action=action, language=language)
    # The product words are what follows the verb, up to "ao carrinho" / "to my checkout".
    rest_start = found.end()
    destination = _DESTINATION.search(folded, rest_start)
    rest = text[rest_start : destination.start() if destination else len(text)]
    quantity, query, sizes, colors, ids = _product_words(rest)
    if action == REMOVE and [fold(word) for word in query] in _EVERYTHING and not (sizes or colors or ids):
        return Intent(action=REMOVE, language=language, everything=True)
    if quantity is not None and not 1 <= quantity <= MAX_QUANTITY:
        quantity = None if quantity == 0 and action == REMOVE else min(max(quantity, 1), MAX_QUANTITY)
    return Intent(
        action=action,
        language=language,
        quantity=quantity,
        query=" ".join(query),
        sizes=tuple(sizes),
        colors=tuple(colors),
        ids=tuple(ids),
    )


# --- product matching ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VariantCandidate:
    sku: str
    title: str  # display title, e.g. "Camiseta Básica — Preta / M"
    price: int
    options: Mapping[str, str] = field(default_factory=dict)
    variant_title: str = ""


@dataclass(frozen=True)
class ProductCandidate:
    product_id: str
    title: str
    variants: tuple[VariantCandidate, ...]


@dataclass(frozen=True)
class Match:
    outcome: str  # "matched" | "ambiguous" | "not_found"
    sku: str = ""
    candidates: tuple[VariantCandidate, ...] = ()


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", fold(text))


def _variant_has(
    variant: VariantCandidate, product: ProductCandidate, sizes: Iterable[str], colors: Iterable[str]
) -> bool:
    option_values = [str(value) for value in variant.options.values()]
    size_values = {fold(value).upper() for value in option_values} | {
        word.upper() for word in _words(variant.variant_title)
    }
    if any(size not in size_values for size in sizes):
        return False
    color_words = [*(_words(" ".join(option_values))), *_words(variant.variant_title), *_words(product.title)]
    color_values = {COLORS[word] for word in color_words if word in COLORS}
    return all(color in color_values for color in colors)


def _same_name(query: str, title: str) -> bool:
    return bool(query) and _words(query) == _words(title)


def match_product(intent: Intent, candidates: Iterable[ProductCandidate]) -> Match:
    """Exactly one sellable variant for the intent, or the candidates to ask about (never a guess)."""
    viable: list[tuple[ProductCandidate, list[VariantCandidate]]] = []
    for product in candidates:
        variants = [v for v in product.variants if _variant_has(v, product, intent.sizes, intent.colors)]
        if variants:
            viable.append((product, variants))
    if not viable:
        return Match(outcome="not_found")
    if len(viable) > 1:
        exact = [entry for entry in viable if _same_name(intent.query, entry[0].title)]
        if len(exact) == 1:
            viable = exact
    if len(viable) == 1 and len(viable[0][1]) == 1:
        return Match(outcome="matched", sku=viable[0][1][0].sku)
    options = tuple(variant for _product, variants in viable for variant in variants)
    return Match(outcome="ambiguous", candidates=options[:10])


@dataclass(frozen=True)
class Reply:
    text: str = ""
    checkout: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] | None = None
    order: dict[str, Any] | None = None
    task: bool = False  # a Pix complete waiting for the PSP: answered with a Task in `working` (issue 35)


_TEXTS: dict[str, dict[str, str]] = {
    "help": {
        "pt-br": 'Não entendi. Posso adicionar ou remover produtos ("adicione 2 camisetas pretas M ao carrinho"), '
        "aplicar um cupom, mostrar o carrinho, finalizar ou cancelar a compra.",
        "en": 'Sorry, I did not understand. I can add or remove products ("add a Pixel 10 Pro to my checkout"), '
        "apply a coupon, show the checkout, complete or cancel the purchase.",
    },
    "ambiguous": {
        "pt-br": 'Encontrei mais de uma opção para "{query}". Qual delas você quer? Responda com o id do item.',
        "en": 'I found more than one option for "{query}". Which one do you want? Reply with the item id.',
    },
    "not_found": {
        "pt-br": 'Não encontrei nenhum produto para "{query}". Pode descrever de outro jeito?',
        "en": 'I could not find any product for "{query}". Could you describe it differently?',
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
        values.setdefault(
            "title",
            next(
                (
                    line["item"].get("title", values["sku"])
                    for line in checkout.get("line_items") or []
                    if line.get("item", {}).get("id") == values["sku"]
                ),
                values["sku"],
            ),
        )
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
        extra += [
            str(m.get("content", ""))
            for m in checkout.get("messages") or []
            if isinstance(m, dict) and m.get("type") == "error"
        ][:3]
    total = _total(checkout)
    if total is not None:
        extra.append(f"Total: {brl(total, language=lang)}.")
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
