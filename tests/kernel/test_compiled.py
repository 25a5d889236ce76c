"""kernel.compiled: a queryset compiled once per process reads what the queryset itself reads, for the values given."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext

from kernel.compiled import compiled
from shop.models import Variant
from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db


def _by_skus(*skus: str) -> QuerySet[Variant]:
    return Variant.objects.select_related("product").filter(sku__in=skus).order_by("sku")


def test_rows_are_the_querysets_rows_with_select_related() -> None:
    make_variant("SKU-A", price=100, title="Café A")
    make_variant("SKU-B", price=200, title="Café B")
    make_variant("SKU-C", price=300, title="Café C")
    read = compiled(("test.by_skus", 2), _by_skus, 2)
    for pair in (("SKU-A", "SKU-C"), ("SKU-B", "SKU-X")):
        expected = list(_by_skus(*pair))
        with CaptureQueriesContext(connection) as queries:
            rows = read.rows(*pair)
            titles = [row.product.title for row in rows]  # fetched with the row, no further query
        assert [(row.pk, row.sku, row.price) for row in rows] == [(row.pk, row.sku, row.price) for row in expected]
        assert titles == [row.product.title for row in expected]
        assert len(queries) == 1


def test_a_stand_in_left_out_of_the_parameters_is_refused() -> None:
    with pytest.raises(ValueError):
        compiled("test.no_stand_in", lambda sku: Variant.objects.filter(sku="SKU-A"))
