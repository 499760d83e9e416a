from django.apps import AppConfig


class TenancyConfig(AppConfig):
    """Organizations, teams, who belongs where with which role, the name prefixes teams own and their policies."""

    name = "controlplane.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy"
