"""Store settings admin: one row, opened directly (no list, no add, no delete)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils import formats
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import phone_normalize, phone_valid, tax_id_normalize
from kernel.money import MoneyField, format_brl
from payments.merchant import pix_merchant_as_shown
from shop.admin.br_fields import clean_cep, clean_uf
from shop.admin.catalog_forms import PhotoField
from shop.invoicing.lifecycle import fiscal_retry_blocked_soon
from shop.invoicing.validators import state_registration_problem
from shop.models import PackagingBox, StoreSettings
from shop.store.services import cnpj_format, store_row

PIX_DISCOUNT_MAX = Decimal("50")  # the model's cap (StoreSettings.pix_discount_percent)
# Freight measures a saved form may leave empty: the model's default then (a form posted before they existed).
PACKAGE_DEFAULTS = ("default_weight_grams", "default_length_cm", "default_width_cm", "default_height_cm")
# The agent tiers (issue 35) a form posted before they existed leaves out: their defaults (today's behaviour).
AGENT_DEFAULTS = ("agents_browse", "agents_checkout", "agents_complete", "agents_orders_read", "agents_orders_act")


INTEREST_MAX_BP = 1000  # the model's cap: 10 % a month


class InterestPercentField(forms.Field):
    """A monthly interest typed as a percent ("1,99", "1.99", "1,99 %"); cleans to basis points (199)."""

    widget = forms.TextInput

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.widget.attrs.update({"inputmode": "decimal", "placeholder": "0,00", "size": 8, "maxlength": 12})

    def prepare_value(self, value: Any) -> Any:
        # Stored basis points come back as "1,99"; a re-shown bad input stays as typed.
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value // 100},{value % 100:02d}"
        return value

    def to_python(self, value: Any) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value or "").strip().removesuffix("%").strip().replace(",", ".")
        if not text:
            return None
        try:
            percent = Decimal(text)
        except InvalidOperation:
            raise forms.ValidationError(
                _("Informe o percentual com até duas casas, ex.: 1,99."), code="invalid"
            ) from None
        if not percent.is_finite() or percent != percent.quantize(Decimal("0.01")) or len(text) > 8:
            raise forms.ValidationError(_("Informe o percentual com até duas casas, ex.: 1,99."), code="invalid")
        if percent < 0:
            raise forms.ValidationError(_("O percentual não pode ser negativo."), code="min_value")
        bp = int(percent * 100)
        if bp > INTEREST_MAX_BP:
            raise forms.ValidationError(_("No máximo 10 %% ao mês.") % {}, code="max_value")  # the model's cap
        return bp


def _grace_days_text() -> str:
    days = settings.BOLETO_EXPIRY_GRACE_DAYS
    return ngettext("%(n)d dia", "%(n)d dias", days) % {"n": days}


def _boleto_issuer_text() -> str:
    """Who issues the boleto, as the person who installed the store set it; without a gateway (or with boleto
    switched off) it is never offered (shop.checkout.boleto.boleto_offered), whatever the due date says."""
    path = settings.PAYMENTS_CARD_GATEWAY
    if not getattr(settings, "BCP_BOLETO_ENABLED", True) or not (path or settings.BCP_PIX_SANDBOX):
        return gettext(
            "Nenhum gateway de cartão está ligado: o boleto não é oferecido aos compradores, qualquer que seja o "
            "vencimento abaixo. Quem instalou a loja pode ligá-lo."
        )
    if not path:
        return gettext("O boleto é emitido pelo gateway de testes (sandbox): nenhum boleto é pago de verdade.")
    gateway = "Pagar.me" if "pagarme" in path.lower() else path.rsplit(".", 1)[-1]
    return gettext("O boleto é emitido pelo gateway do cartão (%(gateway)s).") % {"gateway": gateway}


class StoreSettingsForm(forms.ModelForm):
    class Meta:
        model = StoreSettings
        exclude: tuple[str, ...] = ()
        field_classes = {"logo": PhotoField, "home_image": PhotoField}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Money typed in reais and interest as a percent (stored as centavos and basis points); help texts with the
        # values in force, never the names of the server's settings.
        if "card_min_installment" in self.fields:
            self.fields["card_min_installment"] = MoneyField(
                label=_("Parcela mínima (R$)"), required=False, help_text=_("Nenhuma parcela fica abaixo disto.")
            )
        if "card_monthly_interest_bp" in self.fields:
            self.fields["card_monthly_interest_bp"] = InterestPercentField(
                label=_("Juros ao mês (%)"), required=False,
                help_text=_("Percentual ao mês, ex.: 1,99 (juros compostos, tabela Price)."),
            )  # fmt: skip
        if "boleto_due_business_days" in self.fields:
            self.fields["boleto_due_business_days"].help_text = _(
                "Ex.: 3 = vence 3 dias úteis depois do pedido. 0 = não oferecer boleto. Sem pagamento até o "
                "vencimento mais %(grace)s (definido pelo técnico que instalou a loja), o boleto é cancelado e o "
                "estoque liberado."
            ) % {"grace": _grace_days_text()}
        if "ibs_cbs_cst" in self.fields:
            self.fields["ibs_cbs_cst"].help_text = _(
                "Vazio: 000 (tributação integral). O grupo IBS/CBS vai na NF-e do regime normal desde %(normal)s e "
                "na do Simples Nacional e do MEI a partir de %(simples)s (datas definidas pelo técnico que instalou "
                "a loja); alíquotas de teste de 2026: CBS 0,9 %%, IBS 0,1 %%."
            ) % {
                "normal": formats.date_format(settings.FISCAL_IBSCBS_NORMAL_FROM, "SHORT_DATE_FORMAT"),
                "simples": formats.date_format(settings.FISCAL_IBSCBS_SIMPLES_FROM, "SHORT_DATE_FORMAT"),
            }
        if "nfe_series" in self.fields:
            self.fields["nfe_series"].required = False  # empty = série 1
        if "handling_days" in self.fields:
            self.fields["handling_days"].required = False  # empty = 0: the estimate counts from the shipment
        for name in PACKAGE_DEFAULTS:
            if name in self.fields:
                self.fields[name].required = False  # empty = the shop's default measure
        for name in AGENT_DEFAULTS:
            if name in self.fields:
                self.fields[name].required = False  # absent = today's default for that permission
        if "pix_discount_percent" in self.fields:
            model_field = self.fields["pix_discount_percent"]
            # The limits on the form field: "150" got Django's sentence about digits before the decimal point
            # (max_digits) before the model's limit could speak. `%%`: Django formats these with the limit.
            self.fields["pix_discount_percent"] = forms.DecimalField(
                label=model_field.label,
                help_text=model_field.help_text,
                required=False,  # empty = no Pix discount
                min_value=Decimal("0"),
                max_value=PIX_DISCOUNT_MAX,
                decimal_places=2,
                error_messages={
                    "min_value": _("O desconto no Pix não pode ser negativo."),
                    "max_value": _("Desconto no Pix de no máximo 50%%."),
                },
            )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in PACKAGE_DEFAULTS:
            if name in self.fields and cleaned.get(name) in (None, 0):
                cleaned[name] = StoreSettings._meta.get_field(name).get_default()
        for name in AGENT_DEFAULTS:
            if name in self.fields and not cleaned.get(name):
                cleaned[name] = StoreSettings._meta.get_field(name).get_default()
        return cleaned

    def clean_card_min_installment(self) -> int:
        value = self.cleaned_data.get("card_min_installment")
        return int(StoreSettings._meta.get_field("card_min_installment").get_default()) if value is None else value

    def clean_card_monthly_interest_bp(self) -> int:
        value = self.cleaned_data.get("card_monthly_interest_bp")
        return 0 if value is None else value  # empty = no interest

    def clean_nfe_series(self) -> int:
        value = self.cleaned_data.get("nfe_series")
        return 1 if value is None else value

    def clean_handling_days(self) -> int:
        value = self.cleaned_data.get("handling_days")
        return 0 if value is None else value

    def clean_pix_discount_percent(self) -> Decimal:
        value = self.cleaned_data.get("pix_discount_percent")
        return Decimal("0") if value is None else value

    def clean_cnpj(self) -> str:
        value = self.cleaned_data.get("cnpj", "")
        return cnpj_format(tax_id_normalize(value)) if value else ""

    def clean_postal_code(self) -> str:
        return clean_cep(self.cleaned_data.get("postal_code", ""))

    def clean_state(self) -> str:
        return clean_uf(self.cleaned_data.get("state", ""))  # "XX" on the NF-e would be refused later

    def _phone(self, name: str) -> str:
        value = self.cleaned_data.get(name, "").strip()
        if value and not phone_valid(phone_normalize(value)):
            raise forms.ValidationError(_("Telefone inválido: informe DDD e número, ex.: (11) 98765-4321."))
        return value

    def clean_phone(self) -> str:
        return self._phone("phone")

    def clean_whatsapp(self) -> str:
        return self._phone("whatsapp")


DEMO_PIX_KEY = "7d9f0335-8dcc-4054-9bf9-0dbd61d36906"  # config/settings/commerce.py's default


def _pix_text() -> str:
    """Where the Pix money goes and what the payer's bank app shows: set by whoever installed the store, so the
    merchant, who looked for a "chave Pix" field here (QA walk), at least sees it and whom to ask. The name and city
    are the BR Code's: the razão social and city saved here, else PIX_MERCHANT_NAME / PIX_MERCHANT_CITY."""
    name, city = pix_merchant_as_shown()
    text = gettext(
        "Pix: os pagamentos vão para a chave %(key)s, e o app do banco de quem paga mostra “%(name)s — %(city)s” "
        "(a razão social e a cidade desta página, sem acentos, em maiúsculas e no limite de letras do Pix). A chave "
        "é definida pelo técnico que instalou a loja, com o banco ou intermediário do Pix; para mudá-la, fale com ele."
    ) % {"key": settings.PIX_KEY, "name": name, "city": city}
    if settings.BCP_PIX_SANDBOX:
        text += " " + gettext("Ambiente de testes: os Pix são simulados e nenhum dinheiro é recebido.")
    elif settings.PIX_KEY == DEMO_PIX_KEY:
        text += " " + gettext("Atenção: esta é a chave de demonstração, não a sua: nenhum Pix chega à sua conta.")
    return text


