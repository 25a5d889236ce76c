"""Deterministic natural-language intents for A2A text parts (Portuguese and English), and product matching.

`parse_intent(text)` is a pure function: the same text always gives the same `Intent`. It recognises the
BCP A2A action vocabulary (BCP.md §13.3) — add, remove, get, cancel, complete, apply a coupon — plus a
quantity, the product words for the catalog search, sizes, colours and SKU-like ids.

`match_product(intent, candidates)` is pure too: it picks exactly one variant or answers "ambiguous"
with the candidates (never a guess) or "not_found". The catalog search itself happens in the transport.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
    "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3, "quatro": 4, "cinco": 5, "seis": 6, "sete": 7,
    "oito": 8, "nove": 9, "dez": 10, "doze": 12, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "a": 1, "an": 1,
}
ARTICLES = frozenset({"o", "os", "as", "the", "some", "mais", "more", "another", "outra", "outro", "me", "pra", "para"})
FILLER = frozenset({
    "por", "favor", "please", "pls", "de", "do", "da", "dos", "das", "com", "with", "of", "e", "and", "tamanho",
    "tam", "size", "cor", "color", "colour", "na", "no", "em", "in", "unidade", "unidades", "unit", "units",
    "item", "itens", "items", "produto", "produtos", "product", "products",
})
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
    (COMPLETE, re.compile(
        r"\b(finaliz\w*|conclu\w*|fech(ar|e|a) (o |a |meu |minha )?(pedido|compra|carrinho)|pagar|pague|"
        r"complete|finish|finalize|place (the |my )?order|pay|check ?out now|complete_checkout)\b")),
    (REMOVE, re.compile(r"\b(remov\w*|retir\w*|tira|tire|tirar|exclu\w*|delet\w*|apag\w*|take out|drop)\b")),
    (UPDATE, re.compile(r"\b(cupom|cupon|coupon|voucher|promo code|codigo promocional|discount code)\b")),
    (ADD, re.compile(
        r"\b(adicion\w*|acrescent\w*|coloc\w*|coloq\w*|ponha|poe|inclu\w*|quero|queria|gostaria( de)?|compr(ar|e|o)|"
        r"add|put|include|buy|want|get me|i'?d like|id like)\b")),
    (GET, re.compile(
        rf"\b(ver|veja|mostr\w*|exib\w*|show|view|see|what'?s in|o que tem|resumo|summary|status)\b|^(meu |minha |my )?"
        rf"{_CART}\??$")),
)
# "… ao carrinho", "… to my checkout": the product words stop here.
_DESTINATION = re.compile(
    rf"\b(ao|a|no|na|pro|para o|para a|do|da|de|to|into|in|from|on|off)\s+(meu |minha |o |a |my |the |your )?{_CART}\b"
)
_PT_MARKERS = frozenset({
    "adicione", "adicionar", "coloque", "quero", "carrinho", "ao", "no", "do", "da", "remova", "remover", "tire",
    "finalizar", "compra", "pedido", "cancelar", "cupom", "por", "favor", "meu", "minha", "ver", "mostrar", "um",
    "uma", "dois", "duas", "de", "e", "aplicar", "aplique", "finalize", "concluir",
})
_EN_MARKERS = frozenset({
    "add", "to", "my", "checkout", "cart", "remove", "the", "please", "complete", "place", "order", "cancel",
    "coupon", "apply", "show", "a", "an", "of", "and", "buy", "want", "finish", "pay", "what", "in",
    "hello", "hi", "help", "can", "you", "i", "thanks", "there", "is", "it",
})
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
    if order_id and action in (UNKNOWN, GET):
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


def _variant_has(variant: VariantCandidate, product: ProductCandidate, sizes: Iterable[str],
                 colors: Iterable[str]) -> bool:
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
