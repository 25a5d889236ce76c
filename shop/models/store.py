"""The shop's own identity: one row of store settings, edited in the admin (`shop.store.services.store_get`)."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import cnpj_valid, tax_id_normalize
from kernel.ops import request_cache
from kernel.ops.kept import KeptByToken
from shop.invoicing.validators import (
    TAX_REGIMES,
    ibs_cbs_pair_problem,
    state_registration_problem,
    validate_cfop,
    validate_cnae,
    validate_ibs_cbs_class,
    validate_ibs_cbs_cst,
    validate_icms_cst,
    validate_pis_cofins_cst,
    validate_state_registration,
)

STORE_ROW_ID = 1
# The version token of what each process keeps of the row (kernel/ops/kept.py): the display `Store` read by
# shop.store.services.store_get and its policies per language (shop.store.policies.store_policies). v7: a token,
# no longer a pickled Store (an older release's entry under the old name is never read as one).
CACHE_KEY = "shop:store-settings:v7"
CACHE_SECONDS = 3600  # saving the row drops the token; the TTL only bounds a missed invalidation
STORE_KEPT = KeptByToken(CACHE_KEY, CACHE_SECONDS)
FISCAL_KEY = "shop:store-settings:v6:fiscal"  # the NF-e issuer's fields, read by shop.invoicing.invoice


def _invalidate() -> None:
    STORE_KEPT.drop()
    request_cache.forget(FISCAL_KEY)


def _validate_cnpj(value: str) -> None:
    if value and not cnpj_valid(tax_id_normalize(value)):
        raise ValidationError(
            _("CNPJ inválido: confira os 14 caracteres e os dígitos verificadores (ex.: 12.ABC.345/01DE-35).")
        )


# Who may do what over BCP (bcp_app/service/trust.py): the least trusted caller allowed, or nobody.
AGENT_TIERS = [
    ("anonymous", _("Qualquer agente (anônimo)")),
    ("registered", _("Plataformas registradas (chave de API) ou que assinam")),
    ("signed", _("Somente plataformas que assinam as requisições (RFC 9421)")),
    ("none", _("Nenhum agente")),
]


class StoreSettings(models.Model):
    """Exactly one row (pk 1). Defaults are what the shop showed before it existed, so nothing changes
    until the merchant edits it. Empty policy texts keep the shop's standard texts."""

    trade_name = models.CharField(_("nome fantasia"), max_length=120, default="Loja Exemplo")
    legal_name = models.CharField(_("razão social"), max_length=200, default="Loja Exemplo Ltda")
    cnpj = models.CharField(
        _("CNPJ"),
        max_length=18,
        blank=True,
        validators=[_validate_cnpj],
        help_text=_("Numérico ou alfanumérico (a partir de julho de 2026), com ou sem pontuação."),
    )
    # Address (Brazilian order: CEP, street, number, complement, bairro, city, UF).
    postal_code = models.CharField(_("CEP"), max_length=9, blank=True)
    street = models.CharField(_("logradouro"), max_length=200, blank=True)
    number = models.CharField(_("número"), max_length=20, blank=True)
    complement = models.CharField(_("complemento"), max_length=100, blank=True)
    neighborhood = models.CharField(_("bairro"), max_length=100, blank=True)
    city = models.CharField(_("cidade"), max_length=100, default="São Paulo")
    state = models.CharField(_("UF"), max_length=2, default="SP")
    contact_email = models.EmailField(_("e-mail de atendimento"), blank=True)
    phone = models.CharField(_("telefone"), max_length=20, blank=True)
    whatsapp = models.CharField(_("WhatsApp"), max_length=20, blank=True, help_text=_("Ex.: (11) 98765-4321"))
    business_hours = models.CharField(
        _("horário de atendimento"), max_length=200, blank=True, help_text=_("Ex.: seg. a sex., 9h às 18h")
    )
    logo = models.ImageField(_("logotipo"), upload_to="loja/", blank=True)
    # The home page's hero (QA walk: a new shop's home showed the demo's coffee bag, T-shirt and mug and "Produtos
    # brasileiros escolhidos com carinho"); the demo seed fills both.
    home_tagline = models.CharField(
        _("frase da página inicial"),
        max_length=200,
        blank=True,
        help_text=_(
            "Aparece abaixo do nome da loja, no topo da página inicial (ex.: “Moda feminina feita em Minas, do P ao"
            " GG”). Vazio: “Boas-vindas! Confira os produtos da loja” e o nome da loja."
        ),
    )
    home_image = models.ImageField(
        _("imagem da página inicial"),
        upload_to="loja/",
        blank=True,
        help_text=_(
            "Ao lado da frase, no topo da página inicial (JPG ou PNG, de preferência mais larga que alta)."
            " Vazio: nenhuma imagem."
        ),
    )
    # Policies: empty = the shop's standard text. Plain text; blank lines separate paragraphs.
    terms_text = models.TextField(_("termos de uso"), blank=True)
    privacy_text = models.TextField(_("política de privacidade (LGPD)"), blank=True)
    privacy_controller = models.CharField(
        _("controlador dos dados"), max_length=200, blank=True, help_text=_("Vazio: a razão social.")
    )
    dpo_name = models.CharField(_("encarregado (DPO)"), max_length=200, blank=True)
    dpo_email = models.EmailField(_("e-mail do encarregado"), blank=True)
    returns_text = models.TextField(_("trocas e devoluções"), blank=True)
    shipping_text = models.TextField(_("política de entrega"), blank=True)
    returns_window_days = models.PositiveSmallIntegerField(
        _("prazo para desistir (dias do recebimento)"),
        default=7,
        validators=[MinValueValidator(7, _("O Código de Defesa do Consumidor (art. 49) garante ao menos 7 dias."))],
        help_text=_("Informado aos agentes de compra na política de trocas (BCP)."),
    )
    # A policy kept on another site: its address replaces the shop's own page in links and BCP policies.
    terms_url = models.URLField(_("endereço externo dos termos de uso"), blank=True)
    privacy_url = models.URLField(_("endereço externo da política de privacidade"), blank=True)
    returns_url = models.URLField(_("endereço externo da política de trocas"), blank=True)
    shipping_url = models.URLField(_("endereço externo da política de entrega"), blank=True)
    # Fiscal data for the NF-e (issue 18); CNPJ, razão social and address above are the issuer's too.
    state_registration = models.CharField(
        _("inscrição estadual"), max_length=20, blank=True, validators=[validate_state_registration]
    )
    tax_regime = models.CharField(
        _("regime tributário"), max_length=16, blank=True, choices=TAX_REGIMES, default="simples"
    )
    cnae = models.CharField(_("CNAE"), max_length=10, blank=True, validators=[validate_cnae])
    nfe_series = models.PositiveSmallIntegerField(
        _("série da NF-e"),
        default=1,
        validators=[MaxValueValidator(889, _("Série da NF-e inválida: use um número de 0 a 889."))],
        help_text=_("De 0 a 889."),
    )
    default_cfop = models.CharField(
        _("CFOP padrão"),
        max_length=5,
        blank=True,
        default="5102",
        validators=[validate_cfop],
        help_text=_("Venda dentro do estado (vazio: 5102); para outro estado vale o 6xxx correspondente."),
    )
    icms_cst = models.CharField(
        _("CST/CSOSN do ICMS padrão"),
        max_length=3,
        blank=True,
        validators=[validate_icms_cst],
        help_text=_("Vazio: 102 no Simples Nacional, 00 no regime normal."),
    )
    pis_cofins_cst = models.CharField(
        _("CST de PIS/COFINS"),
        max_length=2,
        blank=True,
        default="07",
        validators=[validate_pis_cofins_cst],
        help_text=_("Vazio: 07."),
    )
    # IBS/CBS (NT 2025.002): the classification of every product that names none. When the NF-e carries the
    # group depends on the regime above and the dates FISCAL_IBSCBS_NORMAL_FROM / FISCAL_IBSCBS_SIMPLES_FROM.
    ibs_cbs_cst = models.CharField(
        _("CST do IBS/CBS padrão"),
        max_length=3,
        blank=True,
        default="000",
        validators=[validate_ibs_cbs_cst],
        help_text=_(
            "Vazio: 000 (tributação integral). O grupo IBS/CBS vai na NF-e do regime normal desde 05/01/2026 "
            "(FISCAL_IBSCBS_NORMAL_FROM) e na do Simples Nacional e do MEI a partir de FISCAL_IBSCBS_SIMPLES_FROM "
            "(padrão 01/01/2027); alíquotas de teste de 2026: CBS 0,9 %, IBS 0,1 %."
        ),
    )
    ibs_cbs_class = models.CharField(
        _("classificação tributária do IBS/CBS padrão (cClassTrib)"),
        max_length=6,
        blank=True,
        default="000001",
        validators=[validate_ibs_cbs_class],
        help_text=_("Vazio: 000001. Os 3 primeiros dígitos são o CST."),
    )
    fiscal_environment = models.CharField(
        _("ambiente da NF-e"),
        max_length=12,
        blank=True,  # empty = homologação
        choices=[("homologacao", _("Homologação (testes, sem valor fiscal)")), ("producao", _("Produção"))],
        default="homologacao",
    )
    # Parcelamento no cartão (payments/installments.py has the arithmetic and its rounding rules).
    card_max_installments = models.PositiveSmallIntegerField(
        _("parcelas no cartão (máximo)"),
        default=12,
        validators=[MinValueValidator(1), MaxValueValidator(24, _("No máximo 24 parcelas."))],
    )
    card_interest_free_installments = models.PositiveSmallIntegerField(
        _("parcelas sem juros (até)"),
        default=12,
        validators=[MinValueValidator(1), MaxValueValidator(24, _("No máximo 24 parcelas."))],
        help_text=_("Acima deste número cada parcela tem juros (tabela Price) à taxa mensal abaixo."),
    )
    card_monthly_interest_bp = models.PositiveIntegerField(
        _("juros ao mês (centésimos de %)"),
        default=199,
        # "%%": Django formats a validator message with its params; a bare "%" crashed or garbled it.
        validators=[MaxValueValidator(1000, _("No máximo 10 %% ao mês."))],
        help_text=_("199 = 1,99 % ao mês."),
    )
    card_min_installment = models.PositiveIntegerField(
        _("parcela mínima (centavos)"), default=500, help_text=_("500 = R$ 5,00.")
    )
    # Payment-method discount (issue 17): the engine applies it while Pix is the selected instrument.
    pix_discount_percent = models.DecimalField(
        _("desconto no Pix (%)"),
        max_digits=4,
        decimal_places=2,
        default=Decimal("0"),
        validators=[
            MinValueValidator(Decimal("0"), _("O desconto no Pix não pode ser negativo.")),
            MaxValueValidator(Decimal("50"), _("Desconto no Pix de no máximo 50%%.")),
        ],
        help_text=_(
            "Ex.: 5 = 5% de desconto sobre os produtos (depois dos cupons, sem o frete) quando o comprador paga "
            "com Pix. 0 = sem desconto."
        ),
    )
    # Boleto (issue 37, payments/boleto/): due this many business days after the order; 0 = not offered.
    boleto_due_business_days = models.PositiveSmallIntegerField(
        _("vencimento do boleto (dias úteis)"),
        default=3,
        validators=[MaxValueValidator(30, _("No máximo 30 dias úteis."))],
        help_text=_(
            "Ex.: 3 = vence 3 dias úteis depois do pedido. 0 = não oferecer boleto. Sem pagamento até o "
            "vencimento mais BOLETO_EXPIRY_GRACE_DAYS dias (configuração do servidor), o boleto é cancelado e o "
            "estoque liberado."
        ),
    )
    # Business days between the payment and handing the parcel to the carrier: the buyer's estimate before shipping
    # is these plus the carrier's days, counted from the payment (orders/arrival.py).
    handling_days = models.PositiveSmallIntegerField(
        _("prazo de postagem (dias úteis)"),
        default=0,
        validators=[MaxValueValidator(30, _("No máximo 30 dias úteis."))],
        help_text=_(
            "Dias úteis entre o pagamento e a entrega do pacote à transportadora. Ex.: 2 = um pedido pago na "
            "segunda é postado até quarta, e a previsão de entrega mostrada ao comprador soma esses dias aos da "
            "transportadora, a partir do pagamento. 0 = a previsão conta só os dias da transportadora, a partir "
            "do envio."
        ),
    )
    # When `seed_demo` first loaded the demo: later runs (every `make run`) write nothing, so a demo row the
    # merchant deleted stays deleted (QA walk: a deleted coupon, pickup point and product came back).
    demo_loaded_at = models.DateTimeField(_("demonstração carregada em"), null=True, blank=True, editable=False)
    # Freight: one unit's package when neither the variant nor the product says (issue 36).
    default_weight_grams = models.PositiveIntegerField(
        _("peso padrão de um item (g)"), default=300, help_text=_("Usado quando o produto não informa o peso.")
    )
    default_length_cm = models.PositiveIntegerField(_("comprimento padrão (cm)"), default=20)
    default_width_cm = models.PositiveIntegerField(_("largura padrão (cm)"), default=15)
    default_height_cm = models.PositiveIntegerField(_("altura padrão (cm)"), default=5)
    # Agent trust tiers (issue 35, bcp_app/service/trust.py): for each permission, the least trusted agent that
    # holds it. The defaults are what the shop allowed before (anonymous agents browse, build and complete
    # checkouts; only an authenticated platform reads or acts on its orders).
    agents_browse = models.CharField(
        _("agentes: consultar o catálogo"), max_length=12, choices=AGENT_TIERS, default="anonymous"
    )
    agents_checkout = models.CharField(
        _("agentes: criar e alterar checkouts"), max_length=12, choices=AGENT_TIERS, default="anonymous"
    )
    agents_complete = models.CharField(
        _("agentes: finalizar compras"), max_length=12, choices=AGENT_TIERS, default="anonymous"
    )
    agents_orders_read = models.CharField(
        _("agentes: consultar pedidos"),
        max_length=12,
        choices=AGENT_TIERS,
        default="registered",
        help_text=_("Uma plataforma só vê os pedidos dos checkouts que ela criou."),
    )
    agents_orders_act = models.CharField(
        _("agentes: cancelar pedidos e pedir devoluções"), max_length=12, choices=AGENT_TIERS, default="registered"
    )
    updated_at = models.DateTimeField(_("atualizado em"), auto_now=True)

    class Meta:
        verbose_name = _("dados da loja")
        verbose_name_plural = _("dados da loja")

    def __str__(self) -> str:
        return self.trade_name

    def save(self, *args: object, **kwargs: object) -> None:
        self.pk = STORE_ROW_ID  # one row, whatever the caller did
        super().save(*args, **kwargs)  # type: ignore[arg-type]
        # Now and again after commit: a page rendered meanwhile may have cached the old row.
        _invalidate()
        transaction.on_commit(_invalidate)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        result = super().delete(*args, **kwargs)  # type: ignore[arg-type]
        _invalidate()
        transaction.on_commit(_invalidate)
        return result

    def clean(self) -> None:
        super().clean()
        errors = {}
        # The IE by the store's UF (QA: "123" was taken and the NF-e refused by the SEFAZ at the first sale).
        problem_ie = state_registration_problem(self.state_registration, self.state)
        if problem_ie:
            errors["state_registration"] = problem_ie
        problem = ibs_cbs_pair_problem(self.ibs_cbs_cst or "000", self.ibs_cbs_class or "000001")
        if problem:
            errors["ibs_cbs_class"] = problem[0].upper() + problem[1:] + "."
        if errors:
            raise ValidationError(errors)
