from django.apps import AppConfig


class QuotasConfig(AppConfig):
    """Client quotas per service account (user), client id, both, and defaults."""

    name = "controlplane.quotas"
    label = "quotas"
    verbose_name = "Client quotas"
