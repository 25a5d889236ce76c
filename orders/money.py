"""Formatting of centavos for the admin, CSV and e-mails (templates of `shop` are not ours to import)."""

from __future__ import annotations


def format_brl(cents: int | None) -> str:
    """12345678 → "R$ 123.456,78"; -500 → "-R$ 5,00"."""
    if cents is None:
        return ""
    sign = "-" if cents < 0 else ""
    reais, centavos = divmod(abs(int(cents)), 100)
    return f"{sign}R$ {reais:,}".replace(",", ".") + f",{centavos:02d}"


def parse_brl(text: str) -> int:
    """ "1.234,56" / "1234.56" / "R$ 10" → centavos. Raises ValueError on anything else."""
    raw = text.strip().replace("R$", "").replace(" ", "")
    if not raw or raw.startswith("-"):
        raise ValueError("enter a positive amount, e.g. 12,34")
    if "," in raw:
        raw = raw.replace(".", "").replace(",", ".")
    whole, _, frac = raw.partition(".")
    if not whole.isdigit() and not (whole == "" and frac):
        raise ValueError("enter an amount such as 12,34")
    if frac and (not frac.isdigit() or len(frac) > 2):
        raise ValueError("use at most two decimal places")
    return int(whole or "0") * 100 + int((frac + "00")[:2] or "0")
