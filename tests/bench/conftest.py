"""Benchmark fixtures: a 1,000-product catalog inserted in bulk (run with `make bench`)."""

from __future__ import annotations

import pytest

from shop.models import Category, Product, ProductImage, Variant

BENCH_PRODUCTS = 1_000


@pytest.fixture
def thousand_products(db: None) -> int:
    categories = Category.objects.bulk_create(
        [Category(name=f"Categoria {i}", slug=f"categoria-{i}", position=i) for i in range(8)]
    )
    products = Product.objects.bulk_create(
        [
            Product(
                title=f"Produto de teste {i:04d}",
                slug=f"produto-de-teste-{i:04d}",
                description="Produto gerado para o benchmark da listagem.",
                brand="Bench",
                category=categories[i % len(categories)],
            )
            for i in range(BENCH_PRODUCTS)
        ]
    )
    Variant.objects.bulk_create(
        [
            Variant(
                product=p,
                sku=f"BENCH-{i:04d}-{size}",
                title=size,
                options={"tamanho": size},
                price=1000 + i * 7 + k * 100,
                stock=(i + k) % 5,
                position=k,
            )
            for i, p in enumerate(products)
            for k, size in enumerate(("P", "M", "G"))
        ]
    )
    ProductImage.objects.bulk_create(
        [ProductImage(product=p, source="shop/demo/cafe-especial-500g.svg", alt_text=p.title) for p in products]
    )
    return BENCH_PRODUCTS
