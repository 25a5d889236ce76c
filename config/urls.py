from django.conf import settings
from django.conf.urls.i18n import i18n_patterns  # noqa: F401
from django.contrib import admin
from django.urls import include, path

from shop.freight import panels as freight_panels
from shop.invoicing import panels as fiscal_panels
from shop.storefront import language as storefront_language

handler403 = "config.error_pages.permission_denied"
handler500 = "config.error_pages.server_error"

urlpatterns = [
    # First: the agents' API (/bcp/v1) is the most called path, and Django tries the patterns in order.
    path("", include("bcp_app.urls")),
    # The footer's language switch (Django's `set_language`); on an order's or a checkout's page the order follows.
    path("i18n/setlang/", storefront_language.set_language, name="set_language"),
    path("admin/fiscal/<str:order_id>/reissue/", fiscal_panels.reissue_view, name="shop_fiscal_reissue"),
    path(
        "admin/fiscal/<str:order_id>/cancel-reissue/",
        fiscal_panels.cancel_reissue_view,
        name="shop_fiscal_cancel_reissue",
    ),
    path("admin/fiscal/<str:order_id>/correction/", fiscal_panels.correction_view, name="shop_fiscal_correction"),
    path("admin/fiscal/<str:order_id>/return-note/", fiscal_panels.return_note_view, name="shop_fiscal_return_note"),
    path("admin/frete/<str:order_id>/comprar/", freight_panels.buy_view, name="shop_label_buy"),
    path("admin/frete/etiqueta/<str:label_id>/cancelar/", freight_panels.cancel_view, name="shop_label_cancel"),
    path("admin/frete/etiqueta/<str:label_id>/pdf/", freight_panels.pdf_view, name="shop_label_pdf"),
    path("admin/frete/<str:order_id>/endereco/", freight_panels.address_label_view, name="shop_address_label"),
    path("admin/", admin.site.urls),
    path("frete/webhooks/melhorenvio/", freight_panels.melhorenvio_webhook, name="shop_melhorenvio_webhook"),
    path("", include("payments.urls")),
    path("fiscal/", include("fiscal.urls")),
    path("", include("orders.urls")),
    path("", include("shop.checkout.web.urls")),
    path("", include("shop.store.urls")),
    path("", include("shop.storefront.urls")),
    path("", include("shop.account.urls")),  # "Minha conta" (issue 33)
]

if settings.SHOP_SERVE_MEDIA and settings.MEDIA_URL.startswith("/"):
    # Development and `make run` (uvicorn): Django serves uploaded media, which WhiteNoise does not.
    from django.urls import re_path

    from config.media import serve_media

    urlpatterns.insert(0, re_path(rf"^{settings.MEDIA_URL.strip('/')}/(?P<path>.+)$", serve_media))
