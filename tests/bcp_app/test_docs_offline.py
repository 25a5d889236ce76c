"""`/bcp/v1/docs` loads Swagger UI from the shop's own static files, never from a CDN (issue 16, item 10)."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_swagger_ui_assets_are_local(client):
    response = client.get("/bcp/v1/docs")
    html = response.content.decode()
    assert response.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html)
    assert sorted(assets) == ["/static/ninja/swagger-ui-bundle.js", "/static/ninja/swagger-ui-init.js",
                              "/static/ninja/swagger-ui.css"]  # fmt: skip
    assert "cdn" not in html.lower() and "https://" not in html
    # and each asset is a file the shop has (collectstatic ships it; whitenoise serves it)
    for asset in assets:
        assert finders.find(asset.removeprefix("/static/")) is not None, asset
    assert '"url": "/bcp/v1/openapi.json"' in html


def test_openapi_json_is_served(client):
    response = client.get("/bcp/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "BCP REST"
