"""The shop's URLs plus one view that fails, to see the real 500 page (used with @pytest.mark.urls)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import handler500  # noqa: F401 (handler500 is read by Django)
from config.urls import urlpatterns as shop_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [path("falha/", boom), *shop_urlpatterns]
