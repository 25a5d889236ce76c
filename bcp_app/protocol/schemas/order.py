"""Order objects (BCP §7; seed 000 shape)."""

from __future__ import annotations

from pydantic import Field

from bcp_app.protocol.schemas.checkout import ItemOut
from bcp_app.protocol.schemas.common import Message, PostalAddress, ResponseModel, Total
from bcp_app.protocol.schemas.envelope import UcpEnvelope
from bcp_app.protocol.schemas.policies import PolicyOut


class OrderQuantity(ResponseModel):
    total: int = Field(ge=0, description="Quantidade ativa após devoluções e cancelamentos.")
    fulfilled: int = Field(ge=0, description="Quantidade já atendida.")
    original: int | None = Field(default=None, ge=0, description="Quantidade do checkout original.")


class OrderLineItem(ResponseModel):
    id: str = Field(description="Id da linha (o mesmo do checkout).")
    item: ItemOut = Field(description="Item comprado.")
    quantity: OrderQuantity = Field(description="Quantidades.")
    totals: list[Total] = Field(description="Totais da linha.")
    status: str = Field(description="processing, partial, fulfilled ou removed (derivado).")


class LineRef(ResponseModel):
    id: str = Field(description="Id da linha.")
    quantity: int = Field(description="Quantidade.")


class Expectation(ResponseModel):
    id: str = Field(description="Id da expectativa.")
    line_items: list[LineRef] = Field(description="Linhas e quantidades.")
    method_type: str = Field(description="shipping, pickup ou digital.")
    destination: PostalAddress = Field(description="Destino.")
    description: str | None = Field(default=None, description="Descrição do prazo.")
    fulfillable_on: str | None = Field(default=None, description="`now` ou data.")


class FulfillmentEvent(ResponseModel):
    id: str = Field(description="Id do evento.")
    occurred_at: str = Field(description="Quando ocorreu (RFC 3339).")
    type: str = Field(description="processing, shipped, in_transit, delivered, …")
    line_items: list[LineRef] = Field(description="Linhas e quantidades.")
    tracking_number: str | None = Field(default=None, description="Código de rastreio.")
    tracking_url: str | None = Field(default=None, description="URL de rastreio.")
    carrier: str | None = Field(default=None, description="Transportadora.")
    description: str | None = Field(default=None, description="Descrição.")


class Adjustment(ResponseModel):
    id: str = Field(description="Id do ajuste.")
    type: str = Field(description="refund, return, cancellation, …")
    occurred_at: str = Field(description="Quando ocorreu (RFC 3339).")
    status: str = Field(description="pending, completed ou failed.")
    line_items: list[LineRef] | None = Field(default=None, description="Linhas afetadas (quantidade com sinal).")
    totals: list[Total] | None = Field(default=None, description="Valores (negativo = dinheiro devolvido).")
    description: str | None = Field(default=None, description="Motivo.")


class OrderFulfillment(ResponseModel):
    expectations: list[Expectation] | None = Field(default=None, description="Promessas de entrega.")
    events: list[FulfillmentEvent] | None = Field(default=None, description="Eventos (somente acréscimo).")


class IbsCbsTotalsOut(ResponseModel):
    """IBSCBSTot of the NF-e (NT 2025.002) in centavos; informative, already inside the prices."""

    base: int = Field(description="Base de cálculo do IBS e da CBS (vBCIBSCBS), em centavos.")
    ibs_state: int = Field(description="IBS da UF (vIBSUF), em centavos.")
    ibs_municipal: int = Field(description="IBS do município (vIBSMun), em centavos.")
    ibs: int = Field(description="IBS total (vIBS = vIBSUF + vIBSMun), em centavos.")
    cbs: int = Field(description="CBS (vCBS), em centavos.")


class FiscalCorrectionOut(ResponseModel):
    """A carta de correção (CC-e) registered at the SEFAZ for a note (extension br.dev.bcp.shopping.fiscal_document)."""

    number: int = Field(description="Número da carta na nota (nSeqEvento, 1 a 20): a mais alta vale.")
    text: str = Field(description="O texto da correção (xCorrecao).")
    registered_at: str | None = Field(default=None, description="Registro na SEFAZ, RFC 3339.")
    xml_url: str | None = Field(default=None, description="XML do evento registrado (URL absoluta).")
    pdf_url: str | None = Field(default=None, description="PDF da carta (URL absoluta).")


class FiscalDocumentOut(ResponseModel):
    """Extension br.dev.bcp.shopping.fiscal_document (shopping/fiscal_document.json)."""

    type: str = Field(description='Tipo do documento fiscal: "nfe" (NF-e modelo 55).')
    purpose: str | None = Field(
        default=None,
        description='"return": NF-e de devolução (entrada, finalidade 4) dos itens que voltaram; ausente: a NF-e de '
        "venda.",
    )
    status: str = Field(description="pending, processing, authorized, rejected ou cancelled.")
    access_key: str | None = Field(default=None, description="Chave de acesso, 44 dígitos (quando autorizada).")
    number: int | None = Field(default=None, description="Número da NF-e.")
    series: int | None = Field(default=None, description="Série da NF-e.")
    issued_at: str | None = Field(default=None, description="Autorização pela SEFAZ, RFC 3339.")
    danfe_url: str | None = Field(default=None, description="DANFE em PDF (URL absoluta).")
    xml_url: str | None = Field(default=None, description="XML autorizado (URL absoluta).")
    ibs_cbs: IbsCbsTotalsOut | None = Field(
        default=None, description="Totais do IBS/CBS da nota (Reforma Tributária); ausente quando a nota não os tem."
    )
    referenced_access_key: str | None = Field(
        default=None, description="Numa NF-e de devolução: a chave da NF-e de venda que ela referencia (refNFe)."
    )
    return_id: str | None = Field(
        default=None,
        description="Numa NF-e de devolução: a devolução que ela registra (`ret_…` em return_requests, ou o ajuste "
        "`return` que a loja registrou, `adj_…`).",
    )
    cancellation_xml_url: str | None = Field(
        default=None, description="Numa nota cancelada: o XML do evento de cancelamento na SEFAZ (URL absoluta)."
    )
    corrections: list[FiscalCorrectionOut] | None = Field(
        default=None, description="As cartas de correção (CC-e) registradas para a nota, da primeira à última."
    )


