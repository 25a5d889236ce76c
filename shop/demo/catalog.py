"""The demo catalog's data: categories and products with their variants, for `shop.demo.seed.seed_catalog`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DemoVariant:
    sku: str
    price: int
    stock: int
    title: str = ""
    options: dict[str, str] = field(default_factory=dict)
    compare_at_price: int | None = None
    allow_backorder: bool = False
    low_stock_threshold: int = 3


@dataclass(frozen=True)
class DemoProduct:
    slug: str
    title: str
    category: str
    brand: str
    description: str
    variants: tuple[DemoVariant, ...]
    weight_grams: int = 500
    requires_shipping: bool = True
    package_cm: tuple[int, int, int] | None = None  # one unit packed (L, W, H); None: the category's


# One unit as it goes into a box (length, width, height in cm), per category: a 500 g coffee bag, a folded
# T-shirt, a boxed mug, a notebook, a phone in its box. Freight quotes and the packing rule read them.
DEMO_PACKAGE_CM: dict[str, tuple[int, int, int]] = {
    "cafes": (20, 12, 8),
    "camisetas": (26, 18, 3),
    "casa-cozinha": (14, 12, 11),
    "papelaria": (22, 16, 2),
    "eletronicos": (18, 10, 6),
}


CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("cafes", "Cafés", "Cafés especiais de pequenos produtores, torrados na semana."),
    ("camisetas", "Camisetas", "Algodão brasileiro, estampas com a nossa cara."),
    ("casa-cozinha", "Casa & Cozinha", "Cerâmica, madeira e ágata para o dia a dia."),
    ("papelaria", "Papelaria", "Cadernos, agendas e canetas para organizar a vida."),
    ("eletronicos", "Eletrônicos", "Celulares, fones e acessórios com garantia."),
)

# NCM per demo category (TIPI): torrado em grão/moído, camisetas de algodão, louça de cerâmica,
# cadernos, telefones celulares. The demo catalog issues NF-e with no staff action (issue 18).
# The admin's "Sinônimos da busca" to start from: words buyers type for what the catalog names otherwise.
DEMO_SYNONYMS: tuple[str, ...] = (
    "camisa, camiseta",
    "celular, smartphone",
    "fone de ouvido, headphone, fone",
    "xícara, caneca",
)

DEMO_NCM: dict[str, str] = {
    "cafes": "09012100",
    "camisetas": "61091000",
    "casa-cozinha": "69120000",
    "papelaria": "48202000",
    "eletronicos": "85171300",
}
# The demo store's fiscal identity (homologação: no fiscal value). A valid CNPJ check digit; a SP-shaped IE.
DEMO_STORE_FISCAL: dict[str, str] = {
    "cnpj": "11.222.333/0001-81",
    "state_registration": "110042490114",
    "cnae": "4781400",
}


def _v(sku: str, price: int, stock: int, **kwargs: Any) -> DemoVariant:
    return DemoVariant(sku=sku, price=price, stock=stock, **kwargs)


def _sizes(prefix: str, price: int, stocks: dict[str, int], **kwargs: Any) -> tuple[DemoVariant, ...]:
    return tuple(
        _v(f"{prefix}-{size}", price, stock, title=size, options={"tamanho": size}, **kwargs)
        for size, stock in stocks.items()
    )


def _colours(prefix: str, price: int, stocks: dict[str, int], **kwargs: Any) -> tuple[DemoVariant, ...]:
    return tuple(
        _v(
            f"{prefix}-{colour.upper().replace(' ', '-')}",
            price,
            stock,
            title=colour,
            options={"cor": colour},
            **kwargs,
        )
        for colour, stock in stocks.items()
    )


PRODUCTS: tuple[DemoProduct, ...] = (
    # --- Cafés ---------------------------------------------------------------------------------------
    DemoProduct(
        "cafe-especial-500g",
        "Café especial 500 g",
        "cafes",
        "Torra Mineira",
        "Café 100% arábica do Sul de Minas, torra média, notas de chocolate e caramelo. Pontuação SCA 84.",
        (_v("SKU-CAFE-500G", 4290, 120),),
        weight_grams=540,
    ),
    DemoProduct(
        "cafe-especial-250g",
        "Café especial 250 g",
        "cafes",
        "Torra Mineira",
        "O mesmo café especial em pacote menor, ideal para provar. Torra média.",
        (_v("SKU-CAFE-250G", 2490, 80),),
        weight_grams=280,
    ),
    DemoProduct(
        "cafe-bourbon-amarelo-250g",
        "Café Bourbon Amarelo 250 g",
        "cafes",
        "Fazenda Santa Inês",
        "Microlote de Bourbon Amarelo da Mantiqueira, notas de mel e frutas amarelas. Escolha grão ou moído.",
        (
            _v("CAF-BOURBON-GRAOS", 3890, 30, title="Em grãos", options={"moagem": "Em grãos"}),
            _v("CAF-BOURBON-MOIDO", 3890, 2, title="Moído", options={"moagem": "Moído"}),
        ),
        weight_grams=280,
    ),
    DemoProduct(
        "cafe-cerrado-mineiro-1kg",
        "Café Cerrado Mineiro 1 kg",
        "cafes",
        "Cerrado Vivo",
        "Café de denominação de origem do Cerrado Mineiro, corpo intenso, ótimo para coado e espresso.",
        (_v("CAF-CERRADO-1KG", 7990, 25, compare_at_price=8990),),
        weight_grams=1050,
    ),
    DemoProduct(
        "capsulas-espresso-10",
        "Cápsulas de café Espresso (10 un.)",
        "cafes",
        "Torra Mineira",
        "Cápsulas compatíveis com máquinas Nespresso®, intensidade 9.",
        (_v("CAF-CAPS-ESP-10", 2190, 0),),
        weight_grams=120,
    ),
    DemoProduct(
        "cafe-organico-sul-de-minas-500g",
        "Café Orgânico Sul de Minas 500 g",
        "cafes",
        "Sítio Boa Vista",
        "Café orgânico certificado, colheita 2026. Sob encomenda: nova torra enviada em até 10 dias.",
        (_v("CAF-ORGANICO-500G", 5490, 0, allow_backorder=True),),
        weight_grams=540,
    ),
    DemoProduct(
        "ebook-guia-do-cafe-especial",
        "E-book Guia do Café Especial",
        "cafes",
        "Loja Exemplo",
        "Guia digital (PDF, 84 páginas) com métodos de preparo, moagem e receitas. Entrega por e-mail.",
        (_v("EBOOK-GUIA-CAFE", 2990, 9999),),
        weight_grams=0,
        requires_shipping=False,
    ),
    # --- Camisetas -----------------------------------------------------------------------------------
    DemoProduct(
        "camiseta-basica-preta",
        "Camiseta Básica Preta",
        "camisetas",
        "Algodão Bom",
        "Camiseta de algodão penteado 30.1, malha macia e caimento reto. Fabricada em Santa Catarina.",
        _sizes("CAM-BAS-PRETA", 5990, {"P": 18, "M": 40, "G": 0}),
        weight_grams=180,
    ),
    DemoProduct(
        "camiseta-basica-branca",
        "Camiseta Básica Branca",
        "camisetas",
        "Algodão Bom",
        "A básica que combina com tudo, em algodão penteado 30.1.",
        _sizes("CAM-BAS-BRANCA", 5990, {"P": 12, "M": 30, "G": 22, "GG": 3}),
        weight_grams=180,
    ),
    DemoProduct(
        "camiseta-estampa-ipe-amarelo",
        "Camiseta Estampa Ipê Amarelo",
        "camisetas",
        "Flora Brasil",
        "Estampa em serigrafia à base d'água com o ipê-amarelo do cerrado.",
        _sizes("CAM-IPE", 7990, {"P": 5, "M": 9, "G": 7, "GG": 2}, compare_at_price=8990),
        weight_grams=190,
    ),
    DemoProduct(
        "camiseta-cafe-com-leite",
        "Camiseta Café com Leite",
        "camisetas",
        "Algodão Bom",
        "Camiseta tingida com pigmentos naturais, em dois tons de café.",
        tuple(
            _v(
                f"CAM-CCL-{cor[:3].upper()}-{size}",
                6990,
                stock,
                title=f"{cor} / {size}",
                options={"cor": cor, "tamanho": size},
            )
            for cor, size, stock in (("Bege", "M", 8), ("Bege", "G", 4), ("Marrom", "M", 0), ("Marrom", "G", 6))
        ),
        weight_grams=190,
    ),
    DemoProduct(
        "camiseta-infantil-arara",
        "Camiseta Infantil Arara",
        "camisetas",
        "Flora Brasil",
        "Camiseta infantil com a arara-azul, algodão orgânico. Volta em breve.",
        _sizes("CAM-INF-ARARA", 4490, {"P": 0, "M": 0, "G": 0}),
        weight_grams=120,
    ),
    DemoProduct(
        "regata-copacabana",
        "Regata Calçadão de Copacabana",
        "camisetas",
        "Rio Raiz",
        "Regata leve com a estampa das ondas do calçadão de Copacabana.",
        _sizes("REG-COPA", 4990, {"P": 6, "M": 11, "G": 9}),
        weight_grams=140,
    ),
    # --- Casa & Cozinha ------------------------------------------------------------------------------
    DemoProduct(
        "caneca-ceramica-esmaltada",
        "Caneca de Cerâmica Esmaltada 350 ml",
        "casa-cozinha",
        "Ateliê Cunha",
        "Caneca feita à mão em Cunha (SP), esmalte de alta temperatura. Vai ao micro-ondas.",
        _colours("CAN-CER", 4900, {"Verde": 14, "Azul": 2, "Terracota": 0}),
        weight_grams=420,
    ),
    DemoProduct(
        "coador-de-pano-kit-3",
        "Coador de Pano para Café (kit com 3)",
        "casa-cozinha",
        "Tradição Mineira",
        "Coadores de flanela 100% algodão com cabo de madeira, tamanho médio.",
        (_v("COA-PANO-3", 1990, 60),),
        weight_grams=150,
    ),
    DemoProduct(
        "bule-agata-branco-1l",
        "Bule de Ágata Branco 1 L",
        "casa-cozinha",
        "Ágata Brasil",
        "Bule esmaltado clássico, borda azul, para fogão a gás e indução.",
        (_v("BULE-AGATA-1L", 8990, 7),),
        weight_grams=800,
    ),
    DemoProduct(
        "tabua-corte-madeira",
        "Tábua de Corte em Madeira de Reflorestamento",
        "casa-cozinha",
        "Mata Viva",
        "Tábua em eucalipto de reflorestamento certificado, 40 × 28 cm.",
        (_v("TABUA-EUC-40", 6990, 15),),
        weight_grams=1200,
    ),
    DemoProduct(
        "panela-de-barro-capixaba",
        "Panela de Barro Capixaba 24 cm",
        "casa-cozinha",
        "Paneleiras Capixabas",
        "Panela de barro artesanal de Goiabeiras (Vitória, ES), perfeita para moqueca.",
        (_v("PAN-BARRO-24", 18900, 0),),
        weight_grams=2500,
    ),
    DemoProduct(
        "jogo-americano-palha",
        "Jogo Americano de Palha (4 un.)",
        "casa-cozinha",
        "Trançados do Norte",
        "Jogo americano trançado à mão em palha de carnaúba, 4 peças redondas de 35 cm.",
        (_v("JOGO-PALHA-4", 7490, 9, compare_at_price=8990),),
        weight_grams=600,
    ),
    # --- Papelaria -----------------------------------------------------------------------------------
    DemoProduct(
        "caderno-pontilhado-a5-chita",
        "Caderno Pontilhado A5 Capa Chita",
        "papelaria",
        "Papel & Prosa",
        "Caderno A5 com 160 páginas pontilhadas, papel 90 g/m², capa em tecido de chita.",
        _colours("CAD-A5-CHITA", 3990, {"Vermelha": 20, "Azul": 13}),
        weight_grams=350,
    ),
    DemoProduct(
        "kit-canetas-gel-tropicais",
        "Kit Canetas Gel Tons Tropicais (6 un.)",
        "papelaria",
        "Papel & Prosa",
        "Seis canetas gel 0,7 mm em cores inspiradas nas frutas brasileiras.",
        (_v("CAN-GEL-TROP-6", 2990, 45),),
        weight_grams=110,
    ),
    DemoProduct(
        "agenda-2027-semanal",
        "Agenda 2027 Semanal",
        "papelaria",
        "Papel & Prosa",
        "Agenda semanal 2027 com feriados nacionais. Pré-venda: envio a partir de dezembro.",
        (_v("AGENDA-2027-SEM", 5490, 0, allow_backorder=True),),
        weight_grams=450,
    ),
    DemoProduct(
        "bloco-de-notas-cordel",
        "Bloco de Notas Cordel",
        "papelaria",
        "Xilo Nordeste",
        "Bloco com 100 folhas e capa em xilogravura de cordel.",
        (_v("BLOCO-CORDEL", 1490, 70),),
        weight_grams=150,
    ),
    DemoProduct(
        "planner-mensal-mandacaru",
        "Planner Mensal Mandacaru",
        "papelaria",
        "Xilo Nordeste",
        "Planner mensal não datado, capa dura com ilustração de mandacaru.",
        (_v("PLANNER-MANDACARU", 4490, 0),),
        weight_grams=400,
    ),
    # --- Eletrônicos ---------------------------------------------------------------------------------
    DemoProduct(
        "pixel-10-pro",
        "Pixel 10 Pro",
        "eletronicos",
        "Google",
        'Smartphone Pixel 10 Pro, 256 GB, tela de 6,3", câmera tripla. Nota fiscal e garantia de 1 ano.',
        (_v("PIXEL-10-PRO", 699900, 8, compare_at_price=799900),),
        weight_grams=400,
    ),
    DemoProduct(
        "fone-bluetooth-samba",
        "Fone Bluetooth Samba",
        "eletronicos",
        "Som Brasil",
        "Fone sem fio com cancelamento de ruído e 30 horas de bateria.",
        _colours("FONE-SAMBA", 24990, {"Preto": 16, "Branco": 1}),
        weight_grams=250,
    ),
    DemoProduct(
        "carregador-usb-c-30w",
        "Carregador Turbo USB-C 30 W",
        "eletronicos",
        "Volt",
        "Carregador rápido USB-C PD 30 W, bivolt, certificado pela Anatel.",
        (_v("CARR-USBC-30W", 12990, 35),),
        weight_grams=90,
    ),
    DemoProduct(
        "caixa-de-som-prova-dagua",
        "Caixa de Som Portátil à Prova d'Água",
        "eletronicos",
        "Som Brasil",
        "Caixa de som Bluetooth IPX7, 12 horas de bateria, leva para a praia sem medo.",
        (_v("CAIXA-SOM-IPX7", 29990, 2),),
        weight_grams=650,
    ),
    DemoProduct(
        "cabo-usb-c-trancado-2m",
        "Cabo USB-C Trançado 2 m",
        "eletronicos",
        "Volt",
        "Cabo USB-C para USB-C com revestimento trançado em nylon, 60 W.",
        (_v("CABO-USBC-2M", 4990, 0),),
        weight_grams=60,
    ),
)
