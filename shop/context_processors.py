from django.conf import settings
from django.http import HttpRequest


def shop(request: HttpRequest) -> dict[str, object]:
    cart = request.session.get("cart", {}) if hasattr(request, "session") else {}
    cart_count = sum(int(q) for q in cart.values()) if isinstance(cart, dict) else 0
    return {"SHOP_NAME": settings.SHOP_NAME, "cart_count": cart_count}
