"""kernel.compiled: a queryset compiled once per process reads what the queryset itself reads, for the values given."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.test.utils import CaptureQueriesContext

from kernel.compiled import compiled, stand_in
from kernel.rows import kept_cursor
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


def _joined(sku: str) -> QuerySet[Variant]:
    # the checkout lock's kind of shape: select_related, an annotation and an extra select
    return (
        Variant.objects.select_related("product")
        .filter(Q(sku=sku) | Q(product__title=sku))
        .annotate(doubled=F("price") * 2)
        .extra(select={"halved": "price / 2"})
        .order_by("sku")
    )


def test_a_joined_shape_reads_the_querysets_instances_from_the_cursor() -> None:
    """select_related, annotations and extra selects: the queryset's own instances, the related one with them,
    in one statement, by the reader computed once (issue 34), not Django's row reader on every call."""
    make_variant("SKU-A", price=100, title="Café A")
    make_variant("SKU-B", price=300, title="Café B")
    read = compiled("test.joined", _joined)
    assert read.plain is None and read.joined is not None
    for value in ("SKU-A", "Café B", "SKU-X"):
        expected = list(_joined(value))
        with CaptureQueriesContext(connection) as queries:
            rows = read.rows(value)
            titles = [row.product.title for row in rows]  # fetched with the row, no further query
        assert len(queries) == 1
        assert [(r.pk, r.sku, r.price, r.doubled, r.halved, r.product_id) for r in rows] == [
            (r.pk, r.sku, r.price, r.doubled, r.halved, r.product_id) for r in expected
        ]
        assert titles == [row.product.title for row in expected]
        assert all(not row._state.adding and row._state.db == "default" for row in rows)
        assert [row.get_deferred_fields() for row in rows] == [row.get_deferred_fields() for row in expected]


def test_a_stand_in_left_out_of_the_parameters_is_refused() -> None:
    with pytest.raises(ValueError):
        compiled("test.no_stand_in", lambda sku: Variant.objects.filter(sku="SKU-A"))


def test_a_stand_in_may_be_bound_in_several_parameters() -> None:
    """The checkout lock binds its id in the row, the reference lock and the card brief."""
    make_variant("SKU-A", price=100, title="Café A")
    make_variant("SKU-B", price=200, title="Café B")
    read = compiled("test.twice", lambda sku: Variant.objects.filter(Q(sku=sku) | Q(product__title=sku)).order_by())
    assert len(read.slots) == 2
    assert [row.sku for row in read.rows("SKU-B")] == ["SKU-B"]
    assert [row.sku for row in read.rows("Café A")] == ["SKU-A"]


def test_an_integer_stand_in_reads_by_a_foreign_key() -> None:
    first = make_variant("SKU-A", price=100, title="Café A")
    make_variant("SKU-B", price=200, title="Café B")
    read = compiled("test.by_product", lambda pk: Variant.objects.filter(product_id=pk).order_by(), kind=int)
    assert [row.sku for row in read.rows(first.product_id)] == ["SKU-A"]


def test_a_plain_shape_reads_the_querysets_instances_with_deferred_fields() -> None:
    """One model's own columns are read straight from the cursor: the same values, the same deferred fields."""
    make_variant("SKU-A", price=100, title="Café A")
    read = compiled("test.only", lambda sku: Variant.objects.filter(sku=sku).only("sku", "price").order_by())
    assert read.plain is not None
    (row,) = read.rows("SKU-A")
    (expected,) = Variant.objects.filter(sku="SKU-A").only("sku", "price")
    assert (row.pk, row.sku, row.price, row.get_deferred_fields()) == (
        expected.pk,
        expected.sku,
        expected.price,
        expected.get_deferred_fields(),
    )
    assert not row._state.adding and row._state.db == expected._state.db


def test_a_stand_in_changed_by_its_lookup_is_refused() -> None:
    with pytest.raises(ValueError):  # icontains binds '%…%', not the stand-in
        compiled("test.contains", lambda sku: Variant.objects.filter(sku__icontains=sku))


def test_a_stand_in_equal_to_a_constant_of_the_query_is_refused() -> None:
    constant = stand_in(0, int)
    with pytest.raises(ValueError):
        compiled("test.collides", lambda pk: Variant.objects.filter(product_id=pk, price=constant), kind=int)


def test_an_integer_stand_in_the_backend_wraps_is_bound_wrapped() -> None:
    make_variant("SKU-A", price=100, title="Café A")
    make_variant("SKU-B", price=200, title="Café B")
    read = compiled("test.by_price", lambda price: Variant.objects.filter(price=price).order_by(), kind=int)
    assert [row.sku for row in read.rows(200)] == ["SKU-B"]


@pytest.mark.django_db(transaction=True)
def test_reads_share_kernel_rows_kept_cursor_and_follow_a_new_connection() -> None:
    """A plain and a joined shape read through kernel.rows' cursor of the connection (issue 34: a new cursor made
    and wrapped per read), logged while a test captures statements, and on the new connection after a close."""
    make_variant("SKU-A", price=100, title="Café A")
    plain = compiled("test.kept.plain", lambda sku: Variant.objects.filter(sku=sku).order_by())
    joined = compiled("test.kept.joined", _joined)
    assert [row.price for row in plain.rows("SKU-A")] == [100]
    kept = kept_cursor()
    assert [row.product.title for row in joined.rows("SKU-A")] == ["Café A"]
    assert plain.values("SKU-A") is not None and kept_cursor() is kept
    with CaptureQueriesContext(connection) as queries:
        assert [row.sku for row in plain.rows("SKU-A")] == ["SKU-A"]
    assert len(queries) == 1
    connection.close()
    assert [row.sku for row in joined.rows("SKU-A")] == ["SKU-A"]
    assert kept_cursor() is not kept
