from django.conf import settings
from django.conf.urls.i18n import i18n_patterns  # noqa: F401
from django.contrib import admin
from django.urls import include, path

handler500 = "shop.error_pages.server_error"

urlpatterns = [
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("", include("payments.urls")),
    path("", include("orders.urls")),
    path("", include("bcp_app.urls")),
    path("", include("shop.checkout.urls")),
    path("", include("shop.storefront_urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
