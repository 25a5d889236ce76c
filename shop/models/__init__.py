"""Models of the shop, split by concern; import them from `shop.models`."""

from shop.models.account import AccountLoginLink
from shop.models.cart import Cart, CartLine
from shop.models.catalog import Category, Product, ProductImage, SearchSynonym, Variant, new_product_id
from shop.models.checkout import (
    Checkout,
    CheckoutEvent,
    CheckoutLine,
    Coupon,
    CouponRedemption,
    PickupLocation,
    ShippingMethod,
    ShippingRate,
    new_checkout_id,
    new_destination_id,
    new_line_id,
    new_location_id,
)
from shop.models.freight import LabelTrackingEvent, PackagingBox, ShippingLabel, new_label_id
from shop.models.reminders import BoletoNotice, CheckoutReminder, ReminderOptOut
from shop.models.store import StoreSettings
from shop.models.subscriptions import (
    Subscription,
    SubscriptionCycle,
    SubscriptionEvent,
    SubscriptionPlan,
    new_plan_id,
    new_subscription_id,
)

__all__ = [
    "AccountLoginLink",
    "BoletoNotice",
    "Cart",
    "CartLine",
    "Category",
    "Checkout",
    "CheckoutEvent",
    "CheckoutLine",
    "CheckoutReminder",
    "Coupon",
    "CouponRedemption",
    "LabelTrackingEvent",
    "PackagingBox",
    "PickupLocation",
    "Product",
    "ProductImage",
    "ReminderOptOut",
    "SearchSynonym",
    "ShippingLabel",
    "ShippingMethod",
    "ShippingRate",
    "StoreSettings",
    "Subscription",
    "SubscriptionCycle",
    "SubscriptionEvent",
    "SubscriptionPlan",
    "Variant",
    "new_checkout_id",
    "new_destination_id",
    "new_label_id",
    "new_line_id",
    "new_location_id",
    "new_plan_id",
    "new_product_id",
    "new_subscription_id",
]
