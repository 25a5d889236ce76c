"""Sandbox PSP control API (PIX.md §4.3): secret guard, flags, expire, page, management command."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from payments.models import PixCharge, SandboxCob, SandboxPix
from payments.services import pix_charge_ensure

pytestmark = pytest.mark.django_db
CONTROL = {"BCP-Sandbox-Secret": "sandbox-secret"}


def test_control_api_refuses_a_missing_or_wrong_secret(client: Client) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)

    missing = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", content_type="application/json")
    wrong = client.post(
        f"/_sandbox/psp/cob/{charge.txid}/pay", content_type="application/json", headers={"BCP-Sandbox-Secret": "x"}
    )

    assert (missing.status_code, wrong.status_code) == (403, 403)
    assert SandboxPix.objects.count() == 0


def test_pay_returns_the_bacen_pix_item(client: Client) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=599900)

    response = client.post(
        f"/_sandbox/psp/cob/{charge.txid}/pay?deliver=none",
        data={"payer_message": "obrigado"},
        content_type="application/json",
        headers=CONTROL,
    )

    pix = response.json()["pix"][0]
    assert response.status_code == 200
    assert (pix["txid"], pix["valor"], pix["infoPagador"]) == (charge.txid, "5999.00", "obrigado")
    assert len(pix["endToEndId"]) == 32
    assert pix["endToEndId"].startswith("E99999999")
    assert SandboxCob.objects.get(txid=charge.txid).status == "CONCLUIDA"


@pytest.mark.parametrize(
    ("query", "json_body", "status", "detail"),
    [
        ("?deliver=thrice", {}, 400, "deliver must be one of ['none', 'once', 'twice']"),
        ("?delay_s=abc", {}, 400, "delay_s: expected an integer number of seconds"),
        ("", {"amount": "12,50"}, 400, "amount must be a decimal string like '5999.00', got '12,50'"),
        ("", {"at": "tomorrow"}, 400, "at: 'tomorrow' is not an RFC 3339 timestamp"),
    ],
)
def test_bad_flags_are_400_and_pay_nothing(
    client: Client, query: str, json_body: dict[str, Any], status: int, detail: str
) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)

    response = client.post(
        f"/_sandbox/psp/cob/{charge.txid}/pay{query}", data=json_body, content_type="application/json", headers=CONTROL
    )

    assert response.status_code == status
    assert response.json()["detail"] == detail
    assert SandboxPix.objects.count() == 0


def test_unknown_txid_is_404(client: Client) -> None:
    response = client.post("/_sandbox/psp/cob/" + "9" * 32 + "/pay", content_type="application/json", headers=CONTROL)

    assert response.status_code == 404
    assert response.json()["title"] == "CobNaoEncontrado"


def test_paying_twice_is_refused_by_the_psp(client: Client) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)
    client.post(f"/_sandbox/psp/cob/{charge.txid}/pay?deliver=none", content_type="application/json", headers=CONTROL)

    again = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", content_type="application/json", headers=CONTROL)

    assert again.status_code == 409
    assert again.json()["title"] == "CobOperacaoInvalida"


def test_expire_moves_the_clock_so_the_payer_app_refuses(client: Client) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)

    expired = client.post(f"/_sandbox/psp/cob/{charge.txid}/expire", content_type="application/json", headers=CONTROL)
    pay = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", content_type="application/json", headers=CONTROL)

    assert expired.status_code == 200
    assert expired.json()["status"] == "ATIVA"  # the API Pix never reports expiry
    assert (pay.status_code, pay.json()["title"]) == (409, "CobExpirada")


def test_a_person_pressing_pay_on_an_expired_pix_reads_a_portuguese_page(client: Client) -> None:
    # given a charge whose time ran out while its page stayed open (issue 33, major 4)
    charge = pix_charge_ensure(reference="checkout_s", amount=100)
    client.post(f"/_sandbox/psp/cob/{charge.txid}/expire", content_type="application/json", headers=CONTROL)

    # when a person presses the "Pagar (sandbox)" form button (a form post, no secret header)
    page = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", {"next": "/checkout/checkout_s/pix"})

    # then a page in Portuguese says why, with the way back, and no JSON nor the API's English
    html = page.content.decode()
    assert (page.status_code, page["Content-Type"]) == (409, "text/html; charset=utf-8")
    assert (
        "Este Pix expirou: o app do banco não aceita mais o pagamento. Volte à página do Pix e gere um novo Pix."
    ) in html
    assert 'href="/checkout/checkout_s/pix" data-testid="sandbox-back"' in html
    assert "CobExpirada" not in html and "expired" not in html
    assert SandboxPix.objects.count() == 0


@pytest.mark.parametrize(
    ("form", "status", "text"),
    [
        ({"next": "https://evil.example/"}, 409, "Esta cobrança não pode ser paga: ela já foi paga ou foi removida."),
        ({"delay_s": "abc"}, 400, "O ambiente de testes recusou a operação: confira os dados e tente de novo."),
    ],
)
def test_other_refusals_shown_to_a_person_are_portuguese_too(
    client: Client, form: dict[str, str], status: int, text: str
) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)
    client.post(f"/_sandbox/psp/cob/{charge.txid}/pay?deliver=none", content_type="application/json", headers=CONTROL)

    page = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", form)

    assert (page.status_code, text in page.content.decode()) == (status, True)
    assert 'data-testid="sandbox-back"' not in page.content.decode()  # an outside "next" is no way back


def test_redeliver_unknown_e2eid_is_404(client: Client) -> None:
    response = client.post(
        "/_sandbox/psp/webhooks/redeliver",
        data={"e2eid": "E" + "0" * 31},
        content_type="application/json",
        headers=CONTROL,
    )

    assert response.status_code == 404


def test_charge_page_shows_the_qr_and_pay_buttons(client: Client) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)

    response = client.get(f"/_sandbox/psp/cob/{charge.txid}")

    content = response.content.decode()
    assert response.status_code == 200
    assert "<svg" in content
    assert charge.br_code in content
    assert 'data-testid="sandbox-pay"' in content


def test_browser_form_with_csrf_pays_and_redirects_back(settled: Any, django_capture_on_commit_callbacks: Any) -> None:
    # given a browser that loaded the sandbox page (CSRF cookie + token)
    browser = Client(enforce_csrf_checks=True)
    charge = pix_charge_ensure(reference="checkout_s", amount=100)
    page = browser.get(f"/_sandbox/psp/cob/{charge.txid}")
    token = page.context["csrf_token"]
    # when the "pay" button is pressed
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(
            f"/_sandbox/psp/cob/{charge.txid}/pay",
            data={"csrfmiddlewaretoken": str(token), "next": f"/_sandbox/psp/cob/{charge.txid}"},
        )
    # then the charge is paid and settled, and the browser goes back to the page
    assert response.status_code == 302
    assert response["Location"] == f"/_sandbox/psp/cob/{charge.txid}"
    assert PixCharge.objects.get().status == "paid"
    assert len(settled.calls) == 1


def test_browser_form_without_csrf_is_refused() -> None:
    browser = Client(enforce_csrf_checks=True)
    charge = pix_charge_ensure(reference="checkout_s", amount=100)

    response = browser.post(f"/_sandbox/psp/cob/{charge.txid}/pay", data={"next": "/"})

    assert response.status_code == 403
    assert SandboxPix.objects.count() == 0


def test_control_api_is_404_when_the_sandbox_is_off(client: Client, settings: Any) -> None:
    charge = pix_charge_ensure(reference="checkout_s", amount=100)
    settings.BCP_PIX_SANDBOX = False

    response = client.post(f"/_sandbox/psp/cob/{charge.txid}/pay", content_type="application/json", headers=CONTROL)

    assert response.status_code == 404


def test_pix_sandbox_pay_command_pays_like_the_http_call(settled: Any, django_capture_on_commit_callbacks: Any) -> None:
    charge = pix_charge_ensure(reference="checkout_cmd", amount=2590)
    out = StringIO()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("pix_sandbox_pay", charge.txid, stdout=out)

    assert f'"txid": "{charge.txid}"' in out.getvalue()
    assert '"valor": "25.90"' in out.getvalue()
    assert PixCharge.objects.get().status == "paid"
    assert [call["amount"] for call in settled.calls] == [2590]


def test_pix_sandbox_pay_command_reports_psp_refusals() -> None:
    with pytest.raises(CommandError) as excinfo:
        call_command("pix_sandbox_pay", "0" * 32, stdout=StringIO())

    assert str(excinfo.value) == f"CobNaoEncontrado: cob {'0' * 32} not found"
