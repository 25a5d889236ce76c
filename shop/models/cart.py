"""Carts: the storefront's cart (the session points to one) and the BCP cart capability's carts are one model.

A cart holds what the buyer is collecting — lines (SKU, quantity), optional buyer, context and coupon codes — with
no prices: prices, stock and estimated totals are computed when it is read (`shop.cart`). `checkout_id` is the
checkout the cart was converted to (BCP §4.3 `cart_id`), reused while that checkout is not terminal.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id


def new_cart_id() -> str:
    return new_public_id("cart")


def new_cart_line_id() -> str:
    return new_public_id("li")


class Cart(models.Model):
    STATUS_ACTIVE = "active"
    STATUS_CANCELED = "canceled"

    public_id = models.CharField(max_length=60, unique=True, default=new_cart_id, editable=False)
    status = models.CharField(
        _("situação"),
        max_length=10,
        default=STATUS_ACTIVE,
        choices=[(STATUS_ACTIVE, _("Ativo")), (STATUS_CANCELED, _("Cancelado"))],
    )
    # Owner: a bcp_app Platform public id (agents), None for the storefront and anonymous agents (as checkouts).
    platform_id = models.CharField(max_length=80, null=True, blank=True, db_index=True)  # noqa: DJ001
    session_key = models.CharField(max_length=80, blank=True)
    language = models.CharField(max_length=8, default="pt-br")
    buyer = models.JSONField(null=True, blank=True)  # {"first_name", "last_name", "email", "phone_number", "tax_id"}
    context = models.JSONField(null=True, blank=True)
    discount_codes = models.JSONField(default=list, blank=True)
    checkout_id = models.CharField(max_length=60, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("carrinho")
        verbose_name_plural = _("carrinhos")
        ordering = ["-updated_at"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["active", "canceled"]), name="cart_status_valid"),
        ]

    def __str__(self) -> str:
        return self.public_id


class CartLine(models.Model):
    cart = models.ForeignKey(Cart, on_delete=models.CASCADE, related_name="lines")
    public_id = models.CharField(max_length=40, unique=True, default=new_cart_line_id, editable=False)
    position = models.PositiveIntegerField(default=0)
    sku = models.CharField(max_length=64)
    quantity = models.PositiveIntegerField()

    class Meta:
        verbose_name = _("item do carrinho")
        verbose_name_plural = _("itens do carrinho")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(quantity__gte=1), name="cart_line_quantity_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.sku} × {self.quantity}"
