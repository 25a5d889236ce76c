"""URLconf of the REST benchmark server: the shop's URLs plus bare baseline views.

The bare flow does the minimal SQL of the same purchase (issue 11): create = SELECT variant + INSERT
checkout + INSERT line; update = 1 UPDATE; complete = lock + conditional stock UPDATE + INSERT order +
UPDATE checkout; GET order = 1 SELECT. Plain JSON in, plain JSON out, no protocol, no engine.
"""

from __future__ import annotations

import json

from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import Context, Template
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from tests.bcp_app.bench_site import BARE_CHECKOUT, BARE_LINE, BARE_ORDER, BASELINE_TABLE


@csrf_exempt
def bare_insert(request: HttpRequest) -> JsonResponse:
    """The one-INSERT baseline: parse a JSON body, one INSERT, answer JSON."""
    payload = json.loads(request.body or b"{}")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {BASELINE_TABLE} (payload) VALUES (%s) RETURNING id", [json.dumps(payload)])  # noqa: S608
        (row_id,) = cursor.fetchone()
    return JsonResponse({"id": row_id}, status=201)


@csrf_exempt
def bare_create(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    sku, quantity = body["sku"], int(body["quantity"])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT id, price FROM shop_variant WHERE sku = %s", [sku])
        variant_id, price = cursor.fetchone()
        cursor.execute(
            f"INSERT INTO {BARE_CHECKOUT} (status, total, payload) VALUES ('incomplete', %s, '{{}}') RETURNING id",  # noqa: S608
            [price * quantity],
        )
        (checkout_id,) = cursor.fetchone()
        cursor.execute(
            f"INSERT INTO {BARE_LINE} (checkout_id, variant_id, quantity, price) VALUES (%s, %s, %s, %s)",  # noqa: S608
            [checkout_id, variant_id, quantity, price],
        )
    return JsonResponse({"id": checkout_id, "status": "incomplete", "total": price * quantity}, status=201)


@csrf_exempt
def bare_update(request: HttpRequest, checkout_id: int) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {BARE_CHECKOUT} SET status = 'ready_for_complete', payload = %s WHERE id = %s",  # noqa: S608
            [request.body.decode(), checkout_id],
        )
    return JsonResponse({"id": checkout_id, "status": "ready_for_complete"})


@csrf_exempt
def bare_complete(request: HttpRequest, checkout_id: int) -> JsonResponse:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.total, l.variant_id, l.quantity FROM {BARE_CHECKOUT} c JOIN {BARE_LINE} l"  # noqa: S608
            " ON l.checkout_id = c.id WHERE c.id = %s FOR UPDATE OF c",
            [checkout_id],
        )
        total, variant_id, quantity = cursor.fetchone()
        cursor.execute(
            "UPDATE shop_variant SET stock = stock - %s WHERE id = %s AND stock >= %s", [quantity, variant_id, quantity]
        )
        cursor.execute(
            f"INSERT INTO {BARE_ORDER} (checkout_id, total) VALUES (%s, %s) RETURNING id",  # noqa: S608
            [checkout_id, total],
        )
        (order_id,) = cursor.fetchone()
        cursor.execute(f"UPDATE {BARE_CHECKOUT} SET status = 'completed' WHERE id = %s", [checkout_id])  # noqa: S608
    return JsonResponse({"id": checkout_id, "status": "completed", "order": {"id": order_id}})


def bare_order(request: HttpRequest, order_id: int) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, checkout_id, total FROM {BARE_ORDER} WHERE id = %s", [order_id])  # noqa: S608
        row = cursor.fetchone()
    return JsonResponse({"id": row[0], "checkout_id": row[1], "total": row[2]})


def bare_bcp_order(request: HttpRequest, order_id: str) -> JsonResponse:
    """The MCP bench's baseline: the same selector and presenter as `get_order`, no protocol (no
    negotiation, auth or JSON-RPC)."""
    from bcp_app.service import presenters
    from orders.selectors import order_for_bcp

    return JsonResponse(presenters.order(order_for_bcp(order_id), None), json_dumps_params={"ensure_ascii": False})


@csrf_exempt
def bare_a2a_add(request: HttpRequest) -> JsonResponse:
    """The A2A bench's baseline: what the A2A add does (resolve the caller, add one line), minus A2A."""
    from bcp_app.service.context import resolve_context
    from bcp_app.service.negotiation import parse_agent_header
    from bcp_app.transports.a2a import actions as a2a_ops

    payload = json.loads(request.body)
    ctx = resolve_context(transport="rest", profile_url=parse_agent_header(request.headers.get("BCP-Agent")))
    current = a2a_ops.current_checkout(ctx, payload["checkout_id"])
    return JsonResponse(a2a_ops.add_line(ctx, current, payload["product_id"], payload["quantity"]))


# The storefront bench's floor (issue 34): a Django template view through the same middleware, rendering a page of
# the size asked for (`?bytes=`), with no query: rows of a loop in a template compiled once, as a real page is.
_BARE_PAGE = Template(
    '<!doctype html><html lang="pt-br"><head><title>{{ title }}</title></head><body><main>'
    '{% for row in rows %}<p class="row">{{ row.title }} — {{ row.price }}</p>{% endfor %}</main></body></html>'
)


def bare_page(request: HttpRequest) -> HttpResponse:
    size = int(request.GET.get("bytes", "10000"))
    rows = [{"title": f"Produto {i:05d} de exemplo para a vitrine", "price": f"R$ {i},90"} for i in range(size // 64)]
    return HttpResponse(_BARE_PAGE.render(Context({"title": "Vitrine", "rows": rows})))


urlpatterns = [
    path("_bench/page", bare_page),
    path("_bench/insert", bare_insert),
    path("_bench/checkouts", bare_create),
    path("_bench/checkouts/<int:checkout_id>", bare_update),
    path("_bench/checkouts/<int:checkout_id>/complete", bare_complete),
    path("_bench/orders/<int:order_id>", bare_order),
    path("_bench/bcp-orders/<str:order_id>", bare_bcp_order),
    path("_bench/a2a-add", bare_a2a_add),
    path("", include("config.urls")),
]
