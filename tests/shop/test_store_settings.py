"""Store settings: one row edited in the admin, cached, shown in the footer, the policy pages, the
e-mails, the BCP profile and the Pix BR Code; defaults are what the shop showed before."""

from __future__ import annotations

import email.policy
import io
import re
from decimal import Decimal
from email import message_from_bytes

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.test import Client
from PIL import Image

from orders.services import order_place_from_checkout
from payments.brcode import parse
from payments.services import pix_charge_ensure
from shop.models import StoreSettings
from shop.store.services import store_get, store_row
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db

FORM = {
    "trade_name": "Caju Café",
    "legal_name": "Caju Comércio de Cafés Ltda",
    "cnpj": "12.abc.345/01de-35",
    "postal_code": "01310100",
    "street": "Av. Paulista",
    "number": "1000",
    "complement": "loja 3",
    "neighborhood": "Bela Vista",
    "city": "São Paulo",
    "state": "sp",
    "contact_email": "oi@caju.com.br",
    "phone": "(11) 3333-4444",
    "whatsapp": "(11) 98765-4321",
    "business_hours": "seg. a sex., 9h às 18h",
    "terms_text": "",
    "privacy_text": "",
    "privacy_controller": "",
    "dpo_name": "Maria Encarregada",
    "dpo_email": "dpo@caju.com.br",
    "returns_text": "Troca em 30 dias.\n\nDevolução grátis.",
    "returns_window_days": "30",
    "shipping_text": "",
    "card_max_installments": "12",
    "card_interest_free_installments": "10",
    "card_monthly_interest_bp": "1,99",  # a percent, stored as basis points
    "card_min_installment": "5,00",  # reais, stored as centavos
    "boleto_due_business_days": "3",
}


def _save(admin_client: Client, **changes: str) -> object:
    url = admin_client.get("/admin/shop/storesettings/")["Location"]
    return admin_client.post(url, {**FORM, **changes})


def test_defaults_are_what_the_shop_showed_before(client: Client) -> None:
    html = client.get("/privacidade").content.decode()
    assert "A Loja Exemplo trata seus dados pessoais" in html
    assert "Controlador dos dados: Loja Exemplo Ltda." in html
    assert "Atendimento: pedidos@loja.example.com.br." in html
    assert "Loja Exemplo Ltda" in client.get("/").content.decode()
    assert "7 dias do recebimento" in client.get("/trocas-e-devolucoes").content.decode()
    assert StoreSettings.objects.count() == 0  # reading never writes


def test_admin_edits_the_one_row_and_every_surface_follows(admin_client: Client, client: Client) -> None:
    assert store_get().trade_name == "Loja Exemplo"  # warm the cache with the defaults
    response = _save(admin_client)
    assert response.status_code == 302
    row = StoreSettings.objects.get()
    assert (row.pk, row.cnpj, row.postal_code, row.state) == (1, "12.ABC.345/01DE-35", "01310-100", "SP")
    assert (row.card_monthly_interest_bp, row.card_min_installment) == (199, 500)
    # the cached copy was dropped on save: the footer shows the new identity at once
    home = client.get("/").content.decode()
    assert "Caju Comércio de Cafés Ltda · CNPJ 12.ABC.345/01DE-35" in home
    # the home page greets with the new name and no article that only fits "Loja" ("Bem-vindo à Caju…")
    assert f"<h1>{row.trade_name}</h1>" in home and "Bem-vindo à" not in home
    assert "Av. Paulista, 1000 — loja 3, Bela Vista, São Paulo / SP, CEP 01310-100" in home
    assert '<a href="https://wa.me/5511987654321" rel="noopener">WhatsApp (11) 98765-4321</a>' in home
    privacy = client.get("/privacidade").content.decode()
    assert "Controlador dos dados: Caju Comércio de Cafés Ltda (CNPJ 12.ABC.345/01DE-35)." in privacy
    assert "Encarregado (DPO): Maria Encarregada" in privacy and "dpo@caju.com.br" in privacy
    returns = client.get("/trocas-e-devolucoes").content.decode()
    assert "<p>Troca em 30 dias.</p>\n\n<p>Devolução grátis.</p>" in returns
    # BCP profile: the card handler's merchant, the Pix handler's merchant name (legal name, ≤ 25)
    profile = client.get("/.well-known/bcp").json()
    handlers = profile["ucp"]["payment_handlers"] if "ucp" in profile else profile["payment_handlers"]
    pix = next(iter(handlers.values()))[0]["config"]
    # Pix BR Code: merchant name from the legal name, without accents, upper case, 25 characters
    charge = pix_charge_ensure(reference="checkout_store", amount=1000)
    fields = parse(charge.br_code).fields
    assert fields["59"] == "CAJU COMERCIO DE CAFES LTD"[:25]
    assert fields["60"] == "SAO PAULO"
    # and the handler advertises them as the payer's app will show them (PIX.md §1.1: ASCII)
    assert (pix["merchant_name"], pix["merchant_city"]) == (fields["59"], fields["60"])


