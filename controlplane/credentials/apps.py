from django.apps import AppConfig


class CredentialsConfig(AppConfig):
    """SCRAM credentials of service accounts on clusters (the password is shown once, never stored)."""

    name = "controlplane.credentials"
    label = "credentials"
    verbose_name = "Kafka credentials"
