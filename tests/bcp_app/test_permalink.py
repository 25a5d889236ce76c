"""Permalink capability (BCP §15, UCP permalink): buy links → a storefront checkout and a `303` to it.

BCP-PL-01 … BCP-PL-07 through the Django test client (a browser's GET), plus one live uvicorn test for what
only a real server shows (the raw, still %-encoded path).
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from django.test import Client

from bcp_app.protocol.permalink import (
    PermalinkError,
    decode_token,
    encode_token,
    parse_items,
    parse_permalink,
    safe_continue_to,
)
from shop.models import Checkout
from tests.bcp_app.schema_check import errors
from tests.shop.checkout_factories import make_coupon, make_shipping, make_variant

PUBLIC = "https://loja.example.com.br"
GID = "gid://shopify/ProductVariant/70881412"


@pytest.fixture
def shop(bcp_settings: Any, db: None) -> None:
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_variant("SKU-XICARA", price=2500, stock=3, title="Xícara")
    make_variant(GID, price=9900, stock=5, title="Moedor")
    make_shipping()


def location(response: Any) -> tuple[str, dict[str, str]]:
    parts = urlsplit(response["Location"])
    assert f"{parts.scheme}://{parts.netloc}" == PUBLIC
    return parts.path, dict(parse_qsl(parts.query))


def assert_redirect(response: Any) -> None:
    """BCP-PL-05: a 303 with Location, never cached, never leaking the link as a referrer."""
    assert response.status_code == 303
    assert response["Location"]
    assert response["Cache-Control"] == "no-store"
    assert response["Referrer-Policy"] == "no-referrer"
    assert not response.content


def assert_error_page(response: Any, status: int = 400) -> str:
    """A bad link: a Portuguese HTML page, never JSON (BCP-PL-05), never a 500; nothing created."""
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert response["Cache-Control"] == "no-store"
    text = response.content.decode()
    assert "Não conseguimos abrir este link de compra" in text or status == 429
    assert "Nada foi comprado nem cobrado" in text
    return text


# --- discovery ---------------------------------------------------------------------------------------------


def test_profile_advertises_the_permalink_endpoint_bcp_pl_01(client: Client, bcp_settings: Any, db: None) -> None:
    body = client.get("/.well-known/bcp").json()

    entry = body["ucp"]["capabilities"]["br.dev.bcp.shopping.permalink"]
    assert entry == [
        {
            "version": "2026-07-28",
            "spec": "https://bcp.dev.br/draft/specification/permalink",
            "schema": "https://bcp.dev.br/draft/schemas/shopping/permalink.json",
            "config": {"endpoint": f"{PUBLIC}/comprar"},
        }
    ]
    endpoint = entry[0]["config"]["endpoint"]
    assert endpoint.startswith("https://") and not endpoint.endswith("/")
    assert "?" not in endpoint and "#" not in endpoint and "@" not in endpoint
    assert errors(entry[0], "shopping/permalink.json#/$defs/br.dev.bcp.shopping.permalink/business_schema") == []


def test_permalink_can_be_switched_off(client: Client, bcp_settings: Any, db: None) -> None:
    bcp_settings.BCP_PERMALINK_ENABLED = False

    assert "br.dev.bcp.shopping.permalink" not in client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert client.get("/comprar/SKU-CAFE-500G:1").status_code == 404


# --- grammar (BCP-PL-02) -----------------------------------------------------------------------------------


def test_tokens_raw_and_base64url_name_the_same_item_bcp_pl_02() -> None:
    encoded = "~" + base64.urlsafe_b64encode(GID.encode()).rstrip(b"=").decode()

    assert encoded == "~Z2lkOi8vc2hvcGlmeS9Qcm9kdWN0VmFyaWFudC83MDg4MTQxMg"  # UCP's own example
    assert decode_token(encoded) == GID
    assert encode_token(GID) == encoded
    assert decode_token("SKU-CAFE-500G") == "SKU-CAFE-500G" == decode_token(encode_token("SKU-CAFE-500G"))
    assert decode_token("~" + base64.urlsafe_b64encode(b"SKU-CAFE-500G").rstrip(b"=").decode()) == "SKU-CAFE-500G"
    assert decode_token(encode_token("café/ç")) == "café/ç"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "sku com espaço",
        "sku/1",
        "sku%2F1",
        "~",
        "~Z2lk=",
        "~Z2lk+",
        "~Z",
        "~Z2lkOh",  # not canonical: extra bits
        "~" + base64.urlsafe_b64encode(b"\xff\xfe").rstrip(b"=").decode(),  # not UTF-8
        "~" + base64.urlsafe_b64encode(b"sku\x00").rstrip(b"=").decode(),  # control character
        "~" + base64.urlsafe_b64encode("sku\u200b".encode()).rstrip(b"=").decode(),  # format character
    ],
)
def test_bad_tokens_are_rejected_bcp_pl_02(token: str) -> None:
    with pytest.raises(PermalinkError):
        decode_token(token)


@pytest.mark.parametrize(
    "segment",
    [
        "SKU:0",
        "SKU:01",
        "SKU:-1",
        "SKU:1.5",
        "SKU:",
        "SKU",
        "SKU:100",
        "SKU:1,",
        ",SKU:1",
        "SKU:1/OUTRO:1",
        "SKU:1e2",
        "SKU:١",
    ],
)
def test_bad_quantities_and_separators_are_rejected_bcp_pl_02(segment: str) -> None:
    with pytest.raises(PermalinkError):
        parse_items(segment)


def test_items_keep_link_order_and_quantities() -> None:
    assert parse_items("A:2,~" + base64.urlsafe_b64encode(b"B/1").rstrip(b"=").decode() + ":99") == (
        ("A", 2),
        ("B/1", 99),
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/produtos/", "/produtos/"),
        ("/produtos/cafe/../moedor?cor=preta&x=1", "/produtos/moedor?cor=preta&x=1"),
        ("/../../etc/passwd", "/etc/passwd"),
        ("/café", "/caf%C3%A9"),
        ("//evil.example/x", None),
        ("/\\evil.example", None),
        ("https://evil.example/", None),
        ("javascript:alert(1)", None),
        ("produtos", None),
        ("/a b", None),
        ("/a\tb", None),
        ("/a\r\nLocation: https://evil.example", None),
        ("", None),
    ],
)
def test_continue_to_rules_bcp_pl_04(value: str, expected: str | None) -> None:
    assert safe_continue_to(value) == expected


def test_query_fields_writable_only_item_path_wins_bcp_pl_03() -> None:
    link = parse_permalink(
        "SKU:2",
        "buyer/email=ana%40example.com.br&/buyer/first_name=Ana&buyer/unknown=x&discounts/codes/0=BEMVINDO"
        "&discounts/codes/1=FRETE&context/postal_code=01310-100&attribution/utm_source=instagram"
        "&line_items/0/quantity=5&totals/0/amount=1&status=completed&id=chk_x&order/id=o&signals/x=1"
        "&payment/instruments/0/credential/token=secret&utm_medium=social&access_token=abc&cor=preta",
    )
    assert link.items == (("SKU", 2),)  # line_items/0/quantity=5 does not change the path's quantity
    assert link.fields == {
        "buyer": {"email": "ana@example.com.br", "first_name": "Ana"},
        "discounts": {"codes": ["BEMVINDO", "FRETE"]},
        "context": {"postal_code": "01310-100"},
        "attribution": {"utm_source": "instagram"},
    }
    # Non-BCP parameters pass through, except the sensitive one (BCP-PL-07).
    assert link.passthrough == (("utm_medium", "social"), ("cor", "preta"))


def test_line_items_from_the_query_when_there_is_no_item_path() -> None:
    link = parse_permalink("", "line_items/0/item/id=SKU&line_items/0/quantity=3&line_items/1/item/id=B")
    assert link.items == (("SKU", 3), ("B", 1))


@pytest.mark.parametrize(
    "query",
    [
        "buyer/email=a%40b.com&/buyer/email=c%40d.com",  # two names, one pointer: ambiguous
        "buyer/email=a%40b.com&buyer/email=c%40d.com",
        "discounts/codes/1=X",  # a gap in the codes
        "buyer/email=%FF",  # not UTF-8
        "buyer/first_name=An%00a",  # control character in a value
        "x%0A=1",  # control character in a name
        "buyer/first_name=" + "a" * 501,
    ],
)
def test_malformed_or_ambiguous_queries_are_rejected_bcp_pl_03(query: str) -> None:
    with pytest.raises(PermalinkError):
        parse_permalink("SKU:1", query)


def test_duplicate_continue_to_falls_back_to_the_default_bcp_pl_04() -> None:
    assert parse_permalink("SKU:1", "continue_to=/a&continue_to=/b").continue_to is None
    assert parse_permalink("SKU:1", "continue_to=%2F%2Fevil.example").continue_to is None
    assert parse_permalink("SKU:1", "continue_to=%252Fprodutos").continue_to is None  # decoded once only
    assert parse_permalink("SKU:1", "continue_to=%2Fprodutos%2F").continue_to == "/produtos/"


# --- the endpoint ------------------------------------------------------------------------------------------


def test_link_builds_a_checkout_with_prefilled_fields_and_redirects_to_it_bcp_pl_05(client: Client, shop: None) -> None:
    make_coupon("BEMVINDO", title="Boas-vindas", kind="percent", percent=10)

    response = client.get(
        "/comprar/SKU-CAFE-500G:2,SKU-XICARA:1",
        {
            "buyer/email": "ana@example.com.br",
            "discounts/codes/0": "bemvindo",
            "context/postal_code": "01310-100",
            "attribution/utm_source": "instagram",
            "utm_campaign": "natal",
        },
    )

    assert_redirect(response)
    checkout = Checkout.objects.get()
    path, query = location(response)
    assert path == f"/checkout/{checkout.public_id}"
    assert query == {"utm_campaign": "natal", "utm_source": "instagram"}  # no buyer value on the Location
    assert [(line.sku, line.quantity) for line in checkout.lines.all()] == [("SKU-CAFE-500G", 2), ("SKU-XICARA", 1)]
    assert checkout.buyer_email == "ana@example.com.br"
    assert checkout.discount_codes == ["bemvindo"]
    assert checkout.context == {**checkout.context, "postal_code": "01310-100"}
    assert checkout.platform_id is None  # a storefront checkout
    assert checkout.status == "incomplete"  # BCP-PL-06: loading the link never orders or charges
    assert checkout.order_id == "" and checkout.payment_instrument is None


def test_the_redirect_lands_in_a_session_that_owns_the_checkout(client: Client, shop: None) -> None:
    response = client.get("/comprar/SKU-CAFE-500G:2")

    checkout = Checkout.objects.get()
    assert checkout.session_key == client.session.session_key != ""
    assert client.session["checkout_id"] == checkout.public_id
    page = client.get(location(response)[0])
    assert page.status_code == 200
    assert "Café especial 500 g" in page.content.decode()
    # The storefront cart holds the same lines: "Finalizar compra" continues this very checkout.
    assert client.get("/carrinho/").context["lines"][0].quantity == 2
    again = client.get("/checkout/")
    assert again.status_code == 302 and again["Location"] == f"/checkout/{checkout.public_id}"
    assert Checkout.objects.count() == 1


def test_continue_to_is_honoured_after_the_checkout_is_built_bcp_pl_04(client: Client, shop: None) -> None:
    response = client.get("/comprar/SKU-CAFE-500G:1", {"continue_to": "/produtos/../produtos/?ordem=preco"})

    assert_redirect(response)
    assert location(response) == ("/produtos/", {"ordem": "preco"})
    assert Checkout.objects.count() == 1


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example", "/x\r\nX: 1"])
def test_unsafe_continue_to_falls_back_to_the_checkout_bcp_pl_04(client: Client, shop: None, target: str) -> None:
    response = client.get("/comprar/SKU-CAFE-500G:1", {"continue_to": target})

    assert_redirect(response)
    assert location(response)[0] == f"/checkout/{Checkout.objects.get().public_id}"
    assert "evil" not in response["Location"] and "\n" not in response["Location"]


def test_base64url_token_buys_an_id_with_slashes(client: Client, shop: None) -> None:
    response = client.get(f"/comprar/{encode_token(GID)}:1")

    assert_redirect(response)
    assert Checkout.objects.get().lines.get().sku == GID


def test_link_without_items_creates_nothing_and_goes_on(client: Client, shop: None) -> None:
    response = client.get("/comprar", {"context/postal_code": "01310-100", "continue_to": "/produtos/"})

    assert_redirect(response)
    assert location(response)[0] == "/produtos/"
    assert client.get("/comprar/")["Location"] == f"{PUBLIC}/"
    assert Checkout.objects.count() == 0


def test_head_creates_nothing_bcp_pl_06(client: Client, shop: None) -> None:
    response = client.head("/comprar/SKU-CAFE-500G:1")

    assert_redirect(response)
    assert Checkout.objects.count() == 0


def test_unknown_items_go_to_the_cart_with_the_reason(client: Client, shop: None) -> None:
    response = client.get("/comprar/NAO-EXISTE:1")

    assert_redirect(response)
    assert location(response)[0] == "/carrinho/"
    assert Checkout.objects.count() == 0
    page = client.get("/carrinho/").content.decode()
    assert "O item NAO-EXISTE não está disponível." in page


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("/comprar/SKU-CAFE-500G:0", "Quantidade inválida"),
        ("/comprar/SKU-CAFE-500G:007", "sem zeros à esquerda"),
        ("/comprar/SKU-CAFE-500G", "id:quantidade"),
        ("/comprar/sku café:1", "Identificador de item inválido"),
        ("/comprar/~%3D%3D:1", "~base64url"),
        ("/comprar/SKU-CAFE-500G:1?buyer/email=a%40b.com&/buyer/email=c%40d.com", "ambíguo"),
        ("/comprar/SKU-CAFE-500G:1?buyer/first_name=%00", "caracteres de controle"),
        ("/comprar/SKU-CAFE-500G:1?buyer/email=%FF", "ilegíveis"),
        ("/comprar/SKU-CAFE-500G:1?buyer/first_name=" + "a" * 101, "No máximo 100 caracteres"),
        ("/comprar/A:1/B:1", "barras"),
    ],
)
def test_bad_links_get_a_clear_portuguese_page_bcp_pl_02_03(client: Client, shop: None, url: str, needle: str) -> None:
    response = client.get(url)

    text = assert_error_page(response)
    assert needle in text
    assert Checkout.objects.count() == 0


def test_post_is_not_a_permalink(client: Client, shop: None) -> None:
    response = client.post("/comprar/SKU-CAFE-500G:1", HTTP_ACCEPT="text/html")

    assert response.status_code == 405
    assert Checkout.objects.count() == 0


def test_sensitive_parameters_are_never_forwarded_bcp_pl_07(client: Client, shop: None) -> None:
    response = client.get(
        "/comprar/SKU-CAFE-500G:1",
        {
            "access_token": "t",
            "session": "s",
            "api_key": "k",
            "password": "p",
            "email": "x@y.z",
            "code": "123",
            "buyer/email": "ana@example.com.br",
            "buyer/phone_number": "+5511987654321",
            "ref": "creator_42",
        },
    )

    assert_redirect(response)
    assert location(response)[1] == {"ref": "creator_42"}


def test_rate_limited_links_get_a_page_with_retry_after(client: Client, shop: None, settings: Any) -> None:
    settings.BCP_RATE_LIMITS = {**settings.BCP_RATE_LIMITS, "checkout_create": ("60/minute", "1/minute")}
    assert client.get("/comprar/SKU-CAFE-500G:1").status_code == 303

    response = client.get("/comprar/SKU-CAFE-500G:1")

    assert_error_page(response, status=429)
    assert int(response["Retry-After"]) >= 1
    assert Checkout.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.e2e
def test_live_server_refuses_percent_encoded_separators_bcp_pl_02(bcp_settings: Any, transactional_db: None) -> None:
    """Over a real ASGI server the raw path is seen: `%2C` is not a separator, it is a refused encoding."""
    from tests.bcp_app.live import LiveServer

    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    server = LiveServer().start()
    try:
        refused = httpx.get(f"{server.url}/comprar/SKU-CAFE-500G:1%2CSKU-CAFE-500G:1", timeout=30)
        ok = httpx.get(f"{server.url}/comprar/SKU-CAFE-500G:1?utm_source=x", timeout=30)
    finally:
        server.stop()
    assert refused.status_code == 400 and "~base64url" in refused.text
    assert ok.status_code == 303 and ok.headers["referrer-policy"] == "no-referrer"
    assert ok.headers["cache-control"] == "no-store"
    assert Checkout.objects.count() == 1
