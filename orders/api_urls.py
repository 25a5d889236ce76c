"""`/api/v1/` — the merchant back-office API (orders)."""

from django.urls import path

from orders import api

urlpatterns = [
    path("", api.ApiRoot.as_view(), name="api-root"),
    path("openapi.json", api.ApiSchema.as_view(), name="api-openapi"),
    path("orders/", api.OrderList.as_view(), name="api-orders"),
    path("orders/<str:order_id>/", api.OrderDetail.as_view(), name="api-order"),
    path("orders/<str:order_id>/fulfillment-events/", api.FulfillmentEventCreate.as_view(), name="api-order-events"),
    path(
        "orders/<str:order_id>/tracking-corrections/",
        api.TrackingCorrectionCreate.as_view(),
        name="api-order-tracking-corrections",
    ),
    path("orders/<str:order_id>/adjustments/", api.AdjustmentCreate.as_view(), name="api-order-adjustments"),
    path("orders/<str:order_id>/notes/", api.NoteCreate.as_view(), name="api-order-notes"),
]
