"""Demo photos carry the product's name in the picture: accented letters must be drawn, not the missing-glyph
box ("Camiseta B□sica", "Port□til □ Prova d'□gua" with Pillow's default font)."""

from __future__ import annotations

from shop.catalog.images import demo_font, demo_photo_render

MISSING = "\ue000"  # a private-use code point: no font has it, so it draws the font's missing-glyph box
ACCENTED = "áàâãçéêíóôõúÁÂÃÇÉÍÓÚ"


def test_the_demo_font_has_every_portuguese_accented_letter() -> None:
    font = demo_font(40)
    missing = bytes(font.getmask(MISSING))
    drawn_as_missing = [letter for letter in ACCENTED if bytes(font.getmask(letter)) == missing]
    assert drawn_as_missing == []


def test_an_accented_name_is_not_drawn_as_the_missing_glyph() -> None:
    accented = demo_photo_render(slug="camiseta", title="Camiseta Básica", size=400)
    with_missing_glyph = demo_photo_render(slug="camiseta", title=f"Camiseta B{MISSING}sica", size=400)
    assert accented != with_missing_glyph
