""" "Minha conta" without a password: sign-in link by e-mail, orders, addresses, prefilled checkout, LGPD."""
