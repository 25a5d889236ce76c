"""The site (storefront, admin, order pages) over ASGI (config/asgi.py `OneHopHandler`): each request served in
one thread hop on the loop's executor (issue 11), files included.

`tests/deploy/test_production_smoke.py` walks the same handler under uvicorn (pages, the hashed stylesheet,
the cart and checkout forms with their CSRF token, the admin login).
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest

from config.asgi import OneHopHandler
from tests.asgi_crossings import count_crossings

pytestmark = pytest.mark.django_db(transaction=True)


def _get(paths: list[str]) -> list[httpx.Response]:
    async def get_all() -> list[httpx.Response]:  # straight through the handler, no server
        transport = httpx.ASGITransport(app=OneHopHandler())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return [await client.get(path) for path in paths]

    return asyncio.run(get_all())


def test_a_page_is_one_thread_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The site's chain has sync-only middleware (WhiteNoise, `MethodNotAllowedPage`): Django's handler hopped
    between the loop and threads for them; here a page crosses into a thread once and never back."""
    crossings = count_crossings(monkeypatch)
    home, missing = _get(["/", "/nao-existe/"])
    assert home.status_code == 200 and "<html" in home.text
    assert missing.status_code == 404
    assert len(crossings.into_a_thread) == 2
    assert crossings.back_to_the_loop == []


def test_a_file_is_served_whole_without_a_thread_of_its_own(settings: Any, tmp_path: Path) -> None:
    """A media file (a FileResponse, as WhiteNoise's static files are) is read in the request's thread and
    replayed from the loop: the same bytes and headers, and no synchronous iterator left for Django to
    consume on the loop (it warns when it has to)."""
    settings.MEDIA_ROOT = tmp_path
    photo = bytes(range(256)) * 300  # 76.8 kB: more than one read block
    (tmp_path / "cafe.jpg").write_bytes(photo)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        served, missing = _get([f"{settings.MEDIA_URL}cafe.jpg", f"{settings.MEDIA_URL}nada.jpg"])
    assert served.status_code == 200
    assert served.content == photo
    assert served.headers["content-type"] == "image/jpeg"
    assert served.headers["content-length"] == str(len(photo))
    assert missing.status_code == 404
    assert not [w for w in caught if "synchronous iterators" in str(w.message)]
