from django.urls import path, re_path

from bcp_app.transports import rest, ucp_rest
from bcp_app.transports.permalink import permalink
from bcp_app.transports.rest import api
from bcp_app.transports.well_known import well_known_bcp

urlpatterns = [
    path(".well-known/bcp", well_known_bcp, name="bcp_profile"),
    # Get Order, the agents' most called read, and a purchase's checkout reads, update and complete to their
    # views without ninja's per-call machinery (issue 34)
    path("bcp/v1/orders/<str:order_id>", rest.get_order_direct),
    path("bcp/v1/checkout-sessions/<str:checkout_id>", rest.checkout_direct),
    path("bcp/v1/checkout-sessions/<str:checkout_id>/complete", rest.complete_direct),
    path("bcp/v1/", api.urls),
    # The UCP face (issue 35): discovery per version and UCP 2026-01-11's REST binding on the same operations.
    path(".well-known/ucp", ucp_rest.well_known_ucp, name="ucp_profile"),
    path(".well-known/ucp/<str:version>", ucp_rest.well_known_ucp, name="ucp_profile_version"),
    path("ucp/v1/checkout-sessions", ucp_rest.checkout_sessions, name="ucp_checkout_sessions"),
    path("ucp/v1/checkout-sessions/<str:checkout_id>", ucp_rest.checkout_session, name="ucp_checkout_session"),
    path("ucp/v1/checkout-sessions/<str:checkout_id>/complete", ucp_rest.complete_checkout, name="ucp_complete"),
    path("ucp/v1/checkout-sessions/<str:checkout_id>/cancel", ucp_rest.cancel_checkout, name="ucp_cancel"),
    path("ucp/v1/orders/<str:order_id>", ucp_rest.get_order, name="ucp_order"),
    path("ucp/v1/orders/<str:order_id>/cancel", ucp_rest.cancel_order, name="ucp_cancel_order"),
    path("ucp/v1/orders/<str:order_id>/returns", ucp_rest.request_return, name="ucp_request_return"),
    re_path(r"^ucp/v1/(?P<path>.*)$", ucp_rest.unknown),
    path("testing/simulate-shipping/<str:order_id>", ucp_rest.simulate_shipping, name="ucp_simulate_shipping"),
    # BCP §15 permalinks: the bare endpoint and `/{items}` (no slash redirect: a 301 is never allowed).
    re_path(r"^comprar/?$", permalink, name="bcp_permalink_root"),
    re_path(r"^comprar/(?P<items>.+)$", permalink, name="bcp_permalink"),
]
