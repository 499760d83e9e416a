from django.apps import AppConfig


class SchemasConfig(AppConfig):
    """The schema registry: one Confluent-compatible registry per cluster, stored in the control-plane database."""

    name = "controlplane.schemas"
    label = "schemas"
    verbose_name = "Schema registry"
