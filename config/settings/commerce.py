"""What the shop sells and how it is paid: checkout and carts, NF-e, Pix and the card gateway."""

from __future__ import annotations

from datetime import date

from config.settings.base import DEBUG, SECURE_CSP
from fiscal.ibscbs import parse_rate
from kernel.env import ConfigError, env_bool, env_int, env_list, env_str

# --- Shop ---------------------------------------------------------------------------------------------
SHOP_NAME = env_str("SHOP_NAME", "Loja Exemplo")  # default trade name of the store settings row
# The buyer e-mails' header/footer context comes from the store settings (orders imports nothing of ours).
ORDERS_EMAIL_CONTEXT_PROVIDER = "shop.store.services.email_context"
# CEP → address lookup (ViaCEP's JSON shape; "{cep}" is replaced by the 8 digits). Empty: offline UF table only.
CEP_PROVIDER_URL = env_str("CEP_PROVIDER_URL", "https://viacep.com.br/ws/{cep}/json/")
CEP_PROVIDER_TIMEOUT_MS = env_int("CEP_PROVIDER_TIMEOUT_MS", 2500, minimum=100)
CEP_CACHE_SECONDS = env_int("CEP_CACHE_SECONDS", 7 * 24 * 3600, minimum=0)
# Sections the shop adds to the order pages (orders imports nothing of ours): the NF-e box.
ORDERS_ADMIN_PANELS = [
    "shop.freight.panels.admin_panel",
    "shop.invoicing.panels.admin_panel",
    "shop.checkout.selectors.consent_admin_panel",
    "bcp_app.service.ap2_store.admin_panel",
]
ORDERS_PERMALINK_PANELS = ["shop.invoicing.panels.permalink_panel"]
# Shown at the top of the order pages: what the order is part of ("Ciclo 3 da assinatura …", issue 38).
ORDERS_ADMIN_LEAD_PANELS = ["shop.subscriptions.panels.admin_panel"]
ORDERS_PERMALINK_LEAD_PANELS = ["shop.subscriptions.panels.permalink_panel"]
# Where the payments admin links a Pix Automático row (payments imports nothing of ours): admin lists searched
# by the row's idRec (its subscription) or its reference (the cycle, which is its order's checkout id).
PAYMENTS_ADMIN_LINKS = {"id_rec": "admin:shop_subscription_changelist", "reference": "admin:orders_order_changelist"}
# Bulk actions the shop adds to the order list: "Comprar etiqueta de envio" for a selection (issue 36).
ORDERS_ADMIN_ACTIONS = ["shop.freight.panels.buy_labels_action"]
# Filters the shop adds to the order list: orders whose label the carrier refused (QA walk, label failures).
ORDERS_ADMIN_LIST_FILTERS = ["shop.freight.panels.LabelFailedFilter"]
# "Corrigir endereço de entrega": what keeps an order's address from changing (a label bought for it), asked under
# the order's lock, and what staff are told after the change (the freight the new CEP would cost).
ORDERS_DESTINATION_GUARDS = ["shop.freight.destination.label_refusal"]
ORDERS_DESTINATION_NOTES = ["shop.freight.destination.freight_notes"]
# Members the DRF API adds to an order and buyer e-mails receive as `extras` (the NF-e and its DANFE link).
ORDERS_ORDER_EXTRAS = {"fiscal_documents": "shop.invoicing.selectors.fiscal_documents_for_order"}
# The NF-e columns (number, key, status) of the accountant's order export (QA walk, closing the month).
ORDERS_EXPORT_FISCAL = "shop.invoicing.selectors.fiscal_export_columns"
SHOP_CHECKOUT_TTL_SECONDS = env_int("SHOP_CHECKOUT_TTL_SECONDS", 6 * 3600, minimum=60)
# How long a checkout's signed continue_url (agent hand-off, reminder e-mail) opens it, from its creation.
SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS = env_int("SHOP_CHECKOUT_LINK_MAX_AGE_SECONDS", 7 * 24 * 3600, minimum=60)
# A cart (storefront or BCP cart capability) is kept this long after its last change.
# "Minha conta": how long a sign-in link sent by e-mail is valid (it is also single use).
SHOP_ACCOUNT_LINK_MINUTES = env_int("SHOP_ACCOUNT_LINK_MINUTES", 15, minimum=1)
SHOP_CART_TTL_SECONDS = env_int("SHOP_CART_TTL_SECONDS", 30 * 24 * 3600, minimum=60)
# Product feeds (Google Merchant Center): a sold-out variant that accepts orders (encomenda) is announced as
# `backorder`, which Merchant Center accepts only with an `availability_date`: today + this many days.
SHOP_FEED_BACKORDER_DAYS = env_int("SHOP_FEED_BACKORDER_DAYS", 30, minimum=1)
# Abandoned checkout (an e-mail, no order): one reminder this many minutes after the last change; 0 = never.
SHOP_CHECKOUT_REMINDER_MINUTES = env_int("SHOP_CHECKOUT_REMINDER_MINUTES", 120, minimum=0)

