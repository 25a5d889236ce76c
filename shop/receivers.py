"""Signal receivers of the shop. Connected in ShopConfig.ready()."""
