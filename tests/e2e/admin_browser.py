"""Shared helpers of the admin browser tests: chromium launch arguments and the staff login."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not IN_CI, reason="chromium missing (install Debian's 'chromium')"
)
STAFF = ("lojista", "senha-forte-123")


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)


def staff_login(page: Any, base_url: str, next_path: str = "/admin/") -> None:
    page.goto(f"{base_url}/admin/login/?next={next_path}")
    page.fill("#id_username", STAFF[0])
    page.fill("#id_password", STAFF[1])
    page.click("input[type=submit]")
    page.wait_for_url(f"{base_url}{next_path}")
