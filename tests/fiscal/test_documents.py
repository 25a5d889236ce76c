"""The sandbox's NF-e files (issue 33, minor): the DANFE prints the emission time in Brasília's time, not UTC, and
typographic characters ("—", curly quotes) as themselves, not "?"; the XML's dhEmi carries Brasília's offset."""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime

from fiscal.providers.documents import danfe_pdf, nfe_xml
from tests.fiscal.helpers import invoice

KEY = "35261211222333000181550010000000011000000019"
AT = datetime(2026, 12, 4, 19, 5, tzinfo=UTC)  # 16:05 in São Paulo


def _text(pdf: bytes) -> bytes:
    """The page's content streams, inflated (fpdf2 compresses them)."""
    streams = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S)
    return b"".join(zlib.decompress(s) for s in streams if s[:1] == b"x")


def _args(description: str) -> dict:
    items = [{**invoice()["items"][0], "description": description}]
    return {"invoice": invoice(items=items), "access_key": KEY, "number": 1, "series": 1, "protocol": "2261", "at": AT}


def test_the_danfe_prints_brasilia_time_and_the_dash() -> None:
    text = _text(danfe_pdf(**_args("Camiseta Básica — Preta “M”")))
    assert b"Emiss\xe3o 04/12/2026 16:05 \\(hor\xe1rio de Bras\xedlia\\)" in text  # "(" escaped in a PDF string
    assert b"19:05" not in text
    assert "Camiseta Básica — Preta “M”".encode("cp1252") in text  # WinAnsi bytes: — is 0x97, “ ” 0x93 0x94
    assert b"DANFE \x97 Documento Auxiliar" in text


def test_a_character_outside_winansi_is_replaced_not_fatal() -> None:
    text = _text(danfe_pdf(**_args("Caneca ☕")))
    assert b"Caneca ?" in text


def test_the_xml_emission_time_has_brasilias_offset() -> None:
    xml = nfe_xml(**_args("Camiseta")).decode()
    assert "<dhEmi>2026-12-04T16:05:00-03:00</dhEmi>" in xml
    assert "<dhRecbto>2026-12-04T16:05:00-03:00</dhRecbto>" in xml
