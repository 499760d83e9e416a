from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Cross-cutting pieces every domain app shares: API error shape, worker heartbeat."""

    name = "controlplane.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # Registers the OpenAPI field extension (TextWithoutNul) before any schema is generated.
        from controlplane.core.api import schema_hooks  # noqa: F401
