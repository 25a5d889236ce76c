"""BR Code vectors of PIX.md §6.4 (every one, exact strings), generation, validation failures, QR."""

from __future__ import annotations

import pytest

from payments.brcode import (
    BRCodeError,
    build_dynamic,
    build_static,
    crc16,
    merchant_text,
    parse,
    validate_psp_br_code,
)
from payments.qr import qr_png_data_uri, qr_svg

V1 = (
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR"
    "5913Fulano de Tal6008BRASILIA62070503***63041D3D"
)
V2 = (
    "00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd441"
    "5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4"
)
V3 = (
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406100.50"
    "5802BR5913Fulano de Tal6008BRASILIA62070503***80740014br.gov.bcb.pix2552pix.example.com/rec/"
    "2353c790eefb11eaadc10242ac12000263042875"
)
V4 = (
    "00020126180014br.gov.bcb.pix5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***"
    "80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002630462C9"
)
V5 = (
    "00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd441"
    "5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558"
    "pix.example.com/qr/v2/rec/94ed2badcbc04c15b0bb7fa35319489063047741"
)
V6 = (
    "00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e7"
    "5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558"
    "pix.example.com/qr/v2/rec/3ffa640fa4f14080adccb949fa2dc0d06304A441"
)
V7 = (
    "00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25"
    "5204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63044846"
)
V8 = (
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-42665544000052040000530398654075999.00"
    "5802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62130509CHKABC12363042969"
)
V9 = (
    "00020126440014br.gov.bcb.pix0122pagamentos@example.com5204000053039865802BR5913Fulano de Tal"
    "6008BRASILIA62070503***63044883"
)
VECTORS = {"V1": V1, "V2": V2, "V3": V3, "V4": V4, "V5": V5, "V6": V6, "V7": V7, "V8": V8, "V9": V9}
CRCS = {
    "V1": "1D3D",
    "V2": "64E4",
    "V3": "2875",
    "V4": "62C9",
    "V5": "7741",
    "V6": "A441",
    "V7": "4846",
    "V8": "2969",
    "V9": "4883",
}
KEY = "123e4567-e12b-12d1-a456-426655440000"


def test_crc16_standard_check_value() -> None:
    assert crc16("123456789") == "29B1"


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_every_vector_parses_and_its_crc_verifies(name: str) -> None:
    code = VECTORS[name]

    parsed = parse(code)

    assert code[-4:] == CRCS[name]
    assert crc16(code[:-4]) == CRCS[name]
    assert parsed.raw == code


def test_vector_fields_are_read_exactly() -> None:
    assert parse(V1).key == KEY
    assert parse(V1).txid == "***"
    assert parse(V2).location == "pix.example.com/8b3da2f39a4140d1a91abd93113bd441"
    assert parse(V2).is_dynamic is True
    assert parse(V3).amount_cents == 10050
    recurrence = {"00": "br.gov.bcb.pix", "25": "pix.example.com/rec/2353c790eefb11eaadc10242ac120002"}
    assert parse(V3).recurrence == recurrence
    assert parse(V6).location == "pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e7"
    assert (parse(V7).merchant_name, parse(V7).merchant_city) == ("LOJA EXEMPLO LTDA", "SAO PAULO")
    assert (parse(V8).amount_cents, parse(V8).txid) == (599900, "CHKABC123")
    assert parse(V9).key == "pagamentos@example.com"


def test_generation_reproduces_v1_v2_v7_v8_v9_byte_for_byte() -> None:
    assert build_static(key=KEY, merchant_name="Fulano de Tal", merchant_city="BRASILIA") == V1
    assert (
        build_dynamic(
            location="pix.example.com/8b3da2f39a4140d1a91abd93113bd441",
            merchant_name="Fulano de Tal",
            merchant_city="BRASILIA",
        )
        == V2
    )
    assert (
        build_dynamic(
            location="pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25",
            merchant_name="LOJA EXEMPLO LTDA",
            merchant_city="SAO PAULO",
        )
        == V7
    )
    assert (
        build_static(
            key=KEY, merchant_name="LOJA EXEMPLO LTDA", merchant_city="SAO PAULO", amount_cents=599900, txid="CHKABC123"
        )
        == V8
    )
    assert build_static(key="pagamentos@example.com", merchant_name="Fulano de Tal", merchant_city="BRASILIA") == V9


