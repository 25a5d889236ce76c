"""The REST schemas repeat two limits of the catalog (schemas import no models): they must agree (BCP-CAT-01)."""

from __future__ import annotations

import re

import pytest

from bcp_app.protocol.schemas import catalog as schema
from bcp_app.service.catalog import parse_cursor
from shop.catalog.selectors import MAX_PRICE_CENTS


def test_the_schema_price_bound_is_the_catalogs() -> None:
    assert schema.MAX_PRICE_CENTS == MAX_PRICE_CENTS


@pytest.mark.parametrize("cursor", ["p1", "p2", "p10", "p007", "p0", "p", "x1", "p-1", "p1a", "1"])
def test_the_schema_cursor_pattern_accepts_exactly_the_cursors_the_catalog_parses(cursor: str) -> None:
    try:
        parse_cursor(cursor)
        parsed = True
    except ValueError:
        parsed = False
    assert bool(re.fullmatch(schema.CURSOR_PATTERN.strip("^$"), cursor)) == parsed
