from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from console import sso_views, views
from console.api import views as api_views
from controlplane.lag.metrics import metrics_view

api_v1 = [
    path("auth/session/", api_views.session_view, name="auth-session"),
    path("auth/login/", api_views.login_view, name="auth-login"),
    path("auth/logout/", api_views.logout_view, name="auth-logout"),
    path("auth/options/", api_views.auth_options_view, name="auth-options"),
    path("auth/cli/", api_views.cli_auth_options_view, name="auth-cli"),
    path("auth/profile/", api_views.profile_view, name="auth-profile"),
    path("auth/oidc/login/", sso_views.oidc_login, name="auth-oidc-login"),
    path("auth/oidc/callback/", sso_views.oidc_callback, name="auth-oidc-callback"),
    path("overview/", api_views.overview_view, name="overview"),
    path("", include("controlplane.tenancy.api.urls")),
    path("", include("controlplane.people.api.urls")),
    path("", include("controlplane.accounts.api.urls")),
    path("", include("controlplane.audit.api.urls")),
    path("", include("controlplane.clusters.api.urls")),
    path("", include("controlplane.topics.api.urls")),
    path("", include("controlplane.acls.api.urls")),
    path("", include("controlplane.quotas.api.urls")),
    path("", include("controlplane.groups.api.urls")),
    path("", include("controlplane.credentials.api.urls")),
    path("", include("controlplane.reconcile.api.urls")),
    path("", include("controlplane.jobs.api.urls")),
    path("", include("controlplane.alerts.api.urls")),
    path("", include("controlplane.lag.api.urls")),
    path("", include("controlplane.declarative.api.urls")),
    path("", include("controlplane.connect.api.urls")),
    path("", include("controlplane.replication.api.urls")),
]

# Failures and unknown paths outside DRF's views answer in the API's error shape, not an HTML page.
handler500 = "controlplane.core.api.errors.server_error_view"
handler404 = "controlplane.core.api.errors.not_found_view"

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),  # Prometheus scrapes; bearer token, see lag/metrics.py
    path("", include("controlplane.schemas.api.urls")),  # Confluent-compatible registry per cluster
    # Everything else is a console route handled by the React router.
    re_path(r"^(?!api/|admin/|static/)(?P<path>.*)$", views.spa_shell, name="console"),
]