@pytest.mark.parametrize("name", ["V2", "V5", "V6", "V7"])
def test_dynamic_vectors_pass_psp_validation(name: str) -> None:
    assert validate_psp_br_code(VECTORS[name], amount_cents=599900).is_dynamic is True


def test_lowercase_crc_still_validates() -> None:
    assert parse(V2[:-4] + "64e4").location == "pix.example.com/8b3da2f39a4140d1a91abd93113bd441"


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (V1.replace("BRASILIA", "brasilia"), "CRC mismatch"),
        # `26` length off by one: the template swallows a character of the next field.
        (V1.replace("2658", "2659", 1)[:-4] + crc16(V1.replace("2658", "2659", 1)[:-4]), "TLV header malformed at 113"),
        ("", "empty BR Code"),
        ("0002010102" + "é", "BR Code must be ASCII"),
        ("0102" + V1[4:], "BR Code must start with 000201"),
        ("00020101021" + "2" * 600, "BR Code longer than 512 characters"),
        (V1[:-8], "BR Code must end with the CRC field 6304XXXX"),
    ],
)
def test_invalid_codes_are_rejected_with_the_rule_named(code: str, reason: str) -> None:
    with pytest.raises(BRCodeError) as excinfo:
        parse(code)

    assert excinfo.value.reason == reason


def _recrc(body_without_crc: str) -> str:
    return body_without_crc + crc16(body_without_crc)


def test_static_txid_of_26_chars_is_rejected() -> None:
    tampered = _recrc(V8[:-4].replace("62130509CHKABC123", "62300526" + "A" * 26))

    with pytest.raises(BRCodeError) as excinfo:
        parse(tampered)

    assert excinfo.value.reason == "field 62.05: static txid must be 1..25 characters [A-Za-z0-9] or ***"


def test_building_a_static_txid_of_26_chars_is_refused() -> None:
    with pytest.raises(BRCodeError):
        build_static(key=KEY, merchant_name="LOJA", merchant_city="SAO PAULO", txid="A" * 26)


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (
            _recrc(V2[:-4].replace("0014br.gov.bcb.pix", "0014br.gov.bcb.pux")),
            "field 26.00 must be the Pix GUI br.gov.bcb.pix",
        ),
        (_recrc(V2[:-4].replace("52040000", "52045812")), "field 52 must be 0000"),
        (_recrc(V2[:-4].replace("5303986", "5303840")), "field 53 must be 986"),
        (_recrc(V2[:-4].replace("5802BR", "5802US")), "field 58 must be BR"),
        (_recrc(V2[:-4].replace("62070503***", "")), "field 62.05 (txid) is required"),
    ],
)
def test_field_rules_of_psp_validation(code: str, reason: str) -> None:
    with pytest.raises(BRCodeError) as excinfo:
        validate_psp_br_code(code, amount_cents=100)

    assert excinfo.value.reason == reason


def test_psp_validation_requires_a_dynamic_code_and_the_charge_amount() -> None:
    with pytest.raises(BRCodeError) as static_error:
        validate_psp_br_code(V1, amount_cents=100)
    with_amount = _recrc(V2[:-4].replace("5802BR", "5406100.505802BR"))
    with pytest.raises(BRCodeError) as amount_error:
        validate_psp_br_code(with_amount, amount_cents=10000)

    assert static_error.value.reason == "a cob charge must return a dynamic BR Code (010212 and 26.25 location)"
    assert amount_error.value.reason == "field 54: amount 100.50 differs from the charge amount"
    assert validate_psp_br_code(with_amount, amount_cents=10050).amount_cents == 10050


def test_merchant_text_strips_accents_and_cuts() -> None:
    assert merchant_text("Açaí & Pão São João da Boa Vista Ltda", 25) == "ACAI & PAO SAO JOAO DA BO"
    assert merchant_text("São Paulo", 15) == "SAO PAULO"


def test_qr_svg_and_png_render_the_code() -> None:
    svg = qr_svg(V7)
    png = qr_png_data_uri(V7)

    assert svg.startswith("<svg") and svg.endswith("</svg>")
    # scalable (a viewBox, no fixed size: the drawing fills the frame CSS gives it) and named for screen readers
    opening = svg.split(">", 1)[0]
    assert "viewBox=" in opening and "width=" not in opening
    assert "<title>QR Code do Pix</title>" in svg
    assert png.startswith("data:image/png;base64,")
