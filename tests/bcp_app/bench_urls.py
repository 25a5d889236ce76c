"""URLconf of the REST benchmark server: the shop's URLs plus the bare one-INSERT baseline view."""

from __future__ import annotations

import json

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from tests.bcp_app.bench_site import BASELINE_TABLE


@csrf_exempt
def bare_insert(request: HttpRequest) -> JsonResponse:
    """The baseline: parse a JSON body, one INSERT, answer JSON — no protocol, no engine."""
    payload = json.loads(request.body or b"{}")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {BASELINE_TABLE} (payload) VALUES (%s) RETURNING id", [json.dumps(payload)])  # noqa: S608
        (row_id,) = cursor.fetchone()
    return JsonResponse({"id": row_id}, status=201)


urlpatterns = [
    path("_bench/insert", bare_insert),
    path("", include("shop.urls")),
]
