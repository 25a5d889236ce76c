"""Payment objects (BCP §11, PIX.md §1.4/§2.3): instruments in requests, display-only echoes and Pix charges."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from bcp_app.protocol.schemas.common import Amount, PostalAddressIn, RequestModel, ResponseModel

Id = Annotated[str, Field(min_length=1, max_length=100)]


class CredentialIn(RequestModel):
    type: Annotated[str, Field(max_length=100)] = Field(default="", description="Tipo da credencial do handler.")
    token: Annotated[str, Field(max_length=8000)] = Field(default="", description="Token opaco (nunca ecoado).")


class InstrumentIn(RequestModel):
    id: Id = Field(description="Id do instrumento, atribuído pela plataforma (ex. `instr_1`).")
    handler_id: Id = Field(description="`id` de um handler de `ucp.payment_handlers` deste checkout.")
    type: Annotated[str, Field(min_length=1, max_length=40)] = Field(description="`pix`, `card` ou `boleto`.")
    selected: bool = Field(default=True, description="Se este é o instrumento escolhido.")
    billing_address: PostalAddressIn | None = Field(default=None, description="Endereço de cobrança (cartão).")
    credential: CredentialIn | None = Field(
        default=None, description="Credencial do handler (cartão); Pix não usa. Nunca devolvida."
    )
    installments: Annotated[int, Field(ge=1, le=24)] | None = Field(
        default=None,
        description="Cartão: número de parcelas escolhido (1 = à vista), dentro de "
        "`config.installments` do handler de cartão; acima das sem juros, os juros entram como total `fee`.",
    )


class PaymentIn(RequestModel):
    instruments: Annotated[list[InstrumentIn], Field(max_length=10)] = Field(
        default_factory=list, description="Instrumentos; exatamente um no complete (sem pagamento dividido)."
    )


class QrCode(ResponseModel):
    media_type: str = Field(description="Tipo da imagem, `image/svg+xml` ou `image/png`.")
    data_uri: str = Field(description="A imagem do QR como data URI.")
    url: str | None = Field(default=None, description="A mesma imagem servida pela loja.")


class PixCharge(ResponseModel):
    """PIX.md §2.3: the charge the buyer pays in their bank app (response-only, `ucp_request: omit`)."""

    txid: str = Field(description="Id de conciliação da cobrança; muda quando a cobrança é substituída.")
    status: str = Field(description="active, paid, expired, canceled, refunded ou partially_refunded.")
    amount: Amount = Field(description="Valor em centavos; igual ao total do checkout.")
    currency: Literal["BRL"] = Field(description="Sempre BRL.")
    br_code: str = Field(description="Pix Copia e Cola, exatamente como o PSP devolveu.")
    qr_code: QrCode = Field(description="Imagem do QR do `br_code`.")
    created_at: str = Field(description="Criação (RFC 3339).")
    expires_at: str = Field(description="Expiração (RFC 3339).")
    paid_at: str | None = Field(description="Quando foi paga (RFC 3339) ou null.")
    end_to_end_id: str | None = Field(description="endToEndId do Pix recebido ou null.")


class Boleto(ResponseModel):
    """A boleto checkout's boleto (issue 37, shopping/boleto.json `boleto`): what the buyer pays with."""

    id: str = Field(description="Id do boleto na loja (`bolpay_…`).")
    status: Literal["pending", "paid", "expired"] = Field(description="pending até o banco avisar; paid; expired.")
    amount: Amount = Field(description="Valor em centavos; igual ao total do checkout.")
    currency: Literal["BRL"] = Field(description="Sempre BRL.")
    due_date: str = Field(description="Vencimento (data de Brasília, AAAA-MM-DD).")
    line: str = Field(description="Linha digitável (47 dígitos).")
    line_formatted: str = Field(description="A linha digitável nos cinco campos impressos.")
    barcode: str = Field(description="Os 44 dígitos do código de barras (intercalado 2 de 5).")
    pdf_url: str | None = Field(description="O boleto para imprimir (PDF do gateway).")
    pix_br_code: str | None = Field(description="O Pix copia e cola impresso no boleto, quando houver.")
    paid_at: str | None = Field(description="Quando foi pago (RFC 3339) ou null.")


class InstrumentDisplay(ResponseModel):
    description: str = Field(description='"Pix", "Cartão à vista" ou o plano, ex. "Cartão em 6x de R$ 17,20".')
    # shopping/types/card_payment_instrument.json `display`: named once the card was charged (the gateway's answer)
    brand: str | None = Field(default=None, description="Cartão cobrado: bandeira (ex. visa), como o gateway disse.")
    last_digits: str | None = Field(default=None, description="Cartão cobrado: os 4 últimos dígitos (nunca o número).")


class InstrumentOut(ResponseModel):
    id: str = Field(description="Id do instrumento.")
    handler_id: str = Field(description="Handler do instrumento.")
    type: str = Field(description="`pix`, `card` ou `boleto`.")
    selected: bool | None = Field(default=None, description="Se é o instrumento escolhido.")
    display: InstrumentDisplay | None = Field(default=None, description="Informação de exibição (sem credenciais).")
    installments: int | None = Field(default=None, description="Cartão: parcelas escolhidas (1 = à vista).")
    pix: PixCharge | None = Field(default=None, description="A cobrança Pix, quando emitida (PIX.md §2.3).")
    boleto: Boleto | None = Field(default=None, description="O boleto, depois do complete (handler br.dev.bcp.boleto).")


class PaymentOut(ResponseModel):
    instruments: list[InstrumentOut] = Field(description="Instrumentos selecionados, só para exibição.")
