from django.urls import include, path, re_path

from payments import views

urlpatterns = [
    # Our registered webhook URL; Bacen PSPs append `/pix` to it when they call back.
    path("payments/pix/webhook", views.pix_webhook, name="pix-webhook"),
    path("payments/pix/webhook/pix", views.pix_webhook, name="pix-webhook-pix"),
    # MED 2.0 notifications (infraction reports and refund requests) the PSP forwards; same authentication.
    path("payments/pix/webhook/med", views.med_webhook, name="pix-webhook-med"),
    # Pix Automático: the URL registered with `PUT /webhookrec`, with the `/rec` Bacen PSPs append.
    path("payments/pix/webhook/rec", views.pix_recurrence_webhook, name="pix-webhook-rec"),
    path("payments/pix/webhook/cobr", views.pix_recurring_charge_webhook, name="pix-webhook-cobr"),
    # Card gateway (Pagar.me v5) webhook, authenticated by the Basic credentials configured on the hook.
    path("payments/card/webhook", views.card_webhook, name="card-webhook"),
    # QR image of a charge by txid (the txid is what the buyer's receipt shows anyway).
    re_path(r"^payments/pix/qr/(?P<txid>[A-Za-z0-9]{26,35})\.(?P<extension>png|svg)$", views.pix_qr, name="pix-qr"),
    # Sandbox PSP control API: every view answers 404 unless BCP_PIX_SANDBOX is on (checked per request,
    # so the setting decides at run time and templates can always reverse the names).
    path("", include("payments.sandbox.urls")),
]
