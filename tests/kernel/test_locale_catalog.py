"""The English catalogs cover every text the code and templates mark for translation: a msgid missing from
locale/en or an app's own locale/en (a new message, or one reworded) reaches an English reader in Portuguese."""

from __future__ import annotations

import gettext
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The sources Django's makemessages reads (Python and templates) and the catalogs; not tests, static or var.
SOURCES = ("bcp_app", "carriers", "config", "fiscal", "kernel", "orders", "payments", "shop", "templates", "locale")
pytestmark = pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs GNU gettext (xgettext, msgattrib)")


def _entries(catalog: Path, which: str) -> list[str]:
    """The msgids `msgattrib --untranslated` or `--only-fuzzy` selects (the header left out)."""
    out = subprocess.run(
        ["msgattrib", which, "--no-location", "--no-wrap", str(catalog)], capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if line.startswith("msgid ") and line != 'msgid ""']


def test_every_translatable_text_has_an_english_entry(tmp_path: Path) -> None:
    # makemessages rewrites the catalog in place: run it on a copy of the sources, never on the tree itself.
    for name in SOURCES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.mo", "_site"))
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "en", "--no-obsolete"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    # The project's catalog and each app's own (orders/locale: makemessages writes an app's Python texts there).
    catalogs = sorted(tmp_path.glob("**/locale/en/LC_MESSAGES/django.po"))
    assert tmp_path / "locale" / "en" / "LC_MESSAGES" / "django.po" in catalogs and len(catalogs) > 1
    # A new msgid merged as fuzzy (guessed from a similar one) is not used by gettext either: both are missing.
    missing = {
        str(catalog.relative_to(tmp_path)): _entries(catalog, "--untranslated") + _entries(catalog, "--only-fuzzy")
        for catalog in catalogs
    }

    assert missing == {str(catalog.relative_to(tmp_path)): [] for catalog in catalogs}, "msgids without English"


def test_the_english_catalog_spells_canceled_one_way() -> None:
    """Closing note: the English pages mixed "Canceled" and "Cancelled". One spelling, the American one Django's own
    catalogs use ("Canceled", "canceling"; "cancellation" is the same in both)."""
    catalogs = [path for path in ROOT.glob("**/locale/en/LC_MESSAGES/django.po") if ".venv" not in path.parts]
    assert ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po" in catalogs and len(catalogs) > 1  # the apps' too
    translations = [
        line
        for catalog in catalogs
        for line in catalog.read_text(encoding="utf-8").splitlines()
        if not line.startswith(("msgid", "#"))
    ]
    british = [line for line in translations if re.search(r"cancell(ed|ing)", line, re.IGNORECASE)]
    assert british == [], "use the American spelling (canceled, canceling) in every English catalog"
    assert any("Canceled" in line for line in translations)


def test_every_english_catalog_translates_a_text_as_the_projects_does(tmp_path: Path) -> None:
    """The orders catalog said "Neighbourhood", "Shipment", "Rejected"… where the project's says "Neighborhood",
    "Shipping", "Refused" for the same Portuguese (13 entries): Django reads the project's first (LOCALE_PATHS), so
    an app's own wording was never seen, and a reworded one in either read as a change. One wording for one text."""
    catalogs = [path for path in ROOT.glob("**/locale/en/LC_MESSAGES/django.po") if ".venv" not in path.parts]
    project = ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po"
    assert project in catalogs and len(catalogs) > 1

    def read(catalog: Path) -> dict[Any, str]:
        compiled = tmp_path / f"{len(list(tmp_path.iterdir()))}.mo"
        subprocess.run(["msgfmt", "-o", str(compiled), str(catalog)], check=True)
        with compiled.open("rb") as file:
            return {key: text for key, text in gettext.GNUTranslations(file)._catalog.items() if key and text}

    words = read(project)
    differing = {
        str(catalog.relative_to(ROOT)): sorted(
            (str(msgid), text, words[msgid]) for msgid, text in read(catalog).items() if words.get(msgid, text) != text
        )
        for catalog in catalogs
        if catalog != project
    }
    assert differing == {name: [] for name in differing}, "the project catalog's wording, in every app's catalog"
