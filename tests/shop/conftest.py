"""Fixtures shared by the shop's tests: the freight fixtures (demo table and boxes, the two fake carriers)."""

from tests.shop.freight_helpers import correios, freight_shop, melhorenvio  # noqa: F401 (fixtures)
