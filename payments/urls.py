from django.urls import include, path

from payments import views

urlpatterns = [
    # Our registered webhook URL; Bacen PSPs append `/pix` to it when they call back.
    path("payments/pix/webhook", views.pix_webhook, name="pix-webhook"),
    path("payments/pix/webhook/pix", views.pix_webhook, name="pix-webhook-pix"),
    # Sandbox PSP control API: every view answers 404 unless BCP_PIX_SANDBOX is on (checked per request,
    # so the setting decides at run time and templates can always reverse the names).
    path("", include("payments.sandbox.urls")),
]