def _fiscal_missing_text(store: StoreSettings | None) -> str:
    """What the NF-e still needs from these settings, said before the first sale (QA walk: the first order's
    NF-e was blocked for a missing inscrição estadual that nothing on this page asked for)."""
    missing = []
    if store is not None and not tax_id_normalize(store.cnpj):
        missing.append(gettext("CNPJ (em Identificação)"))
    if store is not None and not store.state_registration:
        missing.append(gettext("inscrição estadual (ou ISENTO)"))
    elif store is not None and state_registration_problem(store.state_registration, store.state):
        # saved before the IE was checked by the UF: the SEFAZ would refuse it
        missing.append(gettext("inscrição estadual válida para %(uf)s") % {"uf": store.state or "a UF"})
    if store is not None and not store.tax_regime:
        missing.append(gettext("regime tributário"))
    text = gettext("Cada produto precisa também do NCM (8 dígitos), na página do produto.")
    if missing:
        return gettext("Para emitir NF-e faltam: %(fields)s.") % {"fields": ", ".join(missing)} + " " + text
    return text


@admin.register(StoreSettings)
class StoreSettingsAdmin(admin.ModelAdmin):
    form = StoreSettingsForm
    fieldsets = (
        (_("Identificação"), {"fields": ("trade_name", "legal_name", "cnpj", "logo")}),
        (_("Página inicial"), {"fields": ("home_tagline", "home_image")}),
        (
            _("Endereço"),
            {"fields": ("postal_code", ("street", "number"), "complement", "neighborhood", ("city", "state"))},
        ),
        (_("Atendimento"), {"fields": ("contact_email", ("phone", "whatsapp"), "business_hours")}),
        (_("Pagamento"), {"fields": ("pix_discount_percent",)}),
        (
            _("Frete: medidas padrão de um item"),
            {
                "fields": (("default_weight_grams", "default_length_cm", "default_width_cm", "default_height_cm"),),
                "description": _(
                    "Usadas quando nem a variante nem o produto informam peso e medidas. As caixas de embalagem "
                    "ficam em “Caixas de embalagem”."
                ),
            },
        ),
        # Its own heading: under "medidas padrão de um item" a merchant looking for it did not find it (QA walk).
        (_("Frete: prazo de postagem"), {"fields": ("handling_days",)}),
        (
            _("Dados fiscais (NF-e)"),
            {
                "fields": (
                    ("state_registration", "tax_regime"),
                    ("cnae", "nfe_series"),
                    ("default_cfop", "icms_cst", "pis_cofins_cst"),
                    ("ibs_cbs_cst", "ibs_cbs_class"),
                    "fiscal_environment",
                )
            },
        ),
        (
            _("Parcelamento no cartão"),
            {
                "fields": (
                    ("card_max_installments", "card_interest_free_installments"),
                    ("card_monthly_interest_bp", "card_min_installment"),
                ),
                "description": _(
                    "Sem juros até o número indicado (o resto dos centavos vai na 1ª parcela); acima dele, "
                    "juros compostos pela tabela Price, arredondados ao centavo."
                ),
            },
        ),
        (_("Boleto"), {"fields": ("boleto_due_business_days",)}),  # its description: get_fieldsets
        (
            _("Agentes de compra (BCP): quem pode o quê"),
            {
                "fields": (
                    ("agents_browse", "agents_checkout", "agents_complete"),
                    ("agents_orders_read", "agents_orders_act"),
                ),
                "description": _(
                    "Anônimo: um agente que só informa o seu perfil. Registrada: uma plataforma com chave de API "
                    "(Plataformas). Que assina: requisições com assinatura HTTP (RFC 9421) por uma chave do perfil "
                    "da plataforma. Cada item vale para esse nível e os mais confiáveis. Anunciado em "
                    "/.well-known/bcp."
                ),
            },
        ),
        (
            _("Políticas (vazio = texto padrão da loja)"),
            {
                "fields": (
                    "terms_text",
                    "privacy_text",
                    "privacy_controller",
                    ("dpo_name", "dpo_email"),
                    "returns_text",
                    "returns_window_days",
                    "shipping_text",
                    ("terms_url", "privacy_url"),
                    ("returns_url", "shipping_url"),
                ),
                "description": _("Texto simples; uma linha em branco separa os parágrafos."),
            },
        ),
    )

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        """The boleto's section says the values in force (set by whoever installed the store), read per request."""
        boleto = {
            "fields": ("boleto_due_business_days",),
            "description": _(
                "%(issuer)s Sem pagamento até o vencimento mais "
                "%(grace)s, ele é cancelado e o estoque volta à venda. Valor mínimo do pedido para boleto: "
                "%(minimum)s. O gateway, os dias de tolerância e o valor mínimo são definidos pelo técnico que "
                "instalou a loja."
            )
            % {
                "issuer": _boleto_issuer_text(),
                "grace": _grace_days_text(),
                "minimum": format_brl(settings.BOLETO_MIN_AMOUNT),
            },
        }
        payment = {"fields": ("pix_discount_percent",), "description": _pix_text()}
        fiscal_fields = next(options["fields"] for name, options in self.fieldsets if name == _("Dados fiscais (NF-e)"))
        fiscal = {"fields": fiscal_fields, "description": _fiscal_missing_text(obj)}
        by_fields = {boleto["fields"]: boleto, payment["fields"]: payment, fiscal_fields: fiscal}
        return [(name, by_fields.get(options["fields"], options)) for name, options in self.fieldsets]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: StoreSettings, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        fiscal_retry_blocked_soon()  # the store's CNPJ, IE or regime filled in: blocked NF-e go now

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponseRedirect:
        # One row: the list would be a page with one link; open the row instead.
        row = store_row()
        return HttpResponseRedirect(reverse("admin:shop_storesettings_change", args=[row.pk]))


@admin.register(PackagingBox)
class PackagingBoxAdmin(admin.ModelAdmin):
    """The boxes the store packs in: the packing rule takes the smallest that fits (shop/freight/parcels.py)."""

    list_display = ["name", "length_cm", "width_cm", "height_cm", "weight_grams", "max_weight_grams", "active"]
    list_editable = ["active"]
    fields = ["name", ("length_cm", "width_cm", "height_cm"), ("weight_grams", "max_weight_grams"), "active"]
