"""QR rendering of BR Codes with segno (pure Python, PIX.md §9)."""

from __future__ import annotations

import segno


def qr_svg(br_code: str) -> str:
    """SVG markup (no XML declaration, so it can be inlined in HTML) for a BR Code string."""
    # Error level M: the level Pix payer apps read reliably; segno may boost it when it costs no size.
    qr = segno.make(br_code, error="m", micro=False)
    # A viewBox instead of a fixed size, so the drawing scales to the frame the page gives it (with a fixed size
    # it sat in the frame's top-left corner); the title is the image's name for screen readers.
    return qr.svg_inline(scale=4, border=4, dark="#000", light="#fff", omitsize=True, title="QR Code do Pix")


def qr_png_data_uri(br_code: str) -> str:
    """PNG data URI (≈1 KB at scale 4), the `qr_code.data_uri` of PIX.md §2.3."""
    return segno.make(br_code, error="m", micro=False).png_data_uri(scale=4, border=4)
