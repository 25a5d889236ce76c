"""Discovery: `GET /.well-known/bcp` (BCP §2), public and cacheable, with a strong ETag (UCP's face of it:
`bcp_app/transports/ucp_rest.py`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from bcp_app.service.discovery import business_profile


@csrf_exempt  # a POST is refused by require_safe with 405, not by the CSRF check with its HTML 403 page
@require_safe
def well_known_bcp(request: HttpRequest) -> HttpResponse:
    return profile_response(request, business_profile())


def profile_response(request: HttpRequest, document: dict[str, Any]) -> HttpResponse:
    """A discovery document (BCP's, or UCP's face of it), public and cacheable, with a strong ETag."""
    raw = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    etag = '"' + hashlib.sha256(raw).hexdigest()[:32] + '"'
    headers = {"Cache-Control": "public, max-age=300", "ETag": etag, "Access-Control-Allow-Origin": "*"}
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(raw, content_type="application/json; charset=utf-8")
    for name, value in headers.items():
        response[name] = value
    return response
