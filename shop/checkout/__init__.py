"""The checkout engine, grouped by concept; its public face is `shop/checkout/services.py`.

Read bottom up (each module imports only those above it in this list):

- `types` — typed inputs, results and the value objects of pricing and fulfillment;
- `pricing` — Pix discount, coupons, card installments;
- `fulfillment` — CEP, shipping quotes, fulfillment evaluation (BCP §9);
- `stock` — the catalog snapshot of a line and stock reservation;
- `selectors` — reads: access, consent, the presented `CheckoutView`;
- `evaluate` — lines, buyer, fulfillment, discounts, totals, status of a writable state;
- `core` — the one lock, applying an evaluation, events, releasing holdings;
- `charge` — the Pix charge on create/update (PSP call after commit) and what a charge or complete holds;
- `complete` — placement, the three-step complete, back-office sales;
- `settle` — Pix settlement, the sweeps, the lazy Pix expiry;
- `reminders` — abandoned-checkout e-mails;
- `services` — the face: every write other apps and transports call;
- `web/` — the storefront's checkout pages.
"""
