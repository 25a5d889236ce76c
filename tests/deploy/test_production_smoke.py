"""Production smoke test: what the image does, without Docker (issue 12 item 3).

A clean virtualenv with the package installed from its wheel (as `pip install .`; uv builds it), the
Dockerfile's collectstatic line, uvicorn as the Dockerfile's CMD with `DJANGO_DEBUG=false` and the `.env.example`
variables (secrets replaced, sandbox PSP forced, loopback Postgres on a database of its own, Redis on the test
broker). Every page a merchant's first customer, the merchant and an agent would touch answers 2xx/3xx, never 500.
With the old Dockerfile (collectstatic under DEBUG, no manifest) every `{% static %}` page failed here.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.deploy.dockerfile import ROOT
from tests.deploy.production import ProductionStack, build_venv

# The first test's setup builds the image's venv, collects static files, migrates and seeds a fresh database in
# subprocesses: minutes on a 2-core machine whose other test workers run beside it, more than the suite's 300 s.
pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.timeout(900)]

CONTACT = {
    "email": "ana@example.com.br",
    "first_name": "Ana",
    "last_name": "Souza",
    "phone": "(11) 98765-4321",
    "tax_id": "529.982.247-25",
}
ADDRESS = {
    "method": "shipping",
    "cep": "01310-100",
    "street": "Rua das Flores",
    "number": "123",
    "complement": "Apto 45",
    "neighborhood": "Jardim Paulista",
    "city": "São Paulo",
    "uf": "SP",
}


@pytest.fixture(scope="session")
def production_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_venv(tmp_path_factory.mktemp("production-venv"))


@pytest.fixture(scope="module")
def stack(production_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProductionStack]:
    stack = ProductionStack(tmp_path_factory.mktemp("production-app"), production_venv)
    try:
        built = stack.collectstatic()
        assert built.returncode == 0, built.stderr
        stack.start()
        yield stack
    finally:
        stack.close()


@pytest.fixture(scope="module")
def platform_profile() -> Iterator[str]:
    """The example agent profile served over loopback, as a platform would publish it."""
    body = (ROOT / "examples" / "agent-profile.json").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/profiles/agente.json"
    server.shutdown()
    server.server_close()


class Browser:
    """httpx behind a TLS proxy: `X-Forwarded-Proto: https`, and the Secure cookies kept by hand
    (httpx rightly never sends them over the plain-http loopback hop)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.origin = base.replace("http://", "https://")
        self.cookies: dict[str, str] = {}
        self.client = httpx.Client(base_url=base, timeout=30, follow_redirects=False)

    def request(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        headers = {"X-Forwarded-Proto": "https", "Referer": f"{self.origin}/", **kwargs.pop("headers", {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        response = self.client.request(method, path, headers=headers, **kwargs)
        for name, value in response.cookies.items():
            self.cookies[name] = value
        assert response.status_code < 400, f"{method} {path} -> {response.status_code}: {response.text[:500]}"
        return response

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, data: dict[str, str]) -> httpx.Response:
        return self.request("POST", path, data={"csrfmiddlewaretoken": self.cookies["csrftoken"], **data})


def local(location: str) -> str:
    return re.sub(r"^https://127\.0\.0\.1:\d+", "", location)


def test_the_installed_package_is_what_serves(stack: ProductionStack) -> None:
    """The smoke server imports the wheel's copy from the virtualenv, never the source tree."""
    import subprocess

    out = subprocess.run(
        [str(stack.venv / "bin" / "python"), "-c", "import shop; print(shop.__file__)"],
        cwd=stack.app_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out.startswith(str(stack.venv)), out
    assert (stack.app_dir / "staticfiles" / "staticfiles.json").is_file()


def test_buyer_merchant_and_agent_pages_answer_without_errors(stack: ProductionStack, platform_profile: str) -> None:
    browser = Browser(stack.url)
    # probes
    assert browser.get("/healthz").json() == {"status": "ok"}
    assert browser.get("/readyz").json() == {
        "status": "ok",
        "checks": {"database": "ok", "broker": "ok", "cache": "ok"},
    }
    # storefront: home links the hashed stylesheet, which WhiteNoise serves
    home = browser.get("/")
    assert home.status_code == 200
    css = re.search(r'href="(/static/shop/shop\.[0-9a-f]{12}\.css)"', home.text)
    assert css is not None, "home does not link the hashed stylesheet"
    assert browser.get(css.group(1)).status_code == 200
    listing = browser.get("/produtos/")
    product_path = re.search(r'href="(/produtos/[a-z0-9-]+/)"', listing.text).group(1)
    assert browser.get(product_path).status_code == 200
    # cart → checkout → Pix page
    added = browser.post("/carrinho/adicionar", {"sku": "SKU-CAFE-500G", "quantity": "2"})
    assert added.status_code == 302
    assert browser.get("/carrinho/").status_code == 200
    started = browser.get("/checkout/")
    assert started.status_code == 302
    checkout_path = local(started.headers["Location"])
    assert browser.get(checkout_path).status_code == 200
    paid = browser.post(checkout_path, {"action": "pay", **CONTACT, **ADDRESS, "shipping_option": "sedex"})
    assert (paid.status_code, local(paid.headers["Location"])) == (302, f"{checkout_path}/pix")
    pix = browser.get(f"{checkout_path}/pix")
    assert pix.status_code == 200
    assert "<svg" in pix.text
    # an uploaded photo in the media volume (/app/var/media): .env.example has the app serve it
    photo = stack.app_dir / "var" / "media" / "products" / "smoke-photo.jpg"
    photo.parent.mkdir(parents=True, exist_ok=True)
    photo.write_bytes(b"\xff\xd8\xff\xe0 smoke photo")
    served = browser.get("/media/products/smoke-photo.jpg")
    assert (served.content, served.headers["Content-Type"]) == (photo.read_bytes(), "image/jpeg")
    assert "Last-Modified" in served.headers
    # bearer links (a sign-in link, an order permalink) are logged cut to four characters (BCP-SEC-04)
    secret = "Zk3vQm9XyT2pLr8sWn4uAa1bCc5dEe6f"
    https = {"X-Forwarded-Proto": "https"}
    assert browser.client.get(f"/conta/entrar/{secret}", headers=https).status_code in (200, 302, 404)
    assert browser.client.get(f"/orders/{secret}", headers=https).status_code == 404
    # merchant: admin login and the orders list
    admin = Browser(stack.url)
    assert admin.get("/admin/login/").status_code == 200
    logged_in = admin.post(
        "/admin/login/?next=/admin/", {"username": "lojista", "password": stack.admin_password, "next": "/admin/"}
    )
    assert (logged_in.status_code, local(logged_in.headers["Location"])) == (302, "/admin/")
    assert admin.get("/admin/").status_code == 200
    assert admin.get("/admin/orders/order/").status_code == 200
    # agent: discovery and a REST checkout create
    agent = Browser(stack.url)
    profile = agent.get("/.well-known/bcp")
    assert profile.status_code == 200
    assert profile.json()["ucp"]["version"] == "2026-07-28"
    created = agent.request(
        "POST",
        "/bcp/v1/checkout-sessions",
        json={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]},
        headers={
            "BCP-Agent": f'profile="{platform_profile}"',
            "Idempotency-Key": str(uuid.uuid4()),
            "Request-Id": "smoke-create-1",
        },
    )
    assert created.status_code == 201
    assert created.json()["status"] == "incomplete"
    assert created.headers["X-Request-ID"] == "smoke-create-1"
    # logs: each request is one JSON object naming request id, platform, operation, status and duration.
    # A line is written after its response is sent; stopping the server flushes them all.
    stack.close()
    lines = [line for line in stack.log_lines() if line.get("request_id") == "smoke-create-1"]
    assert len(lines) == 1, json.dumps(lines)
    line = lines[0]
    assert (line["event"], line["method"], line["path"], line["status"]) == (
        "request",
        "POST",
        "/bcp/v1/checkout-sessions",
        201,
    )
    assert (line["transport"], line["operation"], line["platform"]) == ("rest", "create_checkout", "anonymous")
    took_ms = line["duration_ms"]  # a number in the log line (not a timing assertion)
    assert isinstance(took_ms, float) and took_ms >= 0
    assert (line["level"], line["logger"]) == ("INFO", "shop.access")
    assert not [line for line in stack.log_lines() if line.get("level") == "ERROR"]
    assert not [line for line in stack.log_lines() if secret in json.dumps(line)]
    assert [line for line in stack.log_lines() if line.get("path") == "/orders/Zk3v…"]
