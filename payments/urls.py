from django.conf import settings
from django.urls import include, path

from payments import views

urlpatterns = [
    # Our registered webhook URL; Bacen PSPs append `/pix` to it when they call back.
    path("payments/pix/webhook", views.pix_webhook, name="pix-webhook"),
    path("payments/pix/webhook/pix", views.pix_webhook, name="pix-webhook-pix"),
]

if settings.BCP_PIX_SANDBOX:
    urlpatterns.append(path("", include("payments.sandbox.urls")))
