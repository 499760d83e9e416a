"""Mounted at the project root: the registry's base URL is /clusters/<cluster id>/schema-registry."""

from django.urls import re_path

from controlplane.schemas.api import views

urlpatterns = [
    re_path(
        r"^clusters/(?P<cluster_id>\d+)/schema-registry(?:/(?P<rest>.*))?$",
        views.registry,
        name="schema-registry",
    ),
]