def test_buyer_emails_carry_the_store_footer(admin_client: Client, django_capture_on_commit_callbacks) -> None:
    _save(admin_client)
    with django_capture_on_commit_callbacks(execute=True):
        order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    message = mail.outbox[-1]
    assert message.subject.startswith("Caju Café: ")
    html = message.alternatives[0][0]
    assert "Caju Comércio de Cafés Ltda · CNPJ 12.ABC.345/01DE-35 · oi@caju.com.br · WhatsApp (11) 98765-4321" in html


@pytest.mark.parametrize("trade_name", ["Caju Café", "Caju, Café & Cia."])
def test_buyer_emails_come_from_the_store_name_at_the_configured_address(
    admin_client: Client, django_capture_on_commit_callbacks, trade_name: str
) -> None:
    # DEFAULT_FROM_EMAIL is "Loja Exemplo <pedidos@…>": a renamed shop kept sending as "Loja Exemplo".
    _save(admin_client, trade_name=trade_name)
    with django_capture_on_commit_callbacks(execute=True):
        order_place_from_checkout(checkout=make_checkout(lines=[("CAM", 3000, 1)]))
    wire = message_from_bytes(mail.outbox[-1].message().as_bytes(), policy=email.policy.default)
    sender = wire["From"]
    assert sender.addresses[0].display_name == trade_name
    assert sender.addresses[0].addr_spec == "pedidos@loja.example.com.br"
    assert "Loja Exemplo" not in str(sender)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cnpj", "12.ABC.345/01DE-36", "CNPJ inválido: confira os 14 caracteres e os dígitos verificadores"),
        ("cnpj", "123", "CNPJ inválido"),
        ("postal_code", "0131", "CEP inválido: informe os 8 números, ex.: 01310-100."),
        ("state", "S1", "UF inválida: use a sigla de 2 letras, ex.: SP."),
        ("state", "XX", "UF inválida: use a sigla de 2 letras, ex.: SP."),  # two letters, but no such UF
        ("pix_discount_percent", "150", "Desconto no Pix de no máximo 50%."),  # not Django's "dígitos" sentence
        ("pix_discount_percent", "60", "Desconto no Pix de no máximo 50%."),
        ("card_monthly_interest_bp", "15", "No máximo 10 % ao mês."),  # was "10 {'limit_value': 1000…}o mês."
        ("card_monthly_interest_bp", "1,999", "Informe o percentual com até duas casas, ex.: 1,99."),
        ("card_min_installment", "5,001", "Use no máximo duas casas decimais, por exemplo 35,90."),
        ("whatsapp", "98765", "Telefone inválido: informe DDD e número, ex.: (11) 98765-4321."),
        ("contact_email", "oi@", "Insira um endereço de email válido."),
        ("trade_name", "", "Este campo é obrigatório."),
    ],
)
def test_bad_input_is_refused_on_the_field_and_nothing_saved(
    admin_client: Client, field: str, value: str, message: str
) -> None:
    response = _save(admin_client, **{field: value})
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html and "%%" not in html and html.count(message) == 1
    assert html.index(message) > html.index(f'id="id_{field}"') - 2000  # next to its field
    assert StoreSettings.objects.get().trade_name == "Loja Exemplo"  # the row exists, unchanged


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("pix_discount_percent", Decimal("60"), "Desconto no Pix de no máximo 50%."),  # was ValueError
        ("card_monthly_interest_bp", 1500, "No máximo 10 % ao mês."),  # was "10 {'limit_value': 1000…}o mês."
    ],
)
def test_full_clean_outside_the_admin_gives_the_portuguese_message(field: str, value: object, message: str) -> None:
    # Any caller of the model (a script, an import, a service) validates with the model's own messages.
    row = store_row()
    setattr(row, field, value)
    with pytest.raises(ValidationError) as raised:
        row.full_clean()
    assert raised.value.message_dict[field] == [message]


