"""Subscription plans admin: prices typed and shown in reais, the offer shown in the buyer's words."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from shop.admin.money_forms import brl_column, money_model_form
from shop.models import Subscription, SubscriptionEvent, SubscriptionPlan
from shop.subscriptions.offers import plan_offer, plan_terms

SubscriptionPlanForm = money_model_form(SubscriptionPlan, "price", "first_cycle_discount")


@admin.register(SubscriptionPlan)
class SubscriptionPlanAdmin(admin.ModelAdmin):
    form = SubscriptionPlanForm
    fields = ("variant", "cycle", "price", "first_cycle_discount", "min_cycles", "ships_each_cycle", "active")
    list_display = ("variant", "cycle", "price_display", "offer", "terms", "active")
    list_filter = ("cycle", "active")
    list_select_related = ("variant", "variant__product")
    search_fields = ("variant__sku", "variant__product__title")
    autocomplete_fields = ("variant",)
    price_display = brl_column("price", _("preço por ciclo"))

    @admin.display(description=_("oferta na página do produto"))
    def offer(self, obj: SubscriptionPlan) -> str:
        return plan_offer(obj)

    @admin.display(description=_("condições"))
    def terms(self, obj: SubscriptionPlan) -> str:
        return "; ".join(plan_terms(obj))


class SubscriptionEventInline(admin.TabularInline):
    model = SubscriptionEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created_at", "kind", "detail")

    def has_add_permission(self, request: HttpRequest, obj: Subscription | None = None) -> bool:
        return False  # append-only timeline, written by the services


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    """Read-only for now: subscriptions change through their services (buyer, PSP notices), not by hand."""

    list_display = ("public_id", "buyer_name", "plan", "status", "price_display", "starts_on", "created_at")
    list_filter = ("status", "cycle")
    list_select_related = ("plan", "plan__variant")
    search_fields = ("public_id", "buyer_name", "buyer_email", "pix_id_rec")
    inlines = (SubscriptionEventInline,)
    price_display = brl_column("price", _("preço por ciclo"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Subscription | None = None) -> bool:
        return False
