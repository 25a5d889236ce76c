"""Every write to orders (services: keyword-only, one transaction, timeline event in the same transaction).

Split into modules by concern; import from `orders.services`.
"""

from orders.errors import OrderError, OrderNotFound
from orders.services.adjustments import (
    adjustment_failed_refund_offline,
    adjustment_mark_refund_result,
    adjustment_settle_offline,
    order_cancel,
    order_refund,
    order_return,
    order_returned_to_sender_open,
)
from orders.services.disputes import order_dispute_record
from orders.services.expectations import expectation_merge, expectation_split, expectation_update
from orders.services.fulfillment import (
    clean_tracking,
    correios_code_valid,
    correios_tracking_url,
    fulfillment_event_create,
    order_mark_delivered,
    order_ship,
)
from orders.services.handover import order_pickup_done, order_pickup_ready, order_tracking_correct
from orders.services.notes import (
    email_delivery_send,
    order_buyer_contact_set,
    order_buyer_tax_id_set,
    order_destination_set,
    order_email_resend,
    order_event_record,
    order_event_row,
    order_language_set,
    order_link_email_send,
    order_note_add,
)
from orders.services.placement import (
    OrderDraft,
    order_draft_from_checkout,
    order_number_draw,
    order_payment_confirm,
    order_payment_record,
    order_payment_record_manual,
    order_place_draft,
    order_place_from_checkout,
)
from orders.services.returns import (
    ReturnStep,
    order_cancel_requested,
    return_refund_includes_freight,
    return_refund_suggestion,
    return_request_approve,
    return_request_create,
    return_request_receive,
    return_request_refund,
    return_request_refund_offline,
    return_request_reject,
)

__all__ = [
    "OrderDraft",
    "OrderError",
    "OrderNotFound",
    "ReturnStep",
    "adjustment_failed_refund_offline",
    "adjustment_mark_refund_result",
    "adjustment_settle_offline",
    "clean_tracking",
    "correios_code_valid",
    "correios_tracking_url",
    "email_delivery_send",
    "expectation_merge",
    "expectation_split",
    "expectation_update",
    "fulfillment_event_create",
    "order_buyer_contact_set",
    "order_buyer_tax_id_set",
    "order_cancel",
    "order_cancel_requested",
    "order_destination_set",
    "order_dispute_record",
    "order_draft_from_checkout",
    "order_email_resend",
    "order_event_record",
    "order_event_row",
    "order_language_set",
    "order_link_email_send",
    "order_mark_delivered",
    "order_note_add",
    "order_number_draw",
    "order_payment_confirm",
    "order_payment_record",
    "order_payment_record_manual",
    "order_pickup_done",
    "order_pickup_ready",
    "order_place_draft",
    "order_place_from_checkout",
    "order_refund",
    "order_return",
    "order_returned_to_sender_open",
    "order_ship",
    "order_tracking_correct",
    "return_refund_includes_freight",
    "return_refund_suggestion",
    "return_request_approve",
    "return_request_create",
    "return_request_receive",
    "return_request_refund",
    "return_request_refund_offline",
    "return_request_reject",
]
