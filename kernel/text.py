"""Text folding shared by the catalogue search and the staff's order search, and its SQLite face."""

from __future__ import annotations

import unicodedata
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper


def fold(text: str | None) -> str:
    """Strip accents and case ("Café" → "cafe"), as unaccent() and the text search's lower-casing do."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def sqlite_unaccent(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """`connection_created` receiver: SQLite (the bare-machine store of `make run`) gets an `unaccent()` SQL
    function, so the `__unaccent` lookups django.contrib.postgres registers on every text field ignore accents
    there too (on PostgreSQL the extension's function answers). It also folds case, which a LIKE then ignores."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("unaccent", 1, fold, deterministic=True)


LANGUAGE_NAMES = {"pt-br": "Português (Brasil)", "en": "English"}  # each in its own language, as Django's switch


def language_name(code: str) -> str:
    """ "pt-br" → "Português (Brasil)": the language an order or a subscription speaks, for staff; an unknown code
    as it is."""
    return LANGUAGE_NAMES.get(code, code)