# --- Fiscal (NF-e) ------------------------------------------------------------------------------------
FISCAL_PROVIDER = env_str("FISCAL_PROVIDER", "sandbox")  # "sandbox" | "focusnfe"
FISCAL_ISSUE_ON = env_str("FISCAL_ISSUE_ON", "paid")  # "paid" | "shipped" | "off"
if FISCAL_PROVIDER not in ("sandbox", "focusnfe") or FISCAL_ISSUE_ON not in ("paid", "shipped", "off"):
    raise ConfigError("FISCAL_PROVIDER must be sandbox|focusnfe and FISCAL_ISSUE_ON paid|shipped|off")
FISCAL_FOCUSNFE_TOKEN = env_str("FISCAL_FOCUSNFE_TOKEN", "")
FISCAL_FOCUSNFE_BASE_URL = env_str("FISCAL_FOCUSNFE_BASE_URL", "")  # empty: Focus NFe's URL for the environment
FISCAL_WEBHOOK_SECRET = env_str("FISCAL_WEBHOOK_SECRET", "")
# IBS/CBS of the tax reform (fiscal/ibscbs.py, NT 2025.002): from which day each regime's NF-e carries the groups,
# and the rates (percent, up to 4 decimals; the 2026 test rates by default). A switch of the law is configuration.
try:
    FISCAL_IBSCBS_NORMAL_FROM = date.fromisoformat(env_str("FISCAL_IBSCBS_NORMAL_FROM", "2026-01-05"))
    FISCAL_IBSCBS_SIMPLES_FROM = date.fromisoformat(env_str("FISCAL_IBSCBS_SIMPLES_FROM", "2027-01-01"))
    FISCAL_CBS_RATE = parse_rate(env_str("FISCAL_CBS_RATE", "0.90"))
    FISCAL_IBS_UF_RATE = parse_rate(env_str("FISCAL_IBS_UF_RATE", "0.10"))
    FISCAL_IBS_MUN_RATE = parse_rate(env_str("FISCAL_IBS_MUN_RATE", "0.00"))
except ValueError as exc:
    raise ConfigError(
        f"FISCAL_IBSCBS_NORMAL_FROM/FISCAL_IBSCBS_SIMPLES_FROM (AAAA-MM-DD) or an IBS/CBS rate: {exc}"
    ) from exc

# --- Carriers (freight quotes, labels, tracking) ------------------------------------------------------
# "" = no carrier: the table rates (weight-aware) answer; "melhorenvio" | "correios" quote and sell labels.
CARRIER = env_str("CARRIER", "")
if CARRIER not in ("", "melhorenvio", "correios"):
    raise ConfigError("CARRIER must be empty, melhorenvio or correios")
CARRIER_QUOTE_DEADLINE_MS = env_int("CARRIER_QUOTE_DEADLINE_MS", 3000, minimum=200)  # then the table answers
CARRIER_QUOTE_CACHE_SECONDS = env_int("CARRIER_QUOTE_CACHE_SECONDS", 600, minimum=0)
CARRIER_LABEL_DEADLINE_MS = env_int("CARRIER_LABEL_DEADLINE_MS", 20000, minimum=1000)  # worker side
MELHOR_ENVIO_ENV = env_str("MELHOR_ENVIO_ENV", "sandbox")  # "sandbox" | "production"
if MELHOR_ENVIO_ENV not in ("sandbox", "production"):
    raise ConfigError("MELHOR_ENVIO_ENV must be sandbox or production")
