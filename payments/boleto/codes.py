"""The boleto's numbers: linha digitável ⇄ código de barras (FEBRABAN layout of a bank boleto), their check
digits, the due-date factor, and the barcode drawn as Interleaved 2 of 5 in SVG.

Código de barras (44 digits): bank (3) · currency 9 (1) · general check digit (1, mod 11) · due-date factor
(4) · amount in centavos (10) · free field (25, the bank's). Linha digitável (47 digits): the free field and
the bank in three fields with a mod-10 check digit each, then the general check digit, then factor + amount.
The due-date factor counts days from 1997-10-07 and restarted at 1000 on 2025-02-22 (FEBRABAN, when it
reached 9999): dates from then on are `1000 + days since 2025-02-22`.

The page draws the barcode from the line the gateway gave (so it is the same boleto), never from a picture
fetched from elsewhere: no third-party request and nothing the page's CSP must allow.
"""

from __future__ import annotations

from datetime import date

FACTOR_RESTART = date(2025, 2, 22)
_ITF = ("nnwwn", "wnnnw", "nwnnw", "wwnnn", "nnwnw", "wnwnn", "nwwnn", "nnnww", "wnnwn", "nwnwn")


def digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _mod10(number: str) -> int:
    total = 0
    for index, ch in enumerate(reversed(number)):
        product = int(ch) * (2 if index % 2 == 0 else 1)
        total += product // 10 + product % 10
    return (10 - total % 10) % 10


def _mod11(number: str) -> int:
    total = sum(int(ch) * (2 + index % 8) for index, ch in enumerate(reversed(number)))
    rest = 11 - total % 11
    return 1 if rest in (0, 1, 10, 11) else rest


def due_factor(day: date) -> int:
    return 1000 + (day - FACTOR_RESTART).days % 9000


def barcode_build(*, bank: str, amount: int, due: date, free_field: str) -> str:
    """The 44 digits of a bank boleto (its general check digit computed)."""
    body = f"{bank:0>3}9{due_factor(due):04d}{amount:010d}{free_field:0>25}"[:43]
    return body[:4] + str(_mod11(body)) + body[4:]


def line_from_barcode(barcode: str) -> str:
    """47-digit linha digitável of a 44-digit barcode."""
    code = digits(barcode)
    if len(code) != 44:
        raise ValueError("um código de barras de boleto tem 44 dígitos")
    field1 = code[0:4] + code[19:24]
    field2 = code[24:34]
    field3 = code[34:44]
    return (
        field1 + str(_mod10(field1)) + field2 + str(_mod10(field2)) + field3 + str(_mod10(field3))
        + code[4] + code[5:19]
    )  # fmt: skip


def barcode_from_line(line: str) -> str:
    """44-digit barcode of a 47-digit linha digitável; ValueError when its check digits do not match."""
    number = digits(line)
    if len(number) != 47:
        raise ValueError("a linha digitável de um boleto bancário tem 47 dígitos")
    for start, end in ((0, 9), (10, 20), (21, 31)):
        if _mod10(number[start:end]) != int(number[end]):
            raise ValueError("dígito verificador da linha digitável não confere")
    code = number[0:4] + number[32] + number[33:47] + number[4:9] + number[10:20] + number[21:31]
    if _mod11(code[:4] + code[5:]) != int(code[4]):
        raise ValueError("dígito verificador geral do boleto não confere")
    return code


def line_display(line: str) -> str:
    """ "23790.12345 60000.000000 00000.000000 1 10000000012345": the five fields as banks print them."""
    n = digits(line)
    if len(n) != 47:
        return line
    return f"{n[0:5]}.{n[5:10]} {n[10:15]}.{n[15:21]} {n[21:26]}.{n[26:32]} {n[32]} {n[33:47]}"


def itf_svg(barcode: str, *, height: int = 50, narrow: int = 1, wide: int = 3) -> str:
    """Interleaved 2 of 5 of an even number of digits as an SVG (bars only; width in user units, scales)."""
    code = digits(barcode)
    if not code or len(code) % 2:
        raise ValueError("ITF needs an even number of digits")
    widths: list[int] = [narrow] * 4  # start: bar, space, bar, space
    for first, second in zip(code[0::2], code[1::2], strict=True):
        for bar, space in zip(_ITF[int(first)], _ITF[int(second)], strict=True):
            widths += [wide if bar == "w" else narrow, wide if space == "w" else narrow]
    widths += [wide, narrow, narrow]  # stop: wide bar, space, bar
    quiet = 10 * narrow
    x, rects = quiet, []
    for index, width in enumerate(widths):
        if index % 2 == 0:
            rects.append(f'<rect x="{x}" y="0" width="{width}" height="{height}"/>')
        x += width
    total = x + quiet
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total} {height}" preserveAspectRatio="none" '
        f'role="img" aria-label="Código de barras do boleto"><rect width="{total}" height="{height}" fill="#fff"/>'
        f'<g fill="#000">{"".join(rects)}</g></svg>'
    )
