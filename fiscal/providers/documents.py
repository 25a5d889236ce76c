"""The XML (nfeProc) and DANFE PDF the sandbox provider hands back, generated locally.

The DANFE uses fpdf2 (pure Python, maintained, already-present Pillow is its only heavy dependency):
a hand-written PDF would need our own text layout and font metrics; reportlab is far larger for one page.
Not a legally valid DANFE layout (no barcode); plausible enough for development and for buyers to see.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from xml.etree import ElementTree as ET
from zoneinfo import ZoneInfo

from kernel.money import PT_BR, format_brl, format_decimal_point


def _brl(cents: int) -> str:
    """The DANFE is Portuguese whatever language issued it. (kernel.money follows the reader's language.)"""
    return format_brl(cents, language=PT_BR)


NFE_NS = "http://www.portalfiscal.inf.br/nfe"
# NF-e times are Brasília's (dhEmi with its offset, the DANFE's "Emissão"); stored times are UTC.
BRASILIA = ZoneInfo("America/Sao_Paulo")
PDF_ENCODING = "windows-1252"  # the core fonts' WinAnsiEncoding: Portuguese plus “ ” — … €


def local_time(at: datetime) -> datetime:
    return at.astimezone(BRASILIA)


def _sub(parent: ET.Element, tag: str, text: str | None = None) -> ET.Element:
    element = ET.SubElement(parent, f"{{{NFE_NS}}}{tag}")
    if text is not None:
        element.text = text
    return element


def _ibs_cbs_item(imposto: ET.Element, group: dict[str, Any]) -> None:
    """`IBSCBS` (UB12) of one item, NT 2025.002: CST (UB13), cClassTrib (UB14), and `gIBSCBS` (UB15) for a taxed CST."""
    node = _sub(imposto, "IBSCBS")
    _sub(node, "CST", group["cst"])
    _sub(node, "cClassTrib", group["class_code"])
    if "base" not in group:
        return
    g = _sub(node, "gIBSCBS")
    _sub(g, "vBC", format_decimal_point(int(group["base"])))  # UB16
    uf = _sub(g, "gIBSUF")  # UB17
    _sub(uf, "pIBSUF", group["ibs_uf_rate"])  # UB18
    _sub(uf, "vIBSUF", format_decimal_point(int(group["ibs_uf_amount"])))  # UB35
    mun = _sub(g, "gIBSMun")  # UB36
    _sub(mun, "pIBSMun", group["ibs_mun_rate"])  # UB37
    _sub(mun, "vIBSMun", format_decimal_point(int(group["ibs_mun_amount"])))  # UB54
    _sub(g, "vIBS", format_decimal_point(int(group["ibs_amount"])))  # UB54a
    cbs = _sub(g, "gCBS")  # UB55
    _sub(cbs, "pCBS", group["cbs_rate"])  # UB56
    _sub(cbs, "vCBS", format_decimal_point(int(group["cbs_amount"])))  # UB70


def _ibs_cbs_totals(total: ET.Element, totals: dict[str, Any]) -> None:
    """`IBSCBSTot` (W34): the sums of the items; deferral, returns and presumed credits are 0 (1-1 in the leiaute)."""
    zero = format_decimal_point(0)
    node = _sub(total, "IBSCBSTot")
    _sub(node, "vBCIBSCBS", format_decimal_point(int(totals["base"])))  # W35
    g_ibs = _sub(node, "gIBS")
    uf = _sub(g_ibs, "gIBSUF")
    _sub(uf, "vDif", zero)  # W38
    _sub(uf, "vDevTrib", zero)  # W39
    _sub(uf, "vIBSUF", format_decimal_point(int(totals["ibs_uf_amount"])))  # W41
    mun = _sub(g_ibs, "gIBSMun")
    _sub(mun, "vDif", zero)  # W43
    _sub(mun, "vDevTrib", zero)  # W44
    _sub(mun, "vIBSMun", format_decimal_point(int(totals["ibs_mun_amount"])))  # W46
    _sub(g_ibs, "vIBS", format_decimal_point(int(totals["ibs_amount"])))  # W47
    _sub(g_ibs, "vCredPres", zero)  # W48
    _sub(g_ibs, "vCredPresCondSus", zero)  # W49
    g_cbs = _sub(node, "gCBS")
    _sub(g_cbs, "vDif", zero)  # W53
    _sub(g_cbs, "vDevTrib", zero)  # W54
    _sub(g_cbs, "vCBS", format_decimal_point(int(totals["cbs_amount"])))  # W56
    _sub(g_cbs, "vCredPres", zero)  # W56a
    _sub(g_cbs, "vCredPresCondSus", zero)  # W56b


def nfe_xml(
    *, invoice: dict[str, Any], access_key: str, number: int, series: int, protocol: str, at: datetime
) -> bytes:
    issuer = invoice.get("issuer", {})
    recipient = invoice.get("recipient", {})
    at = local_time(at)
    ET.register_namespace("", NFE_NS)
    proc = ET.Element(f"{{{NFE_NS}}}nfeProc", versao="4.00")
    nfe = ET.SubElement(proc, f"{{{NFE_NS}}}NFe")
    inf = ET.SubElement(nfe, f"{{{NFE_NS}}}infNFe", Id=f"NFe{access_key}", versao="4.00")
    ide = ET.SubElement(inf, f"{{{NFE_NS}}}ide")
    for tag, value in (("mod", "55"), ("serie", str(series)), ("nNF", str(number)), ("dhEmi", at.isoformat())):
        ET.SubElement(ide, f"{{{NFE_NS}}}{tag}").text = value
    ET.SubElement(ide, f"{{{NFE_NS}}}tpAmb").text = "1" if invoice.get("environment") == "producao" else "2"
    devolution = invoice.get("purpose") == "return"  # NF-e de devolução: entrada, finalidade 4, the sale referenced
    ET.SubElement(ide, f"{{{NFE_NS}}}natOp").text = str(invoice.get("operation") or "Venda de mercadoria")
    ET.SubElement(ide, f"{{{NFE_NS}}}tpNF").text = "0" if devolution else "1"
    ET.SubElement(ide, f"{{{NFE_NS}}}finNFe").text = "4" if devolution else "1"
    for key in invoice.get("referenced_keys") or []:
        ET.SubElement(ET.SubElement(ide, f"{{{NFE_NS}}}NFref"), f"{{{NFE_NS}}}refNFe").text = str(key)
    emit = ET.SubElement(inf, f"{{{NFE_NS}}}emit")
    ET.SubElement(emit, f"{{{NFE_NS}}}CNPJ").text = str(issuer.get("cnpj", ""))
    ET.SubElement(emit, f"{{{NFE_NS}}}xNome").text = str(issuer.get("legal_name", ""))
    ET.SubElement(emit, f"{{{NFE_NS}}}IE").text = str(issuer.get("state_registration", ""))
    dest = ET.SubElement(inf, f"{{{NFE_NS}}}dest")
    tax_id = str(recipient.get("tax_id", ""))
    ET.SubElement(dest, f"{{{NFE_NS}}}{'CNPJ' if len(tax_id) == 14 else 'CPF'}").text = tax_id
    ET.SubElement(dest, f"{{{NFE_NS}}}xNome").text = str(recipient.get("name", ""))
    for index, item in enumerate(invoice.get("items", []), start=1):
        det = ET.SubElement(inf, f"{{{NFE_NS}}}det", nItem=str(index))
        prod = ET.SubElement(det, f"{{{NFE_NS}}}prod")
        for tag, key in (
            ("cProd", "sku"),
            ("xProd", "description"),
            ("NCM", "ncm"),
            ("CFOP", "cfop"),
            ("uCom", "unit"),
        ):
            ET.SubElement(prod, f"{{{NFE_NS}}}{tag}").text = str(item.get(key, ""))
        ET.SubElement(prod, f"{{{NFE_NS}}}qCom").text = str(item.get("quantity", 0))
        ET.SubElement(prod, f"{{{NFE_NS}}}vUnCom").text = format_decimal_point(int(item.get("unit_price", 0)))
        ET.SubElement(prod, f"{{{NFE_NS}}}vProd").text = format_decimal_point(int(item.get("total", 0)))
        for tag, key in (("vFrete", "shipping_amount"), ("vDesc", "discount_amount"), ("vOutro", "other_amount")):
            if item.get(key):
                ET.SubElement(prod, f"{{{NFE_NS}}}{tag}").text = format_decimal_point(int(item[key]))
        if item.get("ibs_cbs"):
            _ibs_cbs_item(_sub(det, "imposto"), item["ibs_cbs"])
    total_group = ET.SubElement(inf, f"{{{NFE_NS}}}total")
    total = ET.SubElement(total_group, f"{{{NFE_NS}}}ICMSTot")
    ET.SubElement(total, f"{{{NFE_NS}}}vNF").text = format_decimal_point(int(invoice.get("total_amount", 0)))
    if invoice.get("ibs_cbs_totals"):
        _ibs_cbs_totals(total_group, invoice["ibs_cbs_totals"])
    prot = ET.SubElement(ET.SubElement(proc, f"{{{NFE_NS}}}protNFe", versao="4.00"), f"{{{NFE_NS}}}infProt")
    for tag, value in (("chNFe", access_key), ("dhRecbto", at.isoformat()), ("nProt", protocol), ("cStat", "100")):
        ET.SubElement(prot, f"{{{NFE_NS}}}{tag}").text = value
    ET.SubElement(prot, f"{{{NFE_NS}}}xMotivo").text = "Autorizado o uso da NF-e"
    return ET.tostring(proc, encoding="utf-8", xml_declaration=True)


def _event_xml(
    *, access_key: str, kind: str, sequence: int, at: datetime, production: bool, detail: tuple[tuple[str, str], ...]
) -> bytes:
    """An NF-e event as the SEFAZ registers it (procEventoNFe, MOC 7.0 "Eventos"): the event `kind` (tpEvento) with
    its nSeqEvento and detEvento, and the SEFAZ's answer (135, registered)."""
    at = local_time(at)
    ET.register_namespace("", NFE_NS)
    proc = ET.Element(f"{{{NFE_NS}}}procEventoNFe", versao="1.00")
    event = ET.SubElement(proc, f"{{{NFE_NS}}}evento", versao="1.00")
    inf = ET.SubElement(event, f"{{{NFE_NS}}}infEvento", Id=f"ID{kind}{access_key}{sequence:02d}")
    for tag, value in (
        ("tpAmb", "1" if production else "2"),
        ("CNPJ", access_key[6:20]),
        ("chNFe", access_key),
        ("dhEvento", at.isoformat()),
        ("tpEvento", kind),
        ("nSeqEvento", str(sequence)),
    ):
        _sub(inf, tag, value)
    det = ET.SubElement(inf, f"{{{NFE_NS}}}detEvento", versao="1.00")
    for tag, value in detail:
        _sub(det, tag, value)
    answer = ET.SubElement(ET.SubElement(proc, f"{{{NFE_NS}}}retEvento", versao="1.00"), f"{{{NFE_NS}}}infEvento")
    for tag, value in (("chNFe", access_key), ("tpEvento", kind), ("nSeqEvento", str(sequence)), ("cStat", "135")):
        _sub(answer, tag, value)
    _sub(answer, "xMotivo", "Evento registrado e vinculado a NF-e")
    return ET.tostring(proc, encoding="utf-8", xml_declaration=True)


def cancel_event_xml(*, access_key: str, protocol: str, justification: str, at: datetime, production: bool) -> bytes:
    """The cancellation event (tpEvento 110111): what the issuer keeps with the note's XML (the accountant asks for
    both)."""
    detail = (("descEvento", "Cancelamento"), ("nProt", protocol), ("xJust", justification))
    return _event_xml(access_key=access_key, kind="110111", sequence=1, at=at, production=production, detail=detail)


# xCondUso of the CC-e (CCe_v1.00.xsd fixes it, without accents): the conditions of use the letter carries.
CORRECTION_CONDITIONS = (
    "A Carta de Correcao e disciplinada pelo paragrafo 1o-A do art. 7o do Convenio S/N, de 15 de dezembro de 1970 "
    "e pode ser utilizada para regularizacao de erro ocorrido na emissao de documento fiscal, desde que o erro nao "
    "esteja relacionado com: I - as variaveis que determinam o valor do imposto tais como: base de calculo, "
    "aliquota, diferenca de preco, quantidade, valor da operacao ou da prestacao; II - a correcao de dados "
    "cadastrais que implique mudanca do remetente ou do destinatario; III - a data de emissao ou de saida."
)


def correction_event_xml(*, access_key: str, number: int, text: str, at: datetime, production: bool) -> bytes:
    """A carta de correção (tpEvento 110110, its nSeqEvento `number`)."""
    detail = (("descEvento", "Carta de Correcao"), ("xCorrecao", text), ("xCondUso", CORRECTION_CONDITIONS))
    return _event_xml(
        access_key=access_key, kind="110110", sequence=number, at=at, production=production, detail=detail
    )


def correction_pdf(*, access_key: str, number: int, text: str, at: datetime, production: bool) -> bytes:
    """The letter's printable page (what the buyer and the carrier read beside the DANFE)."""
    lines = [
        f"NF-e: {' '.join(access_key[i : i + 4] for i in range(0, 44, 4))}",
        f"Carta nº {number}, registrada em {local_time(at):%d/%m/%Y %H:%M} (horário de Brasília)",
        "",
        "Correção:",
        text,
        "",
        "Condições de uso:",
        CORRECTION_CONDITIONS,
    ]
    return _text_pdf(title="Carta de Correção Eletrônica (CC-e)", lines=lines, at=at, production=production)


def _text_pdf(*, title: str, lines: list[str], at: datetime, production: bool) -> bytes:
    """An A4 page of the sandbox's fiscal papers: the title, the homologação warning, the lines."""
    from fpdf import FPDF  # noqa: PLC0415 (0.25 s of import: only the sandbox's papers need it, not every process)

    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = PDF_ENCODING
    pdf.set_creation_date(local_time(at))
    pdf.add_page()
    pdf.set_font("helvetica", "B", 14)
    pdf.cell(0, 8, _latin(title), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    if not production:
        pdf.cell(0, 6, _latin("EMITIDA EM HOMOLOGAÇÃO — SEM VALOR FISCAL"), new_x="LMARGIN", new_y="NEXT")
    for line in lines:
        pdf.multi_cell(0, 6, _latin(line), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _latin(text: object) -> str:
    # The core PDF fonts speak WinAnsi (cp1252): Portuguese, dashes and curly quotes fit; anything else (an
    # emoji in a product title) is replaced rather than failing the note.
    return str(text).encode(PDF_ENCODING, "replace").decode(PDF_ENCODING)


def danfe_lines(
    *, invoice: dict[str, Any], access_key: str, number: int, series: int, protocol: str, at: datetime
) -> list[str]:
    """The DANFE's text, line by line (the PDF below lays them out)."""
    issuer = invoice.get("issuer", {})
    recipient = invoice.get("recipient", {})
    at = local_time(at)
    lines = [
        f"Nº {number:09d}  Série {series:03d}  Emissão {at:%d/%m/%Y %H:%M} (horário de Brasília)",
        f"Emitente: {issuer.get('legal_name', '')}  CNPJ {issuer.get('cnpj', '')}",
        f"Inscrição estadual: {issuer.get('state_registration', '')}",
        f"Destinatário: {recipient.get('name', '')}  CPF/CNPJ {recipient.get('tax_id', '')}",
        f"Chave de acesso: {' '.join(access_key[i : i + 4] for i in range(0, 44, 4))}",
        f"Protocolo de autorização: {protocol}",
        "",
    ]
    for item in invoice.get("items", []):
        lines.append(
            f"{item.get('sku', '')}  {item.get('description', '')}"
            f"  NCM {item.get('ncm', '')}  CFOP {item.get('cfop', '')}"
            f"  {item.get('quantity', 0)} {item.get('unit', '')} x {_brl(int(item.get('unit_price', 0)))}"
            f" = {_brl(int(item.get('total', 0)))}"
        )
    lines.append("")
    for label, key in (
        ("Frete", "shipping_amount"),
        ("Desconto", "discount_amount"),
        ("Outras despesas", "other_amount"),
    ):
        if invoice.get(key):  # the DANFE's "cálculo do imposto" values that make up the note's total
            lines.append(f"{label}: {_brl(int(invoice[key]))}")
    lines.append(f"Valor total da nota: {_brl(int(invoice.get('total_amount', 0)))}")
    totals = invoice.get("ibs_cbs_totals")
    if totals:  # the totals of IBSCBSTot (NT 2025.002), beside the note's total
        lines += [
            "IBS/CBS (Reforma Tributária):",
            f"Base de cálculo do IBS/CBS: {_brl(int(totals['base']))}",
            f"IBS UF: {_brl(int(totals['ibs_uf_amount']))}  IBS Município: "
            f"{_brl(int(totals['ibs_mun_amount']))}  IBS total: {_brl(int(totals['ibs_amount']))}",
            f"CBS: {_brl(int(totals['cbs_amount']))}",
        ]
    return lines


def danfe_pdf(
    *, invoice: dict[str, Any], access_key: str, number: int, series: int, protocol: str, at: datetime
) -> bytes:
    lines = danfe_lines(invoice=invoice, access_key=access_key, number=number, series=series, protocol=protocol, at=at)
    return _text_pdf(
        title="DANFE — Documento Auxiliar da Nota Fiscal Eletrônica", lines=lines, at=at,
        production=invoice.get("environment") == "producao",
    )  # fmt: skip
