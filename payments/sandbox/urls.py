from django.urls import path

from payments.sandbox import views

urlpatterns = [
    path("_sandbox/psp/cob/<str:txid>", views.charge_page, name="sandbox-psp-charge"),
    path("_sandbox/psp/cob/<str:txid>/pay", views.pay, name="sandbox-psp-pay"),
    path("_sandbox/psp/cob/<str:txid>/expire", views.expire, name="sandbox-psp-expire"),
    path("_sandbox/psp/webhooks/redeliver", views.redeliver, name="sandbox-psp-redeliver"),
    path(
        "_sandbox/psp/pix/<str:e2eid>/devolucao/<str:refund_id>/settle",
        views.refund_settle,
        name="sandbox-psp-refund-settle",
    ),
]
