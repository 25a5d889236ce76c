"""Storefront template helpers that every page (including checkout pages) may use."""

from __future__ import annotations

from django import template

from shop.models import Category
from shop.selectors import categories_for_nav

register = template.Library()


@register.simple_tag
def nav_categories() -> list[Category]:
    """Top-level categories for the header menu (one query)."""
    return categories_for_nav()
