"""Order lookup `/pedido`: e-mail + order number → the permalink goes by e-mail to the order's address.

The answer never says whether such an order exists (the same page either way, the e-mail sent later by the
worker), and attempts are counted per client address and per e-mail in the cache, so the form cannot be
used to guess order numbers.
"""

from __future__ import annotations

from django.db import transaction

from kernel.ops.ratelimit import attempt_allowed, attempt_keys
from orders.models import Order
from orders.services import order_link_email_send

WINDOW_SECONDS = 15 * 60
MAX_PER_CLIENT = 5
MAX_PER_EMAIL = 3
_PREFIX = "order-lookup:v1:"
# The order page's own forms (correct the address, cancel): posts that write and e-mail, by anyone holding the link.
ACTION_WINDOW_SECONDS = 15 * 60
ACTION_MAX_PER_CLIENT = 20
ACTION_MAX_PER_ORDER = 10
_ACTION_PREFIX = "order-page-action:v1:"


def lookup_keys(*, client: str, email: str) -> list[str]:
    return attempt_keys(_PREFIX, client=client, email=email)


def lookup_allowed(*, client: str, email: str) -> bool:
    """Count this attempt; False once the client or the e-mail used up its attempts in the window."""
    return attempt_allowed(
        _PREFIX, client=client, email=email, per_client=MAX_PER_CLIENT, per_email=MAX_PER_EMAIL, seconds=WINDOW_SECONDS
    )


def buyer_action_allowed(*, client: str, order_id: str) -> bool:
    """Count one address correction or cancel posted on an order's page; False once the client or the order used
    up its attempts in the window."""
    return attempt_allowed(
        _ACTION_PREFIX, client=client, email=order_id, per_client=ACTION_MAX_PER_CLIENT,
        per_email=ACTION_MAX_PER_ORDER, seconds=ACTION_WINDOW_SECONDS,
    )  # fmt: skip


@transaction.atomic
def order_lookup_request(*, number: int, email: str) -> None:
    """Queue the short "link of your order" e-mail if an order has this number and e-mail; else nothing. Not the
    confirmation again: a buyer asking for the link must not read "Recebemos seu pedido" a second time."""
    order = Order.objects.filter(number=number, buyer_email__iexact=email.strip()).only("public_id").first()
    if order is not None:
        order_link_email_send(order_id=order.public_id)
