"""Product photos: the thumbnail made once when a photo is saved, the store logo's header size, and the demo
shop's raster photos.

Thumbnails are made by easy-thumbnails on the configured media storage (local or bucket) and their
storage name is kept on the row, so pages never look a thumbnail up or render one on a request.
"""

from __future__ import annotations

import hashlib
import io

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.fields.files import FieldFile
from easy_thumbnails.engine import NoSourceGenerator
from easy_thumbnails.exceptions import InvalidImageFormatError
from easy_thumbnails.files import get_thumbnailer
from PIL import Image, ImageDraw, ImageFont

from shop.checkout.stock import catalog_cache_bump
from shop.models import ProductImage


def product_image_thumbnail_make(*, image: ProductImage) -> str:
    """Make the admin thumbnail and every storefront size (THUMBNAIL_ALIASES) of an uploaded photo, once;
    their storage names go on the row. Returns the admin thumbnail's name ("" for paths and URLs)."""
    aliases = list(settings.THUMBNAIL_ALIASES.get("", {}))
    if not image.image or (image.thumbnail and all(alias in (image.thumbnails or {}) for alias in aliases)):
        return image.thumbnail
    thumbnailer = get_thumbnailer(image.image)
    if not image.thumbnail:
        image.thumbnail = thumbnailer.get_thumbnail(dict(settings.SHOP_THUMBNAIL_OPTIONS), save=True).name
    image.thumbnails = {alias: thumbnailer[alias].name for alias in aliases}  # generated (and saved) here
    ProductImage.objects.filter(pk=image.pk).update(thumbnail=image.thumbnail, thumbnails=image.thumbnails)
    # An UPDATE sends no post_save: the pages showing the photo at its full size until now are rendered again.
    catalog_cache_bump()
    transaction.on_commit(catalog_cache_bump)
    return image.thumbnail


# The header shows the logo at 32 px: 64 px covers 2× screens. No crop (a logo is never cut), no upscale.
LOGO_THUMBNAIL = {"size": (64, 64), "quality": 90}


def logo_thumbnail_url(logo: FieldFile) -> str:
    """URL of the header-sized copy of the store logo (made on first use, then kept by the store cache);
    the upload itself if it cannot be read (every page shows the logo: never a 500 for it)."""
    try:
        return get_thumbnailer(logo).get_thumbnail(LOGO_THUMBNAIL, save=True).url
    except (InvalidImageFormatError, OSError):
        return logo.url


# The home's hero picture shows at most 420 × 280 px: twice that covers 2× screens. No crop, no upscale.
HERO_THUMBNAIL = {"size": (840, 560), "quality": 85}


def hero_thumbnail_url(image: FieldFile) -> str:
    """URL of the home-sized copy of the store's hero picture; the upload itself if it cannot be read (an SVG,
    like the demo's): the home never fails for it."""
    try:
        return get_thumbnailer(image).get_thumbnail(HERO_THUMBNAIL, save=True).url
    except (InvalidImageFormatError, NoSourceGenerator, OSError):
        return image.url


# A product whose name says its colour is drawn in it (QA walk: the black T-shirt's photo was blue).
NAMED_COLOURS = {
    "pret": (38, 38, 40),
    "branc": (244, 244, 240),
    "amarel": (236, 190, 40),
    "azul": (40, 80, 160),
    "verde": (40, 120, 70),
    "vermelh": (180, 40, 40),
}


def _palette(slug: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    # Stable colours per product: the same slug always draws the same photo.
    digest = hashlib.sha256(slug.encode()).digest()
    light = (200 + digest[0] % 56, 200 + digest[1] % 56, 180 + digest[2] % 76)
    dark = (digest[3] % 120, 60 + digest[4] % 100, 40 + digest[5] % 120)
    named = next((colour for word, colour in NAMED_COLOURS.items() if word in slug), None)
    if named is not None:
        # a white shirt on a near-white background would vanish: that background is a shade darker
        light = (200, 204, 210) if min(named) > 220 else light
        dark = named
    return light, dark


def _tshirt(size: int) -> list[tuple[float, float]]:
    """A T-shirt's outline (sleeves, neck) in the photo's middle, as a polygon."""
    points = [(0.38, 0.2), (0.45, 0.24), (0.55, 0.24), (0.62, 0.2), (0.8, 0.3), (0.74, 0.4), (0.67, 0.36),
              (0.67, 0.7), (0.33, 0.7), (0.33, 0.36), (0.26, 0.4), (0.2, 0.3)]  # fmt: skip
    return [(x * size, y * size) for x, y in points]


# Pillow's scalable default (Aileron) has no accented letters: "Básica" came out "B□sica". DejaVu Sans ships
# with most Linux systems (Debian's fonts-dejavu-core); the default font stays the fallback elsewhere.
DEMO_FONT_PATHS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",)


def demo_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in DEMO_FONT_PATHS:
        try:
            return ImageFont.truetype(path, size)
        except OSError:  # not installed here
            continue
    return ImageFont.load_default(size=size)


def demo_photo_render(*, slug: str, title: str, size: int = 800) -> bytes:
    """A believable raster product photo for the demo shop (JPEG): gradient, product shape, name."""
    light, dark = _palette(slug)
    picture = Image.new("RGB", (size, size), light)
    draw = ImageDraw.Draw(picture)
    for y in range(size):  # vertical gradient towards a slightly darker bottom
        shade = tuple(max(0, c - y * 40 // size) for c in light)
        draw.line([(0, y), (size, y)], fill=shade)
    draw.ellipse([size * 0.72, size * 0.06, size * 0.94, size * 0.28], fill=(255, 255, 255))
    if "camiseta" in slug:
        draw.polygon(_tshirt(size), fill=dark, outline=tuple(c // 2 for c in dark))
    else:  # a box or a book: the demo's coffee, accessories and guides
        draw.rounded_rectangle([size * 0.3, size * 0.2, size * 0.7, size * 0.68], radius=size // 24, fill=dark)
        draw.rectangle([size * 0.3, size * 0.2, size * 0.36, size * 0.68], fill=tuple(c // 2 for c in dark))
    font = demo_font(size // 22)
    text_width = draw.textlength(title, font=font)
    draw.text(((size - text_width) / 2, size * 0.8), title, fill=(29, 37, 33), font=font)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def demo_photo_ensure(*, slug: str, title: str) -> str:
    """Storage name of the demo photo of a product, written once (a re-seed reuses the file)."""
    name = f"demo/{slug}.jpg"
    if not default_storage.exists(name):
        name = default_storage.save(name, ContentFile(demo_photo_render(slug=slug, title=title)))
    return name
