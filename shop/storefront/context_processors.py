from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from shop.cart import cart_items
from shop.store.services import store_get


def cart_count(request: HttpRequest) -> int:
    """Units in the session's cart (the mini-cart badge): one query, none without a cart."""
    session = getattr(request, "session", None)
    return sum(cart_items(session).values()) if session is not None else 0


def shop(request: HttpRequest) -> dict[str, object]:
    """Shop name and the mini-cart count (read only if the page shows it and its view did not count it itself)."""
    return {"SHOP_NAME": store_get().trade_name, "cart_count": SimpleLazyObject(lambda: cart_count(request))}


def store(request: HttpRequest) -> dict[str, object]:
    """`store`: the shop's identity and policies (cached row) for the footer and the policy pages."""
    return {"store": store_get()}
