from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Service accounts (the identities applications use) and REST API keys."""

    name = "controlplane.accounts"
    label = "accounts"
    verbose_name = "Service accounts and API keys"