class CancelActionOut(ResponseModel):
    """Extension br.dev.bcp.shopping.order_actions: may the order still be canceled (something not shipped yet)."""

    available: bool = Field(
        description="true enquanto algo do pedido ainda não foi enviado: num pedido enviado em parte, o cancelamento "
        "cancela (e reembolsa) só o que não saiu."
    )
    unavailable_reason: str | None = Field(
        default=None,
        description="order_canceled, already_shipped, nothing_to_cancel ou payment_disputed (quando indisponível).",
    )


class ReturnActionOut(ResponseModel):
    """Extension br.dev.bcp.shopping.order_actions: may a return be requested, until when, of what."""

    available: bool = Field(description="true enquanto há itens entregues a devolver dentro do prazo.")
    unavailable_reason: str | None = Field(
        default=None, description="order_canceled, nothing_to_return ou return_window_closed (quando indisponível)."
    )
    window_days: int = Field(ge=7, description="Prazo em dias a partir da entrega (CDC art. 49: no mínimo 7).")
    deadline: str | None = Field(
        default=None, description="Fim do prazo, RFC 3339; ausente enquanto nenhuma entrega foi registrada."
    )
    line_items: list[LineRef] = Field(description="Linhas e quantidades que ainda podem ser pedidas em devolução.")


class OrderActionsOut(ResponseModel):
    cancel: CancelActionOut = Field(description="Cancelamento pelo comprador ou pela plataforma.")
    return_: ReturnActionOut = Field(alias="return", description="Devolução pelo comprador ou pela plataforma.")


class ReturnRequestOut(ResponseModel):
    """One return request of the order (extension br.dev.bcp.shopping.order_actions)."""

    id: str = Field(description="Id da devolução (`ret_…`).")
    status: str = Field(
        description="requested, approved, rejected, received, refund_pending (reembolso solicitado, aguardando o "
        "PSP), refunded (o ajuste de reembolso foi concluído) ou refund_failed (o reembolso falhou; a loja pode "
        "reembolsar de novo)."
    )
    reason_code: str = Field(description="changed_mind, defective, damaged, wrong_item ou other.")
    reason: str | None = Field(default=None, description="Palavras do comprador.")
    line_items: list[LineRef] = Field(description="Linhas e quantidades pedidas.")
    requested_by: str = Field(description="buyer (página do pedido) ou platform (agente).")
    merchant_note: str | None = Field(default=None, description="Resposta da loja (ex.: motivo da recusa).")
    refund_amount: int | None = Field(default=None, ge=0, description="Valor devolvido, em centavos.")
    return_adjustment_id: str | None = Field(
        default=None, description="Ajuste `return` dos itens recebidos (`adj_…`, em `adjustments`)."
    )
    refund_adjustment_id: str | None = Field(
        default=None,
        description="Ajuste `refund` desta devolução (`adj_…`, em `adjustments`): seu status diz se o dinheiro "
        "voltou (pending, completed, failed).",
    )
    created_at: str = Field(description="RFC 3339.")
    updated_at: str = Field(description="RFC 3339.")


class OrderResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão e capacidade order.")
    id: str = Field(description="Id do pedido.")
    label: str | None = Field(default=None, description="Número do pedido.")
    checkout_id: str = Field(description="Checkout de origem.")
    permalink_url: str = Field(description="Página do pedido.")
    line_items: list[OrderLineItem] = Field(description="Todas as linhas que já existiram.")
    fulfillment: OrderFulfillment = Field(description="Expectativas e eventos.")
    adjustments: list[Adjustment] | None = Field(default=None, description="Reembolsos, devoluções, …")
    currency: str = Field(description="BRL.")
    totals: list[Total] = Field(description="Totais do pedido.")
    updated_at: str | None = Field(
        default=None,
        description=(
            "Quando este estado do pedido foi registrado (RFC 3339, microssegundos); entre dois webhooks do mesmo "
            "pedido, vale o de `updated_at` maior (membro extra: os esquemas BCP são abertos)."
        ),
    )
    messages: list[Message] | None = Field(default=None, description="Mensagens.")
    fiscal_documents: list[FiscalDocumentOut] | None = Field(
        default=None,
        description=(
            "Notas fiscais do pedido, a atual primeiro; uma nota cancelada e reemitida segue com status cancelled "
            "(extensão br.dev.bcp.shopping.fiscal_document)."
        ),
    )
    policies: list[PolicyOut] = Field(description="Políticas em vigor quando o pedido foi feito (UCP #572).")
    order_actions: OrderActionsOut | None = Field(
        default=None, description="O que ainda se pode fazer com o pedido (extensão br.dev.bcp.shopping.order_actions)."
    )
    return_requests: list[ReturnRequestOut] | None = Field(
        default=None, description="Devoluções pedidas (extensão br.dev.bcp.shopping.order_actions)."
    )
