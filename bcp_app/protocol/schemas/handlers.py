"""Payment handler entries of checkout responses (`ucp.payment_handlers`, BCP §11.1): the Pix handler
(PIX.md §1.1/§1.3, with the shop's Pix discount) and the Google Pay style card handler (seed 004, with
the installment plan). Field order is the wire order."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bcp_app.protocol.schemas.common import Amount, ResponseModel


class AvailableInstrument(ResponseModel):
    type: str = Field(description="Tipo de instrumento aceito: `pix` ou `card`.")


class PixDiscountConfig(ResponseModel):
    """The shop's "Pix: N % off" (issue 17), a BCP extension of the PIX.md §1.1 config."""

    type: Literal["percentage"] = Field(description="Sempre percentual.")
    basis_points: int = Field(ge=1, le=10000, description="Desconto em pontos-base (500 = 5 %).")
    applies_to: Literal["items_after_discounts"] = Field(description="Base: itens após cupons, sem frete.")
    rounding: Literal["half_even"] = Field(description="Arredondamento por centavo.")
    total_with_pix: Amount | None = Field(default=None, description="Só em checkouts: o total pago por Pix.")


class PixHandlerConfig(ResponseModel):
    """PIX.md §1.1 business config, resolved for the checkout (§1.3)."""

    environment: Literal["sandbox", "production"] = Field(description="Ambiente do PSP.")
    charge_kind: Literal["cob"] = Field(description="Cobrança imediata (API Pix `cob`).")
    key_type: Literal["cpf", "cnpj", "email", "phone", "evp"] | None = Field(
        default=None, description="Tipo da chave recebedora (a chave não é publicada)."
    )
    expiration_seconds: int = Field(gt=0, description="Validade de cada cobrança, em segundos.")
    merchant_name: str | None = Field(default=None, max_length=25, description="Nome exibido no app do pagador.")
    merchant_city: str | None = Field(default=None, max_length=15, description="Cidade exibida no app do pagador.")
    min_amount: Amount | None = Field(default=None, description="Menor valor aceito por Pix, em centavos.")
    max_amount: Amount | None = Field(default=None, description="Maior valor aceito por Pix, em centavos.")
    discount: PixDiscountConfig | None = Field(default=None, description="Desconto Pix da loja, se houver.")


class MerchantInfo(ResponseModel):
    merchant_name: str = Field(description="Nome da loja.")


class CardParameters(ResponseModel):
    allowed_auth_methods: list[str] = Field(description="`PAN_ONLY`, `CRYPTOGRAM_3DS`.")
    allowed_card_networks: list[str] = Field(description="Bandeiras aceitas.")


class TokenizationParameters(ResponseModel):
    gateway: str = Field(description="Gateway que recebe o token.")
    gateway_merchant_id: str = Field(alias="gatewayMerchantId", description="Id da loja no gateway.")


class TokenizationSpecification(ResponseModel):
    type: str = Field(description="`PAYMENT_GATEWAY`.")
    parameters: TokenizationParameters = Field(description="Parâmetros do gateway.")


class CardPaymentMethod(ResponseModel):
    type: str = Field(description="`CARD`.")
    parameters: CardParameters = Field(description="Métodos de autenticação e bandeiras.")
    tokenization_specification: TokenizationSpecification = Field(description="Como o cartão é tokenizado.")


class InstallmentsConfig(ResponseModel):
    """Parcelamento: the instrument's `installments` picks a plan; above the interest-free ones, a `fee`."""

    max_installments: int = Field(ge=1, description="Máximo de parcelas.")
    interest_free_installments: int = Field(ge=0, description="Parcelas sem juros.")
    monthly_interest_rate_bp: int = Field(ge=0, description="Juros ao mês em pontos-base (Price).")
    min_installment_amount: Amount = Field(description="Menor parcela, em centavos.")


class CardHandlerConfig(ResponseModel):
    """Seed 004 Google Pay config."""

    api_version: int = Field(description="Versão da API Google Pay.")
    api_version_minor: int = Field(description="Versão menor da API Google Pay.")
    environment: Literal["TEST", "PRODUCTION"] = Field(description="Ambiente.")
    merchant_info: MerchantInfo = Field(description="A loja.")
    allowed_payment_methods: list[CardPaymentMethod] = Field(description="Cartões aceitos.")
    installments: InstallmentsConfig | None = Field(default=None, description="Plano de parcelamento da loja.")


class BoletoHandlerConfig(ResponseModel):
    """The boleto handler's config (issue 37, shopping/boleto.json `config`)."""

    environment: Literal["sandbox", "production"] = Field(description="sandbox: boletos que não valem em banco.")
    gateway: str = Field(description="Quem emite o boleto: pagarme ou sandbox.")
    due_business_days: int = Field(ge=1, description="Vence este número de dias úteis depois do complete.")
    expiry_grace_days: int = Field(ge=1, description="Dias após o vencimento até cancelar um boleto não pago.")
    min_amount: Amount = Field(description="Menor total pagável por boleto, em centavos.")
    requires_buyer_tax_id: bool = Field(description="O CPF/CNPJ do comprador (`buyer.tax_id`) é obrigatório.")


class PaymentHandlerOut(ResponseModel):
    id: str = Field(description="Id do handler, referenciado por `handler_id`.")
    version: str = Field(description="Versão do handler (YYYY-MM-DD).")
    spec: str | None = Field(default=None, description="URL da especificação do handler.")
    schema_url: str | None = Field(default=None, alias="schema", description="URL do JSON Schema do handler.")
    available_instruments: list[AvailableInstrument] | None = Field(default=None, description="Tipos de instrumento.")
    config: PixHandlerConfig | CardHandlerConfig | BoletoHandlerConfig = Field(
        description="Configuração do handler para este checkout."
    )
