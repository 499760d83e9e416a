from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Cross-cutting pieces every domain app shares: API error shape, worker heartbeat."""

    name = "controlplane.core"
    label = "core"
    verbose_name = "Core"