MELHOR_ENVIO_BASE_URL = env_str("MELHOR_ENVIO_BASE_URL", "")  # empty: the environment's URL
MELHOR_ENVIO_TOKEN = env_str("MELHOR_ENVIO_TOKEN", "")  # a personal token from the panel, or OAuth2 below
MELHOR_ENVIO_CLIENT_ID = env_str("MELHOR_ENVIO_CLIENT_ID", "")
MELHOR_ENVIO_CLIENT_SECRET = env_str("MELHOR_ENVIO_CLIENT_SECRET", "")  # also the webhooks' signing key
MELHOR_ENVIO_REFRESH_TOKEN = env_str("MELHOR_ENVIO_REFRESH_TOKEN", "")
MELHOR_ENVIO_USER_AGENT = env_str("MELHOR_ENVIO_USER_AGENT", "Loja BCP (contato@example.com)")
CORREIOS_ENV = env_str("CORREIOS_ENV", "homologacao")  # "homologacao" | "producao"
if CORREIOS_ENV not in ("homologacao", "producao"):
    raise ConfigError("CORREIOS_ENV must be homologacao or producao")
CORREIOS_BASE_URL = env_str("CORREIOS_BASE_URL", "")
CORREIOS_USER = env_str("CORREIOS_USER", "")  # Meu Correios user (CPF/CNPJ)
CORREIOS_ACCESS_CODE = env_str("CORREIOS_ACCESS_CODE", "")  # código de acesso às APIs
CORREIOS_POSTING_CARD = env_str("CORREIOS_POSTING_CARD", "")  # cartão de postagem
CORREIOS_CONTRACT = env_str("CORREIOS_CONTRACT", "")
CORREIOS_DR = env_int("CORREIOS_DR", 0, minimum=0)
CORREIOS_SERVICES = env_list("CORREIOS_SERVICES", ["03220", "03298"])  # SEDEX, PAC (contrato)

# --- Pix / payments -----------------------------------------------------------------------------------
BCP_PIX_SANDBOX = env_bool("BCP_PIX_SANDBOX", default=DEBUG)
BCP_PIX_SANDBOX_FORCE = env_bool("BCP_PIX_SANDBOX_FORCE", default=False)
if BCP_PIX_SANDBOX and not DEBUG and not BCP_PIX_SANDBOX_FORCE:
    raise ConfigError("BCP_PIX_SANDBOX is refused with DJANGO_DEBUG off (set BCP_PIX_SANDBOX_FORCE=true to insist)")
