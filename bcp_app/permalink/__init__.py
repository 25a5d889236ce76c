"""Permalink capability (`br.dev.bcp.shopping.permalink`, BCP §15): buy links a platform hands a buyer.

`grammar` parses and validates the link (pure); `views.permalink` turns it into a storefront checkout.
"""