def test_the_header_logo_is_a_small_copy_of_the_upload(
    admin_client: Client, client: Client, settings, tmp_path
) -> None:
    settings.MEDIA_ROOT = tmp_path
    upload = io.BytesIO()
    Image.new("RGBA", (800, 400), (200, 30, 30, 255)).save(upload, format="PNG")
    upload.name = "logo.png"
    upload.seek(0)
    response = _save(admin_client, logo=upload)
    assert response.status_code == 302, re.findall(r'class="errorlist[^>]*>(.*?)</ul>', response.content.decode())

    home = client.get("/").content.decode()

    src = re.search(r'<img src="([^"]+)" alt="" width="32" height="32">', home).group(1)
    original = StoreSettings.objects.get().logo
    assert src != original.url and src.startswith(settings.MEDIA_URL)
    with Image.open(tmp_path / src.removeprefix(settings.MEDIA_URL)) as header_logo:
        assert header_logo.size == (64, 32)  # 2× the 32 px slot, proportions kept, not the 800 px upload


def test_warm_cache_costs_no_query(django_assert_num_queries) -> None:
    store_get()
    with django_assert_num_queries(0):
        assert store_get().legal_name == "Loja Exemplo Ltda"


def test_the_page_says_where_pix_goes_and_what_the_nfe_still_needs(admin_client: Client, settings) -> None:
    """QA walk (a new merchant from an empty shop): no "chave Pix" anywhere in "Dados da loja" (it is set by whoever
    installed the store), and the first order's NF-e was blocked for a missing inscrição estadual that this page
    never asked for."""
    settings.PIX_KEY, settings.PIX_MERCHANT_NAME, settings.PIX_MERCHANT_CITY = "ana@atelie.com.br", "ANA ME", "BH"
    store_row()
    StoreSettings.objects.update(cnpj="", state_registration="", tax_regime="")
    fields = parse(pix_charge_ensure(reference="checkout_pix_text", amount=1000).br_code).fields  # the sandbox's
    settings.BCP_PIX_SANDBOX = False
    url = admin_client.get("/admin/shop/storesettings/")["Location"]
    html = admin_client.get(url).content.decode()
    assert "os pagamentos vão para a chave ana@atelie.com.br" in html
    # the name and city it names are the BR Code's (the razão social and city of this page), not the fallback
    # PIX_MERCHANT_* settings the page used to print while the BR Code said something else
    assert (fields["59"], fields["60"]) == ("LOJA EXEMPLO LTDA", "SAO PAULO")
    assert "“LOJA EXEMPLO LTDA — SAO PAULO” (a razão social e a cidade desta página" in html
    assert "ANA ME" not in html
    assert "chave de demonstração" not in html
    missing = "Para emitir NF-e faltam: CNPJ (em Identificação), inscrição estadual (ou ISENTO), regime tributário."
    assert missing in html
    # the fiscal data typed in, nothing is missing any more; the demo key is called out
    settings.PIX_KEY = "7d9f0335-8dcc-4054-9bf9-0dbd61d36906"
    assert _save(admin_client, state_registration="ISENTO", tax_regime="mei").status_code == 302
    html = admin_client.get(url).content.decode()
    assert "Para emitir NF-e faltam" not in html and "Cada produto precisa também do NCM" in html
    assert "esta é a chave de demonstração, não a sua" in html


def test_the_ie_is_checked_by_the_stores_uf(admin_client: Client) -> None:
    """Closing note: "123" was saved as the inscrição estadual and the NF-e refused at the first sale. The IE is
    checked by the store's UF (length and check digits, SEFAZ rules), ISENTO is taken, and a refused save says which
    field and why, and changes nothing."""
    assert _save(admin_client, state_registration="110.042.490.114").status_code == 302
    for typed, state in (("123", "SP"), ("110.042.490.115", "SP"), ("062.307.904/0081", "SP")):
        response = _save(admin_client, state_registration=typed, state=state)
        assert response.status_code == 200
        assert response.context["adminform"].form.errors["state_registration"] == [
            "Inscrição estadual inválida para SP: a de SP tem 12 dígitos; confira os números e os dígitos "
            "verificadores no cadastro da SEFAZ (ou informe ISENTO)."
        ]
    assert StoreSettings.objects.get().state_registration == "110.042.490.114"
    # a row saved before this check: the page says so before the first NF-e is refused
    StoreSettings.objects.update(state_registration="123")
    html = admin_client.get(admin_client.get("/admin/shop/storesettings/")["Location"]).content.decode()
    assert "Para emitir NF-e faltam: inscrição estadual válida para SP." in html
    # the Minas Gerais number with the store in MG; ISENTO anywhere
    assert _save(admin_client, state_registration="062.307.904/0081", state="mg").status_code == 302
    assert _save(admin_client, state_registration="isento", state="RJ").status_code == 302


