from django.urls import path

from payments.sandbox import api, views

urlpatterns = [
    # Control API (PIX.md §4.3) and the developer page.
    path("_sandbox/psp/cob/<str:txid>", views.charge_page, name="sandbox-psp-charge"),
    path("_sandbox/psp/cob/<str:txid>/pay", views.pay, name="sandbox-psp-pay"),
    path("_sandbox/psp/cob/<str:txid>/expire", views.expire, name="sandbox-psp-expire"),
    path("_sandbox/psp/webhooks/redeliver", views.redeliver, name="sandbox-psp-redeliver"),
    path(
        "_sandbox/psp/pix/<str:e2eid>/devolucao/<str:refund_id>/settle",
        views.refund_settle,
        name="sandbox-psp-refund-settle",
    ),
    # The sandbox card gateway's boletos (issue 37): the boleto's page (its "PDF") and the bank paying it.
    path("_sandbox/gateway/boleto/<str:charge_id>", views.boleto_page, name="sandbox-gateway-boleto"),
    path("_sandbox/gateway/boleto/<str:charge_id>/pay", views.boleto_pay, name="sandbox-gateway-boleto-pay"),
    # Pix Automático (issue 38): the payer's bank app and the cycle's due date.
    path("_sandbox/psp/rec/<str:id_rec>/authorize", views.rec_authorize, name="sandbox-psp-rec-authorize"),
    path("_sandbox/psp/rec/<str:id_rec>/payer-cancel", views.rec_payer_cancel, name="sandbox-psp-rec-payer-cancel"),
    path("_sandbox/psp/cobr/<str:txid>/settle", views.cobr_settle, name="sandbox-psp-cobr-settle"),
    # Bacen-shaped API Pix of the sandbox (what BacenPixPSP speaks).
    path("_sandbox/psp/api/oauth/token", api.token, name="sandbox-psp-api-token"),
    path("_sandbox/psp/api/cob/<str:txid>", api.cob, name="sandbox-psp-api-cob"),
    path("_sandbox/psp/api/cobv/<str:txid>", api.cobv, name="sandbox-psp-api-cobv"),
    path("_sandbox/psp/api/pix", api.pix_list, name="sandbox-psp-api-pix"),
    path("_sandbox/psp/api/pix/<str:e2eid>/devolucao/<str:refund_id>", api.devolucao, name="sandbox-psp-api-devolucao"),
    path("_sandbox/psp/api/webhook/<str:key>", api.webhook, name="sandbox-psp-api-webhook"),
]
