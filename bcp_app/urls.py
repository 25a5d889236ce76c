from django.urls import path, re_path

from bcp_app.transports.permalink import permalink
from bcp_app.transports.rest import api
from bcp_app.transports.well_known import well_known_bcp

urlpatterns = [
    path(".well-known/bcp", well_known_bcp, name="bcp_profile"),
    path("bcp/v1/", api.urls),
    # BCP §15 permalinks: the bare endpoint and `/{items}` (no slash redirect: a 301 is never allowed).
    re_path(r"^comprar/?$", permalink, name="bcp_permalink_root"),
    re_path(r"^comprar/(?P<items>.+)$", permalink, name="bcp_permalink"),
]
