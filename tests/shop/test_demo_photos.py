"""Demo photos carry the product's name in the picture: accented letters must be drawn, not the missing-glyph
box ("Camiseta B□sica", "Port□til □ Prova d'□gua" with Pillow's default font)."""

from __future__ import annotations

import io

from PIL import Image

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


def _centre(slug: str) -> tuple[int, ...]:
    picture = Image.open(io.BytesIO(demo_photo_render(slug=slug, title="x", size=200)))
    return picture.convert("RGB").getpixel((100, 100))  # type: ignore[return-value]


def test_a_product_named_by_its_colour_is_drawn_in_it() -> None:
    """QA walk: "Camiseta Básica Preta" had a blue notebook for a photo."""
    assert max(_centre("camiseta-basica-preta")) < 70
    assert min(_centre("camiseta-basica-branca")) > 220
    red, green, blue = _centre("camiseta-estampa-ipe-amarelo")
    assert red > 200 and green > 160 and blue < 90