PIX_SANDBOX_WEBHOOK_SECRET = env_str("PIX_SANDBOX_WEBHOOK_SECRET", "sandbox-webhook-secret" if DEBUG else "")
PIX_HANDLER_ID = env_str("PIX_HANDLER_ID", "pix_recebedor_001")
PIX_EXPIRATION_SECONDS = env_int("PIX_EXPIRATION_SECONDS", 1800, minimum=60)
PIX_MERCHANT_NAME = env_str("PIX_MERCHANT_NAME", "LOJA EXEMPLO LTDA")
PIX_MERCHANT_CITY = env_str("PIX_MERCHANT_CITY", "SAO PAULO")
# Merchant name/city come from the store settings row (legal name, city) once it exists.
PIX_MERCHANT_PROVIDER = "shop.store.services.pix_merchant"
PIX_KEY = env_str("PIX_KEY", "7d9f0335-8dcc-4054-9bf9-0dbd61d36906")
PIX_MIN_AMOUNT = env_int("PIX_MIN_AMOUNT", 1, minimum=1)
PIX_MAX_AMOUNT = env_int("PIX_MAX_AMOUNT", 10_000_000, minimum=1)
PIX_PSP_BASE_URL = env_str("PIX_PSP_BASE_URL", "")
PIX_PSP_TOKEN_URL = env_str("PIX_PSP_TOKEN_URL", "")
PIX_PSP_CLIENT_ID = env_str("PIX_PSP_CLIENT_ID", "")
PIX_PSP_CLIENT_SECRET = env_str("PIX_PSP_CLIENT_SECRET", "")
PIX_PSP_CERT_FILE = env_str("PIX_PSP_CERT_FILE", "")
PIX_PSP_KEY_FILE = env_str("PIX_PSP_KEY_FILE", "")
PIX_PSP_CA_FILE = env_str("PIX_PSP_CA_FILE", "")
# Total seconds one PSP call may take (token, connect, headers, body, retries): a buyer's request waits on it.
PIX_PSP_TIMEOUT_SECONDS = env_int("PIX_PSP_TIMEOUT_SECONDS", 10, minimum=1)
# Seconds past expires_at before a charge is expired locally (absorbs webhook latency, PIX.md §3.2).
PIX_EXPIRY_GRACE_SECONDS = env_int("PIX_EXPIRY_GRACE_SECONDS", 120, minimum=0)
# An agent checkout paid before complete waits this long for the platform's complete, then the shop
# completes it itself (PIX.md §3.1, §10 D1).
PIX_COMPLETION_GRACE_SECONDS = env_int("PIX_COMPLETION_GRACE_SECONDS", 900, minimum=0)
# Bacen PSPs: header the TLS proxy sets after verifying the PSP client certificate ("" = not checked).
PIX_WEBHOOK_MTLS_HEADER = env_str("PIX_WEBHOOK_MTLS_HEADER", "")
PIX_WEBHOOK_MTLS_VALUE = env_str("PIX_WEBHOOK_MTLS_VALUE", "SUCCESS")
# Sandbox: where it delivers webhooks (default {BCP_PUBLIC_URL}/payments/pix/webhook/pix); refunds settle at once.
PIX_SANDBOX_WEBHOOK_URL = env_str("PIX_SANDBOX_WEBHOOK_URL", "")
PIX_SANDBOX_REFUND_AUTOSETTLE = env_bool("PIX_SANDBOX_REFUND_AUTOSETTLE", True)
# Dotted path of the card gateway class; empty = sandbox gateway when BCP_PIX_SANDBOX, else none.
# Pagar.me API v5: "payments.card.pagarme.PagarmeGateway" with the PAGARME_* settings below.
PAYMENTS_CARD_GATEWAY = env_str("PAYMENTS_CARD_GATEWAY", "")
PAGARME_BASE_URL = env_str("PAGARME_BASE_URL", "https://api.pagar.me/core/v5")
PAGARME_SECRET_KEY = env_str("PAGARME_SECRET_KEY", "")  # sk_…: HTTP Basic user of every API call
PAGARME_PUBLIC_KEY = env_str("PAGARME_PUBLIC_KEY", "")  # pk_…: the browser tokenizer's appId (not a secret)
PAGARME_TIMEOUT_SECONDS = env_int("PAGARME_TIMEOUT_SECONDS", 15, minimum=1)
PAGARME_STATEMENT_DESCRIPTOR = env_str("PAGARME_STATEMENT_DESCRIPTOR", "")
# Basic credentials configured on the webhook in Pagar.me's dashboard; without them every delivery is refused.
PAGARME_WEBHOOK_USER = env_str("PAGARME_WEBHOOK_USER", "")
PAGARME_WEBHOOK_PASSWORD = env_str("PAGARME_WEBHOOK_PASSWORD", "")
# Boleto through the card gateway (issue 37, payments/boleto/). The due date is the store's setting
# (StoreSettings.boleto_due_business_days, admin); these bound what is offered and when an unpaid one is given up.
BOLETO_MIN_AMOUNT = env_int("BOLETO_MIN_AMOUNT", 500, minimum=1)  # centavos: R$ 5,00
# Days after the due date before an unpaid boleto is canceled and its stock released (a boleto paid on its
# due date is reported by the bank up to 2 business days later).
BOLETO_EXPIRY_GRACE_DAYS = env_int("BOLETO_EXPIRY_GRACE_DAYS", 3, minimum=1)
BOLETO_INSTRUCTIONS = env_str("BOLETO_INSTRUCTIONS", "")  # printed on the boleto (≤ 256); "" = a default text
if "pagarme" in PAYMENTS_CARD_GATEWAY:
    # The buyer's browser sends the card to Pagar.me's tokens API itself (static/shop/card_tokenizer.js).
    SECURE_CSP["connect-src"] = [*SECURE_CSP["connect-src"], "https://api.pagar.me"]
