"""Serving local media (product photos, the logo) when no bucket or proxy does it (SHOP_SERVE_MEDIA)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.static import serve


def serve_media(request: HttpRequest, path: str) -> HttpResponse:
    # MEDIA_ROOT is read per request (not frozen in the URLconf) so tests can point it at a temp dir;
    # django.views.static.serve refuses paths that escape the root.
    return serve(request, path, document_root=str(settings.MEDIA_ROOT))
