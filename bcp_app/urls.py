from django.urls import path

from bcp_app.api import api
from bcp_app.views import well_known_bcp

urlpatterns = [
    path(".well-known/bcp", well_known_bcp, name="bcp_profile"),
    path("bcp/v1/", api.urls),
]
