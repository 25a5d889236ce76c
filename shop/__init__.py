"""What the shop sells and how: catalog, cart, checkout engine, store settings, storefront, admin."""