def test_store_settings_cannot_be_added_or_deleted(admin_client: Client) -> None:
    _save(admin_client)
    assert admin_client.get("/admin/shop/storesettings/add/").status_code == 403
    assert admin_client.post("/admin/shop/storesettings/1/delete/", {"post": "yes"}).status_code == 403
    assert StoreSettings.objects.count() == 1


def test_installment_money_and_interest_are_typed_as_the_merchant_reads_them(admin_client: Client) -> None:
    """QA walk: "Parcela mínima (centavos)" and "Juros ao mês (centésimos de %)" asked for 500 and 199; the page asks
    for reais and a percent, shows the stored values that way, and its help texts name no server setting."""
    url = admin_client.get("/admin/shop/storesettings/")["Location"]
    html = admin_client.get(url).content.decode()
    assert "Parcela mínima (R$)" in html and "Juros ao mês (%)" in html
    assert "(centavos)" not in html and "centésimos" not in html
    assert 'name="card_min_installment" value="5,00"' in html and 'name="card_monthly_interest_bp" value="1,99"' in html
    for setting in (
        "BOLETO_EXPIRY_GRACE_DAYS",
        "PAYMENTS_CARD_GATEWAY",
        "FISCAL_IBSCBS_NORMAL_FROM",
        "BOLETO_MIN_AMOUNT",
    ):
        assert setting not in html
    assert "vencimento mais 3 dias (definido pelo técnico que instalou a loja)" in html
    assert "desde 05/01/2026" in html and "Valor mínimo do pedido para boleto: R$ 5,00" in html
    assert _save(admin_client, card_monthly_interest_bp="2,5 %", card_min_installment="R$ 7,50").status_code == 302
    row = StoreSettings.objects.get()
    assert (row.card_monthly_interest_bp, row.card_min_installment) == (250, 750)


def test_the_prazo_de_postagem_has_its_own_heading(admin_client: Client) -> None:
    """QA walk of a new shop: the README says "under Frete, the prazo de postagem", and the page had it inside
    "Frete: medidas padrão de um item", whose text speaks only of weights and sizes."""
    store_row()
    html = admin_client.get(admin_client.get("/admin/shop/storesettings/")["Location"]).content.decode()
    fieldset = next(part for part in html.split("<fieldset")[1:] if 'name="handling_days"' in part)
    assert "Frete: prazo de postagem" in fieldset
    assert 'name="default_weight_grams"' not in fieldset and "medidas padrão" not in fieldset


def test_the_boleto_section_says_who_issues_it_and_when_it_is_not_offered(admin_client: Client, settings) -> None:
    """Merchant walk h48: the boleto section read "emitido pelo gateway do cartão (nenhum (modo de testes))" in the
    sandbox, and "(nenhum)" with no gateway at all, while the field beside it still asked for a due date that
    changed nothing: without a gateway the storefront and the agents never offer boleto (boleto_offered)."""
    store_row()
    url = admin_client.get("/admin/shop/storesettings/")["Location"]
    settings.PAYMENTS_CARD_GATEWAY, settings.BCP_PIX_SANDBOX = "", True
    sandbox = admin_client.get(url).content.decode()
    assert "O boleto é emitido pelo gateway de testes (sandbox): nenhum boleto é pago de verdade." in sandbox
    assert "nenhum (modo de testes)" not in sandbox
    settings.BCP_PIX_SANDBOX = False
    bare = admin_client.get(url).content.decode()
    assert (
        "Nenhum gateway de cartão está ligado: o boleto não é oferecido aos compradores, qualquer que seja o "
        "vencimento abaixo. Quem instalou a loja pode ligá-lo."
    ) in bare
    assert "gateway do cartão (nenhum)" not in bare
    settings.PAYMENTS_CARD_GATEWAY = "payments.card.pagarme.PagarmeGateway"
    assert "O boleto é emitido pelo gateway do cartão (Pagar.me)." in admin_client.get(url).content.decode()
