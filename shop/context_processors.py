from django.conf import settings
from django.http import HttpRequest

from shop.cart import cart_items


def shop(request: HttpRequest) -> dict[str, object]:
    """Shop name and the mini-cart count (units in the session cart; no query)."""
    session = getattr(request, "session", None)
    cart_count = sum(cart_items(session).values()) if session is not None else 0
    return {"SHOP_NAME": settings.SHOP_NAME, "cart_count": cart_count}
